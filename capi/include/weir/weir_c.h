/* weir_c.h: the C ABI of libweir, over core's public read API. Attach to a live arena by name, list
 * and read its channels and keys, follow a channel as a registered consumer, set and watch keys,
 * wait on signal groups, read a channel's min/max envelope and search vectors. C99; no C++ type or
 * exception crosses it.
 *
 * Conventions:
 *   - Every call returns a weir_status and fills its out-params; it never aborts on bad input and
 *     never crashes on a bad arena (attach validates the whole header, as core's open does).
 *   - A failing call (status < 0) leaves a message naming the arena, channel or key and the reason,
 *     read by weir_last_error() in the same thread.
 *   - Handles are opaque. A reader or watcher keeps its arena mapped: closing them and detaching
 *     the arena may happen in any order.
 *   - Thread: an arena handle may be used from any number of threads; a reader or watcher by one
 *     thread at a time (weir_*_interrupt excepted: any thread, or a signal handler).
 *   - Blocking calls take a timeout in ns (0: do not wait) and sleep in slices of at most
 *     WEIR_WAIT_SLICE_NS, looking at their handle's interrupt flag between slices.
 * Versioning: the library's SONAME is libweir.so.WEIR_C_ABI_VERSION; weir_abi_version() tells the
 * loaded one. */
#ifndef WEIR_WEIR_C_H
#define WEIR_WEIR_C_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define WEIR_C_API __attribute__((visibility("default")))
#else
#define WEIR_C_API
#endif

#define WEIR_C_ABI_VERSION 1
#define WEIR_WAIT_SLICE_NS 20000000 /* longest sleep between two looks at an interrupt flag */

typedef enum weir_status {
  WEIR_OK = 0,
  WEIR_TIMEOUT = 1,       /* a wait ended at its timeout with nothing new */
  WEIR_EMPTY = 2,         /* nothing new yet (a call with timeout 0) */
  WEIR_INTERRUPTED = 3,   /* weir_reader_interrupt / weir_watcher_interrupt cut the wait short */
  WEIR_E_INVALID = -1,    /* a null handle or pointer, an empty or too long name, a bad option */
  WEIR_E_NOT_FOUND = -2,  /* no such arena, channel, key or label */
  WEIR_E_PERMISSION = -3, /* another user's arena, or a read-only attach asked to write or register */
  WEIR_E_LAYOUT = -4,     /* a foreign, truncated, corrupted or newer-version arena (or descriptor) */
  WEIR_E_NOT_READY = -5,  /* the arena's creator never finished publishing it */
  WEIR_E_TOO_SMALL = -6,  /* the caller's buffer is too small; the out-param says how much is needed */
  WEIR_E_TYPE = -7,       /* the key holds a value of another type */
  WEIR_E_BUSY = -8,       /* a writer held the slot past the bounded wait */
  WEIR_E_TORN = -9,       /* a writer died mid-write: the value is not trustworthy until rewritten */
  WEIR_E_FULL = -10,      /* no free key slot, consumer row, watcher row or signal group */
  WEIR_E_TOO_LARGE = -11, /* a value larger than the arena's value_bytes */
  WEIR_E_UNSUPPORTED = -12, /* the arena lacks it (no vector rows) or this CPU does */
  WEIR_E_SYSTEM = -13,    /* a system call failed (shm_open, mmap, ...) */
  WEIR_E_INTERNAL = -14   /* out of memory, or an unexpected failure inside libweir */
} weir_status;

/* Sample and element types; the numbers are core's Dtype. */
typedef enum weir_dtype {
  WEIR_I8 = 1, WEIR_U8, WEIR_I16, WEIR_U16, WEIR_I32, WEIR_U32, WEIR_I64, WEIR_F32, WEIR_F64,
  WEIR_C64 /* complex: two f32, re then im */
} weir_dtype;

/* Key value types; the numbers are core's ValueType. */
typedef enum weir_value_type {
  WEIR_VALUE_NONE = 0, WEIR_VALUE_BYTES = 1, WEIR_VALUE_TEXT = 2, WEIR_VALUE_I64 = 3, WEIR_VALUE_U64 = 4,
  WEIR_VALUE_F64 = 5, WEIR_VALUE_VECTOR = 6, WEIR_VALUE_ARRAY = 7
} weir_value_type;

