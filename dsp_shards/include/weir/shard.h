/* weir shard ABI, version 3: the one header a shard (built in or third party) is written against.
 *
 * A shard is a processing unit run by a shard host (`weir shard`). A shared object exports one C
 * function, weir_shard_entry, which returns a static weir_shard_api table: the shard's name, the
 * ABI version it was built for, its parameters, and configure / process / stop. Built-in shards
 * return the same table from a function linked into the host.
 *
 * Lifecycle, all on one host thread:
 *   configure  cold path: parse and range-check parameters, check the input's dtype and rate,
 *              plan (FFTW), allocate, and declare outputs. Returns NULL and fills `error` on refusal.
 *   process    hot path, once per input block: read the samples in place, write outputs through the
 *              host. No allocation, no locks, no I/O, no exceptions across the boundary. Returns 0,
 *              or a negative number when the block could not be processed (the host counts it).
 *   flush      optional (see weir_shard_api): once, after the last process and before stop, with
 *              the outputs still open: the shard publishes what it has accumulated and not yet
 *              published (a partial spectrum, window or histogram), marked WEIR_SHARD_PARTIAL.
 *   idle       optional (version 3): after a turn that handed the shard blocks, when its input has
 *              no more for now: a shard that batches its inputs (embed) runs what it holds, so a
 *              result never waits for input that is not coming. Hot-path rules apply.
 *   stop       frees everything configure made; flushes nothing to disk.
 *
 * Outputs are declared in configure into cfg->outputs (up to WEIR_SHARD_MAX_OUTPUTS): a derived
 * channel (the host creates it in the arena if missing, and becomes its one writer) or a key (the
 * host resolves a handle once) or, since version 3, a vector ring (see below). process refers to
 * them by index.
 *
 * Version 2 added shaped outputs: a channel may declare frames (frame_elements, with an axis: the
 * fft's spectra, the trigger's capture windows), and a key may be a typed array (WEIR_KEY_ARRAY,
 * with element dtype and shape: the mca's histogram). The host refuses version 1 shards.
 *
 * Version 3 added vector rings (WEIR_OUTPUT_VECTORS: the embed shard's pulse embeddings), the host
 * call put_vector that writes them, the input's frame size and the arena's vector dims in the
 * config, and the optional idle call. A vector ring is `capacity` keys <name>/<i>, i = 0 ..
 * capacity - 1, each carrying the partition label given in `labels` (one label, so that followers
 * of the partition see every write in the label's change log) and, per write, a float32 vector row
 * of array_dims[0] elements (which must equal the arena's vector dims) and as its value the
 * metadata (weir_vector_meta) as an i64 array of 4 (every field is below 2^63). The n-th
 * put_vector of a run writes key n mod capacity: old vectors are overwritten. The host still loads version 2 shards: it calls the entry
 * function with 3, then with 2 when that returns NULL, and gives a version 2 shard a config whose
 * abi_version and struct_size are version 2's (it never reads the fields version 3 appended); the
 * host table it passes only grew, at its end.
 *
 * Stamps, gaps and partial results: a shard whose output summarises a window of input (a spectrum,
 * window statistics, a histogram) stamps it with the acquisition time of the window's FIRST input
 * sample: the realtime_ns of the input block holding it + (its index - that block's first_sample)
 * * 1e9 / input rate, rounded to the nearest ns. The host sets WEIR_SHARD_AFTER_GAP in the flags of
 * the first block it hands to process after input blocks went missing (lapped, published as a gap
 * by the writer, or jumped over by a latest consumer); such a shard then starts its window afresh,
 * first publishing what it had, marked WEIR_SHARD_PARTIAL, so no result mixes samples from both
 * sides of a gap.
 *
 * Plain C, no padding surprises: every struct below is read across the .so boundary. Any change to
 * a struct or function type bumps WEIR_SHARD_ABI_VERSION; the host refuses a shard whose
 * abi_version is not one it loads (WEIR_SHARD_ABI_OLDEST to its own). weir_shard_api alone may grow
 * at its end within a version: the host accepts a version 2 table of struct_size
 * WEIR_SHARD_API_V2_SIZE (without flush) or WEIR_SHARD_API_V2_MAX_SIZE, a version 3 table of
 * WEIR_SHARD_API_V3_SIZE up to its own sizeof(weir_shard_api), and reads a field the table does not
 * reach as NULL.
 */
