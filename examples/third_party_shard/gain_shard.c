/* A third-party weir shard in plain C: y = gain * x + offset, published as the float32 channel
 * <base>.gain, one output block per input block, carrying the input block's time and flags.
 *
 * Everything a shard needs is in weir/shard.h; it links against nothing of weir. Build it with the
 * CMakeLists.txt next to this file, then run it with
 *   weir shard ARENA ./build/libweir_gain.so --input adc0 --param gain=2 --param offset=0.5
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <weir/shard.h>

#if defined(__GNUC__)
#define GAIN_EXPORT __attribute__((visibility("default")))
#else
#define GAIN_EXPORT
#endif

typedef struct gain_state {
  double gain;
  double offset;
  uint32_t dtype;
} gain_state;

static const weir_shard_param gain_params[] = {
    {"gain", WEIR_PARAM_REAL, 0, "1", -1e9, 1e9, NULL, "factor applied to every sample"},
    {"offset", WEIR_PARAM_REAL, 0, "0", -1e12, 1e12, NULL, "added after the gain, in output units"},
};

/* The host has already checked every value against the table above, so strtod cannot fail. */
static double param_real(const weir_shard_config* cfg, const char* name) {
  uint32_t i;
  for (i = 0; i < cfg->param_count; ++i)
    if (strcmp(cfg->param_names[i], name) == 0) return strtod(cfg->param_values[i], NULL);
  return 0.0;
}

/* Cold path: read the parameters, declare the output, allocate the state. */
static weir_shard* gain_configure(weir_shard_config* cfg, char* error, size_t error_bytes) {
  weir_shard_output* out = &cfg->outputs[0];
  gain_state* s;
  int n;
  memset(out, 0, sizeof *out);
  n = snprintf(out->name, sizeof out->name, "%s.gain", cfg->output_base);
  if (n < 0 || (size_t)n >= sizeof out->name) {
    snprintf(error, error_bytes, "output name '%s.gain' is longer than %u bytes", cfg->output_base,
             (unsigned)sizeof out->name - 1);
    return NULL;
  }
  out->kind = WEIR_OUTPUT_CHANNEL;
  out->dtype = WEIR_DTYPE_F32;
  out->rate_hz = cfg->input_rate_hz;
  out->samples_per_block = cfg->input_samples_per_block;
  snprintf(out->units, sizeof out->units, "%s", cfg->input_units != NULL ? cfg->input_units : "");
  snprintf(out->labels, sizeof out->labels, "gain");
  cfg->output_count = 1;

  s = (gain_state*)malloc(sizeof *s);
  if (s == NULL) {
    snprintf(error, error_bytes, "out of memory");
    return NULL;
  }
  s->gain = param_real(cfg, "gain");
  s->offset = param_real(cfg, "offset");
  s->dtype = cfg->input_dtype;
  return (weir_shard*)s;
}

/* Hot path: read the samples in place, write straight into the claimed output block. */
static int gain_process(weir_shard* shard, const weir_shard_block* in, const weir_shard_host* host) {
  const gain_state* s = (const gain_state*)shard;
  uint32_t capacity = 0, n, i;
  float* y = (float*)host->claim(host->self, 0, &capacity);
  if (y == NULL) return 0; /* dropped at the source (a full lossless reader): the arena counts it */
  n = in->count < capacity ? in->count : capacity;
  switch (s->dtype) {
    case WEIR_DTYPE_I16: {
      const int16_t* x = (const int16_t*)in->samples;
      for (i = 0; i < n; ++i) y[i] = (float)(s->gain * x[i] + s->offset);
      break;
    }
    case WEIR_DTYPE_I32: {
      const int32_t* x = (const int32_t*)in->samples;
      for (i = 0; i < n; ++i) y[i] = (float)(s->gain * x[i] + s->offset);
      break;
    }
    case WEIR_DTYPE_F32: {
      const float* x = (const float*)in->samples;
      for (i = 0; i < n; ++i) y[i] = (float)(s->gain * x[i] + s->offset);
      break;
    }
    case WEIR_DTYPE_F64: {
      const double* x = (const double*)in->samples;
      for (i = 0; i < n; ++i) y[i] = (float)(s->gain * x[i] + s->offset);
      break;
    }
    default: return -1; /* unreachable: input_dtypes below lets only these four in */
  }
  host->publish(host->self, 0, n, in->realtime_ns, in->flags);
  return 0;
}

static void gain_stop(weir_shard* shard) { free(shard); }

static const weir_shard_api gain_api = {
    WEIR_SHARD_ABI_VERSION,
    sizeof(weir_shard_api),
    "gain",
    "y = gain * x + offset, as the float32 channel <base>.gain",
    gain_params,
    sizeof gain_params / sizeof gain_params[0],
    (1u << WEIR_DTYPE_I16) | (1u << WEIR_DTYPE_I32) | (1u << WEIR_DTYPE_F32) | (1u << WEIR_DTYPE_F64),
    gain_configure,
    gain_process,
    gain_stop,
    NULL, /* flush: a sample-by-sample shard holds nothing back at stop */
};

/* The one exported symbol. A shard built for another ABI version would return NULL here. */
GAIN_EXPORT const weir_shard_api* weir_shard_entry(uint32_t host_abi_version) {
  return host_abi_version == WEIR_SHARD_ABI_VERSION ? &gain_api : NULL;
}