typedef enum weir_policy { WEIR_LOSSY = 0, WEIR_LOSSLESS = 1, WEIR_LATEST = 2 } weir_policy;
typedef enum weir_start { WEIR_START_OLDEST = 0, WEIR_START_NEWEST = 1, WEIR_START_SEQUENCE = 2 } weir_start;
typedef enum weir_block_state {
  WEIR_BLOCK_OK = 0,          /* samples and metadata, unchanged while copied */
  WEIR_BLOCK_OVERWRITTEN = 1, /* the writer reused the slot before or during the copy: gone */
  WEIR_BLOCK_UNWRITTEN = 2    /* not published (yet, or its writer died before committing it) */
} weir_block_state;
typedef enum weir_metric { WEIR_COSINE = 0, WEIR_DOT = 1, WEIR_L2 = 2 } weir_metric;

#define WEIR_ATTACH_READ_ONLY 1u /* map read-only: reads and copies only (no consumers, watchers, sets) */
#define WEIR_BLOCK_GAP_FLAG 0x80000000u /* block flags: a gap marker, no samples */

typedef struct weir_arena weir_arena;
typedef struct weir_reader weir_reader;
typedef struct weir_watcher weir_watcher;

typedef struct weir_arena_info {
  char name[64];
  uint64_t bytes;
  uint64_t created_ns;         /* CLOCK_REALTIME */
  uint64_t channel_data_bytes;
  uint32_t layout_version;
  uint32_t creator_pid;
  uint32_t slot_count;
  uint32_t key_bytes;          /* longest key */
  uint32_t value_bytes;        /* largest value */
  uint32_t channel_capacity;
  uint32_t consumer_capacity;
  uint32_t vector_dim;         /* 0: no vectors */
  uint32_t read_only;          /* attached with WEIR_ATTACH_READ_ONLY */
  uint32_t reserved;
} weir_arena_info;

typedef struct weir_channel_info {
  char name[64];
  char units[32];
  char axis_name[32];          /* frame axis, "" for plain samples */
  char axis_units[32];
  char axis_values_key[64];    /* an f64 array key with explicit axis values, "" for none */
  double rate_hz;              /* elements per second */
  double axis_start;           /* element i of a frame sits at axis_start + i * axis_step */
  double axis_step;
  uint64_t head;               /* blocks published: the next block's sequence */
  uint64_t samples_written;
  uint64_t dropped_at_source;
  uint64_t label_ids;          /* bit i: label i of the arena's dictionary (weir_label_name) */
  uint32_t index;
  uint32_t dtype;              /* weir_dtype */
  uint32_t sample_bytes;
  uint32_t samples_per_block;
  uint32_t ring_blocks;
  uint32_t frames_per_block;   /* 0: plain samples; else samples_per_block = frames * frame_elements */
  uint32_t frame_elements;
  uint32_t writer_pid;         /* 0: none */
  uint32_t writer_alive;
  uint32_t consumers;          /* live registered consumers */
} weir_channel_info;

typedef struct weir_block_meta {
  uint64_t sequence;
  uint64_t offset_bytes;       /* where its samples start in the destination */
  uint64_t realtime_ns;        /* acquisition time, ns since the epoch */
  uint64_t monotonic_ns;       /* acquisition time, CLOCK_MONOTONIC */
  uint64_t first_sample;       /* index of its first sample in the channel's stream */
  uint32_t samples;
  uint32_t flags;
  uint32_t state;              /* weir_block_state; only sequence means anything unless WEIR_BLOCK_OK */
  uint32_t reserved;
} weir_block_meta;

/* A read-only view of a block in place, from weir_reader_view. Its samples may change under the
 * caller at any time: use them, then weir_block_view_valid(); false means discard what was read. */
typedef struct weir_block_view {
  const void* data;
  uint64_t bytes;
  weir_block_meta meta;
  const void* token;           /* private: the block's state word */
  uint64_t token_expected;     /* private */
} weir_block_view;

typedef struct weir_reader_stats {
  uint64_t cursor;             /* next sequence it reads */
  uint64_t head;               /* blocks published */
  uint64_t blocks_read;
  uint64_t samples_read;
  uint64_t blocks_lost;        /* lapped or overwritten while copied, counted exactly */
} weir_reader_stats;