#ifndef WEIR_SHARD_H
#define WEIR_SHARD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WEIR_SHARD_ABI_VERSION 3u
/* The oldest version the host still loads (see above). */
#define WEIR_SHARD_ABI_OLDEST 2u
#define WEIR_SHARD_ENTRY_SYMBOL "weir_shard_entry"
#define WEIR_SHARD_MAX_OUTPUTS 32u
#define WEIR_SHARD_MAX_PARAMS 32u
#define WEIR_SHARD_NAME_BYTES 64u
#define WEIR_SHARD_ERROR_BYTES 512u
/* weir_shard_api's size in the first version 2 tables, which end at stop (no flush). */
#define WEIR_SHARD_API_V2_SIZE 64u
/* weir_shard_api's size in the last version 2 tables (with flush). */
#define WEIR_SHARD_API_V2_MAX_SIZE 72u
/* weir_shard_api's size in the first version 3 tables (with idle). */
#define WEIR_SHARD_API_V3_SIZE 80u
/* weir_shard_config's size as a version 2 shard knows it (without the fields version 3 appended). */
#define WEIR_SHARD_CONFIG_V2_SIZE 11608u
/* Elements of a vector ring key's metadata array (weir_vector_meta as i64). */
#define WEIR_VECTOR_META_WORDS 4u

/* weir_shard_block.flags, set by the host: input blocks went missing just before this one. A data
 * block never carries this bit otherwise (the arena's gap-marker bit, which readers never hand on). */
#define WEIR_SHARD_AFTER_GAP 0x80000000u
/* weir_shard_block.flags and idle's flags, set by the host for version 3 shards: the block handed to
 * process just before was torn while process read it (the writer overwrote it; the host counts it
 * lost). A shard that kept data of that block for later (a batch) discards it, so that every input
 * block is either counted lost or used, never both. */
#define WEIR_SHARD_PREV_TORN 0x40000000u
/* publish flags: the block summarises a window cut short, by an input gap or by stop, not a full
 * one (the arena's kBlockPartialFlag; recorders keep it in block_flags). */
#define WEIR_SHARD_PARTIAL 0x2u

/* Sample types: the same numbers as the arena's channel dtypes. */
enum weir_dtype {
  WEIR_DTYPE_I8 = 1, WEIR_DTYPE_U8, WEIR_DTYPE_I16, WEIR_DTYPE_U16, WEIR_DTYPE_I32, WEIR_DTYPE_U32,
  WEIR_DTYPE_I64, WEIR_DTYPE_F32, WEIR_DTYPE_F64, WEIR_DTYPE_C64
};

enum weir_param_type { WEIR_PARAM_INT = 1, WEIR_PARAM_REAL, WEIR_PARAM_TEXT, WEIR_PARAM_BOOL };

/* One parameter the shard accepts, for `weir shard KIND --help` and for the host's range check:
 * the host refuses an unknown name, a value that does not parse as `type`, or a number outside
 * [min, max] before configure is called. `choices` (TEXT only, may be NULL) is a '|'-separated list
 * of the accepted words. */
typedef struct weir_shard_param {
  const char* name;
  uint32_t type; /* weir_param_type */
  uint32_t reserved;
  const char* default_value; /* text form; NULL: required */
  double min, max;           /* INT and REAL only */
  const char* choices;
  const char* help;
} weir_shard_param;

enum weir_output_kind { WEIR_OUTPUT_CHANNEL = 1, WEIR_OUTPUT_KEY = 2, WEIR_OUTPUT_VECTORS = 3 /* version 3 */ };
/* Key value types: the same numbers as the arena's key types (6, the arena's vector, is not a
 * shard output). */
enum weir_key_type {
  WEIR_KEY_BYTES = 1, WEIR_KEY_TEXT = 2, WEIR_KEY_I64 = 3, WEIR_KEY_U64 = 4, WEIR_KEY_F64 = 5, WEIR_KEY_ARRAY = 7
};

/* The axis along the elements of a channel's frames: element i of every frame sits at
 * start + i * step, in `units`. Both texts are zero-terminated; an empty name means no axis. */
