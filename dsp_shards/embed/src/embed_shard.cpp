// The "embed" shard: runs a TorchScript encoder on each window of its input (each frame of a frame
// channel, such as the trigger's captured pulses, or each input-length window of a plain channel's
// blocks), `batch` windows per forward pass, and writes one vector per window into a ring of keys
// PART/<channel>/<i> labelled PART, with the window's time, block sequence, frame and first sample
// as the key's value. Built as a plugin (libtorch stays out of the weir binary); the host finds it
// for kind `embed` (dsp_shards/embed/README.md).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "model_info.hpp"
#include "torch_encoder.hpp"
#include "weir/shard.h"

namespace weir::dsp::embed {

namespace {

constexpr double kMaxCapacity = 1 << 20;  // ring keys; the arena's slots are the real bound
constexpr double kMaxBatch = 4096;        // windows per forward pass
constexpr double kMaxInputLength = 1 << 20;
constexpr double kMaxThreads = 256;
constexpr float kMinStd = 1e-6F;          // standardise: a flat window is centred, not blown up
constexpr double kNsPerS = 1e9;

constexpr weir_shard_param kParams[] = {
    {"model", WEIR_PARAM_TEXT, 0, "", 0, 0, nullptr,
     "TorchScript file; empty: the model built with weir (embed_model/pulse_encoder.pt beside the plugin)"},
    {"part", WEIR_PARAM_TEXT, 0, "pulses", 0, 0, nullptr,
     "vector partition: the label of the ring keys <part>/<channel>/<i>"},
    {"capacity", WEIR_PARAM_INT, 0, "4096", 1, kMaxCapacity, nullptr,
     "keys in the ring: the n-th vector goes to key n mod capacity"},
    {"batch", WEIR_PARAM_INT, 0, "16", 1, kMaxBatch, nullptr,
     "windows per forward pass (held ones run when the input runs dry)"},
    {"normalise", WEIR_PARAM_TEXT, 0, "model", 0, 0, "model|standardise|scale|none",
     "per window: model (what its JSON says, else none), standardise (zero mean, unit variance), "
     "scale (times `scale`), none"},
    {"scale", WEIR_PARAM_REAL, 0, "1", -1e30, 1e30, nullptr, "factor of normalise=scale"},
    {"input_length", WEIR_PARAM_INT, 0, "0", 0, kMaxInputLength, nullptr,
     "samples per window; 0: the model's JSON, else the input's frame size; must match both when given"},
    {"threads", WEIR_PARAM_INT, 0, "1", 1, kMaxThreads, nullptr, "libtorch intra-op threads (process-wide)"},
};

enum class Norm : std::uint8_t { none, standardise, scale };

// Samples of one window as float, converted from the input's dtype.
template <class T>
void convert(const void* src, std::size_t first, std::uint32_t n, float* dst) noexcept {
  const T* s = static_cast<const T*>(src) + first;
  for (std::uint32_t i = 0; i < n; ++i) dst[i] = static_cast<float>(s[i]);
}

struct EmbedShard {
  std::unique_ptr<TorchEncoder> encoder;
  std::uint32_t length = 0, dims = 0, batch = 0;
  std::uint32_t dtype = 0;
  double rate_hz = 0;
  Norm norm = Norm::none;
  float scale = 1.0F;
  std::vector<float> in;                // (batch + windows of a block) x length, reused by every pass
  std::vector<float> out;               // batch x dims
  std::vector<weir_vector_meta> meta;   // batch + windows of a block
  std::uint32_t held = 0;               // windows in `in` not yet run
  std::uint32_t windows_per_block = 0;  // windows one input block holds (the rest of a longer one is dropped)
  std::uint32_t block_mark = 0;         // windows held before the last block's: all a torn block leaves
  std::uint32_t vectors = 0, embedded_key = 0, dropped_key = 0;  // output indices
  std::uint64_t embedded = 0;           // vectors written
  std::uint64_t dropped = 0;            // windows with no vector: a failed forward pass or write, a partial window