typedef struct weir_value_info {
  uint64_t version;            /* completed writes to the key's slot: changes on every write */
  uint32_t type;               /* weir_value_type */
  uint32_t length;             /* value bytes */
  uint32_t elem_dtype;         /* arrays: weir_dtype of the elements; 0 otherwise */
  uint32_t rank;               /* arrays: 1 or 2; 0 otherwise */
  uint32_t dims[2];            /* arrays: dims[1] is 0 for rank 1 */
} weir_value_info;

typedef struct weir_vector_hit {
  float score;                 /* cosine or dot: larger is better; l2: the distance */
  uint32_t slot;               /* private: pins the hit's key (weir_vector_hit_key) */
  uint32_t generation;         /* private */
} weir_vector_hit;

/* ---- library ---------------------------------------------------------------------------------- */
WEIR_C_API uint32_t weir_abi_version(void);
/* Text of the last failing call in this thread ("" if none); valid until this thread's next call. */
WEIR_C_API const char* weir_last_error(void);
WEIR_C_API const char* weir_status_name(weir_status status);
WEIR_C_API const char* weir_dtype_name(uint32_t dtype);    /* "f32"; "?" when unknown */
WEIR_C_API uint32_t weir_dtype_bytes(uint32_t dtype);      /* 0 when unknown */

/* ---- arenas ----------------------------------------------------------------------------------- */
/* Attaches an existing arena ("NAME": /dev/shm/weir.NAME; a path with '/': a mapped file; "fd:N").
 * Never creates or deletes one. Refuses a missing (NOT_FOUND), unreadable (PERMISSION), foreign,
 * truncated, corrupted or newer (LAYOUT) or unfinished (NOT_READY) arena, naming it. */
WEIR_C_API weir_status weir_attach(const char* where, uint32_t flags, weir_arena** out);
/* Releases the handle (NULL: nothing); the mapping goes when its last reader and watcher close. */
WEIR_C_API weir_status weir_detach(weir_arena* arena);
WEIR_C_API weir_status weir_arena_get_info(const weir_arena* arena, weir_arena_info* out);
/* The name of label `id` of the arena's dictionary (bit id of label_ids). */
WEIR_C_API weir_status weir_label_name(const weir_arena* arena, uint32_t id, char* buf, size_t size);

/* ---- channels --------------------------------------------------------------------------------- */
/* Fills out[0..capacity) with the ready channels; *count is how many there are (TOO_SMALL when
 * more than capacity: the first capacity are filled). */
WEIR_C_API weir_status weir_channel_list(const weir_arena* arena, weir_channel_info* out, uint32_t capacity,
                                         uint32_t* count);
WEIR_C_API weir_status weir_channel_find(const weir_arena* arena, const char* name, weir_channel_info* out);
/* Blocks published so far on channel `index`: the next block's sequence. */
WEIR_C_API weir_status weir_channel_head(const weir_arena* arena, uint32_t index, uint64_t* head);
/* Copies blocks [first, first + count) of channel `index` without registering, oldest first, samples
 * back to back in dst, one meta per block visited (copied, overwritten or unwritten: meta.state).
 * Stops early when dst lacks room for one more full block; *visited says how many metas were
 * written. TOO_SMALL when dst cannot hold even one full block. Never holds the writer back. */
WEIR_C_API weir_status weir_channel_read(const weir_arena* arena, uint32_t index, uint64_t first, uint64_t count,
                                         void* dst, size_t dst_bytes, weir_block_meta* metas, uint64_t* visited);
/* Min/max of samples [first_sample, first_sample + count) in `columns` buckets from the channel's
 * pyramid; NaN where no entry starts, or entries were overwritten. */
WEIR_C_API weir_status weir_channel_envelope(const weir_arena* arena, uint32_t index, uint64_t first_sample,
                                             uint64_t count, float* mins, float* maxs, size_t columns);

/* ---- following a channel as a registered consumer --------------------------------------------- */
/* Registers in the arena's consumer table (shown by `weir ls`) with the policy: lossy (lapped blocks
 * are counted lost), lossless (the writer waits for this reader) or latest (only the newest block).
 * start: oldest block in the ring, newest published block, or `sequence`. */