typedef struct weir_shard_axis {
  char name[32];  /* e.g. "frequency", "time", "energy" */
  char units[32]; /* e.g. "Hz", "s", "keV" */
  double start;
  double step;
} weir_shard_axis;

/* An output declared by configure. For a channel every field up to labels matters, and the frame
 * fields when it holds frames; for a key only name, key_type and max_bytes (the largest value it
 * will write), and the array fields for a WEIR_KEY_ARRAY key; for a vector ring (version 3) name
 * (the key prefix), labels (the partition: one label), capacity, array_dtype WEIR_DTYPE_F32,
 * array_rank 1 and array_dims[0] (the vector's dims). Fields a kind does not use are 0. */
typedef struct weir_shard_output {
  char name[WEIR_SHARD_NAME_BYTES];
  uint32_t kind;  /* weir_output_kind */
  uint32_t dtype; /* weir_dtype, channels */
  double rate_hz; /* channels: samples per second of the output stream (a spectrum: bins x spectra/s) */
  uint32_t samples_per_block; /* channels */
  uint32_t key_type;          /* keys: weir_key_type */
  uint64_t max_bytes;         /* keys */
  char units[32];
  char labels[128]; /* comma-separated Bloom labels for a channel, may be empty */
  /* Version 2: */
  uint32_t frame_elements; /* channels: 0 for plain samples; else each block holds
                              samples_per_block / frame_elements frames (a whole number) */
  uint32_t array_dtype;    /* WEIR_KEY_ARRAY keys: element weir_dtype */
  uint32_t array_rank;     /* 1 or 2 */
  uint32_t array_dims[2];  /* array_dims[1] is 0 for rank 1; max_bytes is the product times the element size */
  uint32_t capacity;       /* vector rings (version 3): keys in the ring; 0 for other kinds */
  weir_shard_axis axis;    /* channels with frame_elements: the axis of a frame's elements */
} weir_shard_output;

/* What configure is given, and fills. */
typedef struct weir_shard_config {
  uint32_t abi_version; /* the host's WEIR_SHARD_ABI_VERSION */
  uint32_t struct_size; /* sizeof(weir_shard_config) in the host */
  const char* instance; /* this shard's name in the arena, e.g. "fft0" */
  const char* input_channel;
  uint32_t input_dtype;
  uint32_t input_samples_per_block;
  double input_rate_hz;
  const char* input_units;
  const char* output_base; /* --output, or the input channel's name when not given */
  uint32_t param_count;
  uint32_t reserved;
  const char* const* param_names;  /* every declared parameter, defaults filled in by the host */
  const char* const* param_values; /* text form, already range-checked */
  /* Filled by configure: */
  uint32_t output_count;
  uint32_t reserved2;
  weir_shard_output outputs[WEIR_SHARD_MAX_OUTPUTS];
  /* Version 3 (read only when struct_size reaches them): */
  uint32_t input_frame_elements; /* elements per frame of a frame channel input; 0 for plain samples */
  uint32_t arena_vector_dim;     /* float32 per vector row of the arena; 0 when it has none or when it
                                    is not known (a pipeline checked before its arena exists): the
                                    host checks a vector ring's dims against the arena anyway */
} weir_shard_config;

/* One input block, in place in the arena. The samples are valid until process returns; the host
 * re-validates the seqlock afterwards and discards the outputs' effect count if it was torn. */
typedef struct weir_shard_block {
  const void* samples;
  uint32_t count; /* samples in this block */
  uint32_t flags;
  uint64_t sequence;
  uint64_t realtime_ns;
  uint64_t monotonic_ns;
  uint64_t first_sample; /* index of samples[0] in the input stream */
} weir_shard_block;

/* What process may call. All of these are hot-path safe: no allocation, no locks, no syscalls
 * except a futex wake when a subscriber sleeps. */
/* The metadata of one vector, stored as its key's value (an i64 array of WEIR_VECTOR_META_WORDS, in
 * this order): where the input it was computed from sits in the input stream. */
typedef struct weir_vector_meta {
  uint64_t realtime_ns;  /* acquisition time of the input's first sample (the stamp rule above) */
  uint64_t sequence;     /* the input block's sequence */
  uint64_t frame;        /* the input's index in its block (frame or window); 0 for a whole block */
  uint64_t first_sample; /* index of the input's first sample in the input stream */
} weir_vector_meta;