  void load_window(const weir_shard_block& b, std::uint32_t w) noexcept;
  int run(const weir_shard_host& host, std::uint32_t n) noexcept;
  int run_batches(const weir_shard_host& host, bool all) noexcept;
};

void EmbedShard::load_window(const weir_shard_block& b, std::uint32_t w) noexcept {
  float* x = in.data() + std::size_t{held} * length;
  const std::size_t first = std::size_t{w} * length;
  switch (dtype) {
    case WEIR_DTYPE_F32: convert<float>(b.samples, first, length, x); break;
    case WEIR_DTYPE_F64: convert<double>(b.samples, first, length, x); break;
    case WEIR_DTYPE_I16: convert<std::int16_t>(b.samples, first, length, x); break;
    case WEIR_DTYPE_I32: convert<std::int32_t>(b.samples, first, length, x); break;
    default: std::memset(x, 0, std::size_t{length} * sizeof(float)); break;  // configure accepts no other
  }
  if (norm == Norm::standardise) {
    double sum = 0, sq = 0;
    for (std::uint32_t i = 0; i < length; ++i) sum += x[i];
    const double mean = sum / length;
    for (std::uint32_t i = 0; i < length; ++i) sq += (x[i] - mean) * (x[i] - mean);
    const float inv = 1.0F / std::max(static_cast<float>(std::sqrt(sq / length)), kMinStd);
    for (std::uint32_t i = 0; i < length; ++i) x[i] = (x[i] - static_cast<float>(mean)) * inv;
  } else if (norm == Norm::scale) {
    for (std::uint32_t i = 0; i < length; ++i) x[i] *= scale;
  }
  // The window's first sample: its time by the stamp rule of weir/shard.h (a trigger capture's block
  // is dated at its trigger sample, so a one-frame block's vector carries the pulse's time).
  const double offset_ns = static_cast<double>(first) * kNsPerS / rate_hz;
  meta[held] = weir_vector_meta{b.realtime_ns + static_cast<std::uint64_t>(std::llround(offset_ns)), b.sequence, w,
                                b.first_sample + first};
  ++held;
}

// Runs the first n held windows (all of blocks known intact) and moves the rest to the front.
int EmbedShard::run(const weir_shard_host& host, std::uint32_t n) noexcept {
  int rc = 0;
  if (!encoder->forward(in.data(), n, out.data())) {
    dropped += n;
    rc = -1;
  } else {
    for (std::uint32_t i = 0; i < n; ++i) {
      if (host.put_vector(host.self, vectors, out.data() + std::size_t{i} * dims, &meta[i]) == 0) {
        ++embedded;
      } else {
        ++dropped;
      }
    }
  }
  (void)host.set_key(host.self, embedded_key, &embedded, sizeof embedded);
  (void)host.set_key(host.self, dropped_key, &dropped, sizeof dropped);
  held -= n;
  if (held > 0) {  // at most a block's windows: a short move within the reused buffers
    std::memmove(in.data(), in.data() + std::size_t{n} * length, std::size_t{held} * length * sizeof(float));
    std::memmove(meta.data(), meta.data() + n, std::size_t{held} * sizeof(weir_vector_meta));
  }
  return rc;
}

// Full batches (all: and then the rest) of the held windows.
int EmbedShard::run_batches(const weir_shard_host& host, bool all) noexcept {
  int rc = 0;
  while (held >= batch || (all && held > 0))
    if (run(host, std::min(held, batch)) < 0) rc = -1;
  block_mark = held;
  return rc;
}

// ---- configure ----

struct Refusal {
  char* text;
  std::size_t bytes;
  std::nullptr_t operator()(const std::string& why) const noexcept {
    if (text != nullptr && bytes > 0) std::snprintf(text, bytes, "embed: %s", why.c_str());
    return nullptr;
  }
};

// A parameter's text: as given (the host passes every one, defaults filled in), else its default.
std::string param(const weir_shard_config& cfg, std::string_view name) {
  for (std::uint32_t i = 0; i < cfg.param_count; ++i)
    if (name == cfg.param_names[i]) return cfg.param_values[i];
  for (const weir_shard_param& p : kParams)
    if (name == p.name) return p.default_value;
  return {};
}

bool put_text(char* field, std::size_t bytes, const std::string& text) noexcept {
  if (text.size() >= bytes) return false;
  std::memset(field, 0, bytes);
  std::memcpy(field, text.data(), text.size());
  return true;
}

std::string num(std::uint64_t v) { return std::to_string(v); }

weir_shard* configure(weir_shard_config* cfg, char* error, std::size_t error_bytes) noexcept {
  const Refusal refuse{error, error_bytes};
  if (cfg == nullptr || cfg->abi_version < 3 || cfg->struct_size < sizeof(weir_shard_config))
    return refuse("this shard needs a host of shard ABI version 3 (vector rings)");
  try {
    auto shard = std::make_unique<EmbedShard>();
    std::string model = param(*cfg, "model");
    if (model.empty()) model = default_model_path();
    std::string why;
    const ModelInfo info = read_model_info(model, why);
    if (!why.empty()) return refuse(why);
    const std::string input = cfg->input_channel;
    const std::uint32_t frame = cfg->input_frame_elements;

    // The window length: the parameter, the model's JSON and the input's frames must agree.
    auto length = static_cast<std::uint32_t>(std::strtoul(param(*cfg, "input_length").c_str(), nullptr, 10));
    if (length != 0 && info.input_length != 0 && length != info.input_length)
      return refuse("input_length=" + num(length) + ", but the model '" + model + "' takes windows of " +
                    num(info.input_length) + " samples (its JSON)");
    if (length == 0) length = info.input_length != 0 ? info.input_length : frame;
    if (length == 0)
      return refuse("the window length is not known: the model '" + model + "' has no JSON beside it and the "
                    "input channel '" + input + "' has no frames; give input_length");
    if (frame != 0 && frame != length)
      return refuse("the model '" + model + "' takes windows of " + num(length) + " samples, but the input channel '" +
                    input + "' has frames of " + num(frame) + " elements");
    if (frame == 0 && cfg->input_samples_per_block % length != 0)
      return refuse("the input channel '" + input + "' has blocks of " + num(cfg->input_samples_per_block) +
                    " samples, not a whole number of the model's " + num(length) + "-sample windows");
    if (cfg->input_dtype != WEIR_DTYPE_F32 && cfg->input_dtype != WEIR_DTYPE_F64 &&
        cfg->input_dtype != WEIR_DTYPE_I16 && cfg->input_dtype != WEIR_DTYPE_I32)
      return refuse("input dtype " + num(cfg->input_dtype) + " is not f32, f64, i16 or i32");

    const int threads = std::atoi(param(*cfg, "threads").c_str());
    shard->batch = static_cast<std::uint32_t>(std::strtoul(param(*cfg, "batch").c_str(), nullptr, 10));
    shard->encoder = TorchEncoder::load(model, length, shard->batch, threads, why);
    if (!shard->encoder) return refuse(why);
    const std::uint32_t dims = shard->encoder->dims();
    const std::string part = param(*cfg, "part");
    const std::string shapes = "the model '" + model + "' maps [n, " + num(length) + "] windows to [n, " + num(dims) + "]";
    if (info.dims != 0 && info.dims != dims)
      return refuse(shapes + ", but its JSON says " + num(info.dims) + " dims");
    if (cfg->arena_vector_dim != 0 && cfg->arena_vector_dim != dims)  // 0: none or not known; the host checks
      return refuse(shapes + " vectors, but partition '" + part + "' lives in an arena whose vectors have " +
                    num(cfg->arena_vector_dim) + " dims");

    std::string norm = param(*cfg, "normalise");
    if (norm == "model") norm = info.normalisation.empty() ? "none" : info.normalisation;
    if (norm == "standardise") {
      shard->norm = Norm::standardise;
    } else if (norm == "scale") {
      shard->norm = Norm::scale;
    } else if (norm != "none") {
      return refuse("the model's JSON asks for normalisation '" + norm + "', which this shard does not know");
    }
    shard->scale = std::strtof(param(*cfg, "scale").c_str(), nullptr);
    shard->length = length;
    shard->dims = dims;
    shard->dtype = cfg->input_dtype;
    shard->rate_hz = cfg->input_rate_hz > 0 ? cfg->input_rate_hz : 1.0;
    shard->windows_per_block = cfg->input_samples_per_block / length;
    const std::size_t most = std::size_t{shard->batch} + shard->windows_per_block;  // held + one block
    shard->in.assign(most * length, 0.0F);
    shard->out.assign(std::size_t{shard->batch} * dims, 0.0F);
    shard->meta.assign(most, weir_vector_meta{});

    // Outputs: the ring, and two counters <base>.embedded / <base>.embed_dropped.
    cfg->output_count = 3;
    weir_shard_output& ring = cfg->outputs[0];
    std::memset(cfg->outputs, 0, 3 * sizeof(weir_shard_output));
    if (!put_text(ring.name, sizeof ring.name, part + "/" + input) || part.empty() ||
        !put_text(ring.labels, sizeof ring.labels, part) || part.find(',') != std::string::npos)
      return refuse("partition '" + part + "' with channel '" + input + "' makes no key prefix of at most " +
                    num(WEIR_SHARD_NAME_BYTES - 1) + " bytes (a partition is one label, without commas)");
    ring.kind = WEIR_OUTPUT_VECTORS;
    ring.capacity = static_cast<std::uint32_t>(std::strtoul(param(*cfg, "capacity").c_str(), nullptr, 10));
    ring.array_dtype = WEIR_DTYPE_F32;
    ring.array_rank = 1;
    ring.array_dims[0] = dims;
    const std::string base = cfg->output_base;
    const char* suffix[2] = {".embedded", ".embed_dropped"};
    for (int i = 0; i < 2; ++i) {
      weir_shard_output& key = cfg->outputs[1 + i];
      if (!put_text(key.name, sizeof key.name, base + suffix[i]))
        return refuse("output base '" + base + "' is too long for a key name");
      key.kind = WEIR_OUTPUT_KEY;
      key.key_type = WEIR_KEY_U64;
      key.max_bytes = sizeof(std::uint64_t);
      put_text(key.units, sizeof key.units, "counts");
    }
    shard->vectors = 0;
    shard->embedded_key = 1;
    shard->dropped_key = 2;
    return reinterpret_cast<weir_shard*>(shard.release());
  } catch (const std::bad_alloc&) {
    return refuse("out of memory while configuring");
  } catch (const std::exception& e) {
    return refuse(std::string("configure failed: ") + e.what());
  }
}

// ---- the hot path ----

// The windows of a block are only copied here; they run on the next call (or idle), once the host
// has said whether the block stayed intact while they were copied (WEIR_SHARD_PREV_TORN), so every
// block is either embedded or counted lost, never both.
int process(weir_shard* handle, const weir_shard_block* in, const weir_shard_host* host) noexcept {
  if (handle == nullptr || in == nullptr || host == nullptr) return -1;
  auto& s = *reinterpret_cast<EmbedShard*>(handle);
  if ((in->flags & WEIR_SHARD_PREV_TORN) != 0) s.held = s.block_mark;  // the torn block's windows go
  const int rc = s.run_batches(*host, false);
  const std::uint32_t windows = std::min(in->count / s.length, s.windows_per_block);
  if (in->count % s.length != 0) ++s.dropped;  // a partial last window: no vector
  for (std::uint32_t w = 0; w < windows; ++w) s.load_window(*in, w);
  return rc;
}

int idle(weir_shard* handle, const weir_shard_host* host, std::uint32_t flags) noexcept {
  if (handle == nullptr || host == nullptr) return -1;
  auto& s = *reinterpret_cast<EmbedShard*>(handle);
  if ((flags & WEIR_SHARD_PREV_TORN) != 0) s.held = s.block_mark;
  return s.run_batches(*host, true);
}

int flush(weir_shard* handle, const weir_shard_host* host) noexcept {
  return idle(handle, host, 0);  // the host has called idle with the last block's verdict first
}

void stop(weir_shard* handle) noexcept { delete reinterpret_cast<EmbedShard*>(handle); }

constexpr std::uint32_t kInputDtypes =
    (1U << WEIR_DTYPE_F32) | (1U << WEIR_DTYPE_F64) | (1U << WEIR_DTYPE_I16) | (1U << WEIR_DTYPE_I32);

const weir_shard_api kApi = {
    WEIR_SHARD_ABI_VERSION,
    sizeof(weir_shard_api),
    "embed",
    "TorchScript encoder: one vector per pulse window (frame) or block window, batched, into a ring of "
    "keys of a vector partition",
    kParams,
    static_cast<std::uint32_t>(std::size(kParams)),
    kInputDtypes,
    &configure,
    &process,
    &stop,
    &flush,  // at stop: whatever is still held
    &idle,   // when the input runs dry: the held windows
};

}  // namespace

}  // namespace weir::dsp::embed

extern "C" __attribute__((visibility("default"))) const weir_shard_api* weir_shard_entry(std::uint32_t host_abi_version) {
  return host_abi_version == WEIR_SHARD_ABI_VERSION ? &weir::dsp::embed::kApi : nullptr;
}