WEIR_C_API weir_status weir_reader_open(weir_arena* arena, const char* channel, uint32_t policy, uint32_t start,
                                        uint64_t sequence, const char* consumer_name, weir_reader** out);
WEIR_C_API weir_status weir_reader_close(weir_reader* reader);
/* The next block, copied into dst and validated (never torn), with its metadata. *lost: blocks lost
 * since the previous call, also set with EMPTY, TIMEOUT and INTERRUPTED. Waits up to timeout_ns on
 * the channel's signal group (0: EMPTY at once when nothing is new). TOO_SMALL (nothing consumed)
 * when dst_bytes is below a full block. */
WEIR_C_API weir_status weir_reader_next(weir_reader* reader, void* dst, size_t dst_bytes, weir_block_meta* meta,
                                        uint64_t* lost, int64_t timeout_ns);
/* As weir_reader_next, but hands out the block in place; call weir_reader_release(view) when done. */
WEIR_C_API weir_status weir_reader_view(weir_reader* reader, weir_block_view* out, uint64_t* lost,
                                        int64_t timeout_ns);
/* Marks the viewed block read (freeing it for a lossless writer); *valid: it was unchanged throughout. */
WEIR_C_API weir_status weir_reader_release(weir_reader* reader, const weir_block_view* view, int* valid);
/* 1 while the viewed block is unchanged, 0 once the writer reused its slot (or view is NULL). */
WEIR_C_API int weir_block_view_valid(const weir_block_view* view);
WEIR_C_API weir_status weir_reader_get_stats(const weir_reader* reader, weir_reader_stats* out);
/* Makes the reader's current or next wait return INTERRUPTED. Async-signal-safe. */
WEIR_C_API weir_status weir_reader_interrupt(weir_reader* reader);

/* ---- keys ------------------------------------------------------------------------------------- */
/* The live keys, each followed by a NUL, into buf; *needed: bytes the whole list takes (TOO_SMALL
 * when larger than size); *count: how many keys. Not a snapshot. */
WEIR_C_API weir_status weir_key_list(const weir_arena* arena, char* buf, size_t size, size_t* needed,
                                     uint32_t* count);
/* Type, length, version and array shape of a key's value. */
WEIR_C_API weir_status weir_key_info(const weir_arena* arena, const char* key, weir_value_info* out);
/* Copies the value into dst; TOO_SMALL with info->length set when it does not fit. */
WEIR_C_API weir_status weir_get(const weir_arena* arena, const char* key, void* dst, size_t size,
                                weir_value_info* info);
WEIR_C_API weir_status weir_get_f64(const weir_arena* arena, const char* key, double* out);  /* f64 only */
WEIR_C_API weir_status weir_get_i64(const weir_arena* arena, const char* key, int64_t* out);  /* i64 only */
WEIR_C_API weir_status weir_get_u64(const weir_arena* arena, const char* key, uint64_t* out); /* u64 only */
/* Writes a value of type bytes, text, i64, u64 or f64 (the last three: 8 bytes, native order),
 * inserting the key; waits, bounded, for a writer inside. */
WEIR_C_API weir_status weir_set(weir_arena* arena, const char* key, uint32_t type, const void* data, size_t size);
WEIR_C_API weir_status weir_set_f64(weir_arena* arena, const char* key, double value);
WEIR_C_API weir_status weir_set_i64(weir_arena* arena, const char* key, int64_t value);
WEIR_C_API weir_status weir_set_u64(weir_arena* arena, const char* key, uint64_t value);
WEIR_C_API weir_status weir_set_text(weir_arena* arena, const char* key, const char* text);
/* Writes a typed array (rank 1 or 2, dims row-major); size must be dims product x element bytes. */
WEIR_C_API weir_status weir_set_array(weir_arena* arena, const char* key, uint32_t dtype, uint32_t rank,
                                      const uint32_t* dims, const void* data, size_t size);
WEIR_C_API weir_status weir_del(weir_arena* arena, const char* key);