typedef struct weir_shard_host {
  void* self;
  /* Claims the next block of channel output `output`: returns where to write up to *capacity
   * samples, or NULL when the block was dropped at the source (counted by the arena). */
  void* (*claim)(void* self, uint32_t output, uint32_t* capacity);
  /* Publishes the claimed block with `samples` samples, its time (0: now) and flags. */
  void (*publish)(void* self, uint32_t output, uint32_t samples, uint64_t realtime_ns, uint32_t flags);
  /* Writes key output `output`: `bytes` bytes (at most its max_bytes; for a WEIR_KEY_ARRAY key
   * exactly the declared shape's bytes, elements little-endian in row-major order). Returns 0, or -1
   * when the key is held by another writer past a short bounded wait or the size is wrong (counted
   * as an error by the host). */
  int (*set_key)(void* self, uint32_t output, const void* value, size_t bytes);
  /* Cold-path diagnostics only (never per block): level 0 info, 1 warning, 2 error. */
  void (*log)(void* self, int level, const char* message);
  /* Version 3: writes `vector` (the ring's dims floats) and `meta` into the next key of vector ring
   * `output` (put n of the run goes to key n mod capacity). No hashing: the keys were resolved at
   * configure. Returns 0, or -1 when the key's row or value is held by another writer past a short
   * bounded wait, the vector holds NaN or infinity, the key was deleted meanwhile, or the output is
   * not a vector ring (counted as an error by the host; the ring still moves on). A vector may come
   * from an earlier block than the one process was handed (a batch): the host counts every put as
   * output even when the current block turns out torn, so a batching shard puts only vectors of
   * blocks already known intact (see WEIR_SHARD_PREV_TORN). */
  int (*put_vector)(void* self, uint32_t output, const float* vector, const weir_vector_meta* meta);
} weir_shard_host;

typedef struct weir_shard weir_shard; /* the shard's own instance, opaque to the host */

typedef struct weir_shard_api {
  uint32_t abi_version; /* WEIR_SHARD_ABI_VERSION the shard was built against */
  uint32_t struct_size; /* sizeof(weir_shard_api) as the shard saw it */
  const char* name;     /* the kind: "fft", "filter", ... */
  const char* description;
  const weir_shard_param* params;
  uint32_t param_count;
  uint32_t input_dtypes; /* bit (1 << dtype) for every accepted input dtype */
  weir_shard* (*configure)(weir_shard_config* cfg, char* error, size_t error_bytes);
  int (*process)(weir_shard* shard, const weir_shard_block* in, const weir_shard_host* host);
  void (*stop)(weir_shard* shard);
  /* Since struct_size 72; may be NULL. Called once at stop, before stop, on the processing thread,
   * with the outputs open: publish what is accumulated and not yet published, marked partial
   * (WEIR_SHARD_PARTIAL on channel blocks; the shard's own documented key for keys). Hot-path rules
   * apply. Returns 0, or a negative number on failure (counted). */
  int (*flush)(weir_shard* shard, const weir_shard_host* host);
  /* Version 3 (struct_size 80); may be NULL. Called on the processing thread after a turn that
   * handed this shard at least one block, once its input has no more for now (and at stop, before
   * flush, when it has not run since the last block): a shard that holds inputs for a batch
   * processes them. flags: WEIR_SHARD_PREV_TORN when the last block handed to process was torn.
   * Hot-path rules apply. Returns 0, or a negative number on failure (counted). */
  int (*idle)(weir_shard* shard, const weir_shard_host* host, uint32_t flags);
} weir_shard_api;

/* The one symbol a shard shared object exports. host_abi_version is the version the host asks for:
 * its own first, then each older one it still loads; a shard returns NULL for a version it cannot
 * serve. */
typedef const weir_shard_api* (*weir_shard_entry_fn)(uint32_t host_abi_version);

#ifdef __cplusplus
}
#endif

/* The layout above, pinned on 64-bit targets (the tests pin it again with literals). A change here
 * is an ABI change: bump WEIR_SHARD_ABI_VERSION with it. C11 and C++ check with _Static_assert /
 * static_assert; C99 with a negative array size. */