/* ---- watching: signal groups ------------------------------------------------------------------ */
WEIR_C_API weir_status weir_watcher_open(weir_arena* arena, weir_watcher** out);
WEIR_C_API weir_status weir_watcher_close(weir_watcher* watcher);
WEIR_C_API weir_status weir_watcher_add_key(weir_watcher* watcher, const char* key);
WEIR_C_API weir_status weir_watcher_add_label(weir_watcher* watcher, const char* label);
WEIR_C_API weir_status weir_watcher_add_channel(weir_watcher* watcher, const char* channel);
/* Sleeps until a subscribed group pulses (OK), timeout_ns passes (TIMEOUT) or an interrupt
 * (INTERRUPTED). Returns OK at once when a pulse arrived since the last wait. No polling. */
WEIR_C_API weir_status weir_watcher_wait(weir_watcher* watcher, int64_t timeout_ns);
/* Waits until `key`'s version differs from `version` (OK, with its info), TIMEOUT or INTERRUPTED.
 * Subscribes the watcher to the key first. A missing key counts as version 0. */
WEIR_C_API weir_status weir_watcher_wait_key(weir_watcher* watcher, const char* key, uint64_t version,
                                             int64_t timeout_ns, weir_value_info* info);
/* Makes the watcher's current or next wait return INTERRUPTED. Async-signal-safe. */
WEIR_C_API weir_status weir_watcher_interrupt(weir_watcher* watcher);

/* ---- vectors ---------------------------------------------------------------------------------- */
WEIR_C_API weir_status weir_vector_dim(const weir_arena* arena, uint32_t* dim); /* 0: no vectors */
/* Gives `key` (created empty if missing) the n labels: its writes and deletion then pulse their signal
 * groups and are logged there; a vector partition is the keys carrying its label. Cold path. */
WEIR_C_API weir_status weir_set_labels(weir_arena* arena, const char* key, const char* const* labels, uint32_t n);
WEIR_C_API weir_status weir_vector_set(weir_arena* arena, const char* key, const float* v, uint32_t n);
WEIR_C_API weir_status weir_vector_get(const weir_arena* arena, const char* key, float* out, uint32_t n);
/* Top-k by metric, best first, into hits[0..k); *count: hits written. */
WEIR_C_API weir_status weir_vector_search(const weir_arena* arena, const float* query, uint32_t n, uint32_t metric,
                                          weir_vector_hit* hits, uint32_t k, uint32_t* count);
/* The key of a hit, NUL-terminated; NOT_FOUND when it was deleted since the search. */
WEIR_C_API weir_status weir_vector_hit_key(const weir_arena* arena, const weir_vector_hit* hit, char* buf,
                                           size_t size);

/* ---- nearest vectors through a partition's ann service (`weir ann ARENA PART`) ------------------ */
#define WEIR_ANN_MAX_HITS 100
typedef struct weir_ann weir_ann;
/* Finds the running service of partition label `part` and claims a watcher row for its answers.
 * NOT_FOUND (with what to start) when no live service of `part` is registered in the arena. */
WEIR_C_API weir_status weir_ann_open(weir_arena* arena, const char* part, weir_ann** out);
WEIR_C_API weir_status weir_ann_close(weir_ann* ann);
/* The k (1..WEIR_ANN_MAX_HITS) nearest vectors of query (n floats, the arena's dim), best first, by the
 * service's metric; ef 0: the service's default breadth. Sleeps on a signal group for the answer, at
 * most timeout_ns. Hits are read with weir_vector_hit_key. */
WEIR_C_API weir_status weir_ann_search(weir_ann* ann, const float* query, uint32_t n, uint32_t k, uint32_t ef,
                                       int64_t timeout_ns, weir_vector_hit* hits, uint32_t* count);
/* As weir_ann_search, for the vector of `key` (which is among the hits). */
WEIR_C_API weir_status weir_ann_search_like(weir_ann* ann, const char* key, uint32_t k, uint32_t ef,
                                            int64_t timeout_ns, weir_vector_hit* hits, uint32_t* count);
/* Exact top-k over the keys carrying label `part` (every vector of the arena scored in place; no
 * service needed): the truth an ann answer is measured against. Metric cosine. */
WEIR_C_API weir_status weir_ann_exact_search(const weir_arena* arena, const char* part, const float* query,
                                             uint32_t n, uint32_t k, weir_vector_hit* hits, uint32_t* count);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* WEIR_WEIR_C_H */