#if defined(__cplusplus)
#define WEIR_SHARD_STATIC_ASSERT(cond, name) static_assert(cond, #name)
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define WEIR_SHARD_STATIC_ASSERT(cond, name) _Static_assert(cond, #name)
#else
#define WEIR_SHARD_STATIC_ASSERT(cond, name) typedef char weir_shard_assert_##name[(cond) ? 1 : -1]
#endif

#if UINTPTR_MAX == 0xFFFFFFFFFFFFFFFFu
/*                      weir_shard_param    off size */
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_param, name) == 0, param_name);
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_param, type) == 8, param_type);
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_param, default_value) == 16, param_default_value);
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_param, min) == 24, param_min);
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_param, max) == 32, param_max);
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_param, choices) == 40, param_choices);
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_param, help) == 48, param_help);
WEIR_SHARD_STATIC_ASSERT(sizeof(weir_shard_param) == 56, param_size);
/*                      weir_shard_output */
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_output, kind) == 64, output_kind);
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_output, rate_hz) == 72, output_rate_hz);
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_output, samples_per_block) == 80, output_samples_per_block);
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_output, max_bytes) == 88, output_max_bytes);
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_output, units) == 96, output_units);
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_output, labels) == 128, output_labels);
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_output, frame_elements) == 256, output_frame_elements);
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_output, array_dtype) == 260, output_array_dtype);
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_output, array_rank) == 264, output_array_rank);
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_output, array_dims) == 268, output_array_dims);
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_output, capacity) == 276, output_capacity);
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_output, axis) == 280, output_axis);
WEIR_SHARD_STATIC_ASSERT(sizeof(weir_shard_output) == 360, output_size);
/*                      weir_shard_axis */
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_axis, units) == 32, axis_units);
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_axis, start) == 64, axis_start);
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_axis, step) == 72, axis_step);
WEIR_SHARD_STATIC_ASSERT(sizeof(weir_shard_axis) == 80, axis_size);
/*                      weir_shard_config */
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_config, instance) == 8, config_instance);
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_config, input_dtype) == 24, config_input_dtype);
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_config, input_rate_hz) == 32, config_input_rate_hz);
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_config, output_base) == 48, config_output_base);
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_config, param_count) == 56, config_param_count);
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_config, param_names) == 64, config_param_names);
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_config, output_count) == 80, config_output_count);
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_config, outputs) == 88, config_outputs);
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_config, input_frame_elements) == WEIR_SHARD_CONFIG_V2_SIZE,
                         config_input_frame_elements);
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_config, arena_vector_dim) == 88 + 32 * 360 + 4, config_arena_vector_dim);
WEIR_SHARD_STATIC_ASSERT(sizeof(weir_shard_config) == 88 + 32 * 360 + 8, config_size);
/*                      weir_vector_meta */
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_vector_meta, frame) == 16, meta_frame);
WEIR_SHARD_STATIC_ASSERT(sizeof(weir_vector_meta) == 8 * WEIR_VECTOR_META_WORDS, meta_size);
/*                      weir_shard_block */
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_block, count) == 8, block_count);
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_block, sequence) == 16, block_sequence);
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_block, first_sample) == 40, block_first_sample);
WEIR_SHARD_STATIC_ASSERT(sizeof(weir_shard_block) == 48, block_size);
/*                      weir_shard_host */
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_host, claim) == 8, host_claim);
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_host, log) == 32, host_log);
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_host, put_vector) == 40, host_put_vector);
WEIR_SHARD_STATIC_ASSERT(sizeof(weir_shard_host) == 48, host_size);
/*                      weir_shard_api */
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_api, name) == 8, api_name);
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_api, params) == 24, api_params);
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_api, param_count) == 32, api_param_count);
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_api, configure) == 40, api_configure);
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_api, stop) == 56, api_stop);
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_api, flush) == WEIR_SHARD_API_V2_SIZE, api_flush);
WEIR_SHARD_STATIC_ASSERT(offsetof(weir_shard_api, idle) == WEIR_SHARD_API_V2_MAX_SIZE, api_idle);
WEIR_SHARD_STATIC_ASSERT(sizeof(weir_shard_api) == WEIR_SHARD_API_V3_SIZE, api_size);
#endif

#endif /* WEIR_SHARD_H */
