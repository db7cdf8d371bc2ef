// The `copy` built-in: republishes every input block unchanged, same dtype, block size, rate and
// units, as the channel <base>.<suffix>. A tee for tests and for moving a stream under a new name.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "weir/core/arena_layout.hpp"
#include "weir/core/channel.hpp"
#include "weir/shard_host/builtin.hpp"

namespace {

struct CopyShard {
  std::uint32_t sample_bytes = 0;
};

const weir_shard_param kCopyParams[] = {
    {"suffix", WEIR_PARAM_TEXT, 0, "copy", 0, 0, nullptr, "output channel is <base>.<suffix>"},
    {"labels", WEIR_PARAM_TEXT, 0, "", 0, 0, nullptr, "comma-separated Bloom labels of the output channel"},
};

const char* param(const weir_shard_config* cfg, const char* name) {
  for (std::uint32_t i = 0; i < cfg->param_count; ++i)
    if (std::strcmp(cfg->param_names[i], name) == 0) return cfg->param_values[i];
  return "";
}

// Copies text into a fixed ABI field; false when it does not fit (with its terminating zero).
template <std::size_t N>
bool put(char (&field)[N], const std::string& text) {
  if (text.size() >= N) return false;
  std::memset(field, 0, N);
  std::memcpy(field, text.data(), text.size());
  return true;
}

weir_shard* configure_copy(weir_shard_config* cfg, char* error, size_t error_bytes) {
  const std::string name = std::string(cfg->output_base) + "." + param(cfg, "suffix");
  weir_shard_output& out = cfg->outputs[0];
  std::memset(&out, 0, sizeof(out));
  if (!put(out.name, name) || !put(out.labels, param(cfg, "labels")) || !put(out.units, cfg->input_units)) {
    std::snprintf(error, error_bytes, "output '%s', its labels or units are too long", name.c_str());
    return nullptr;
  }
  out.kind = WEIR_OUTPUT_CHANNEL;
  out.dtype = cfg->input_dtype;
  out.rate_hz = cfg->input_rate_hz;
  out.samples_per_block = cfg->input_samples_per_block;
  cfg->output_count = 1;
  auto* s = new (std::nothrow) CopyShard{};
  if (s == nullptr) {
    std::snprintf(error, error_bytes, "out of memory");
    return nullptr;
  }
  s->sample_bytes = weir::core::dtype_bytes(static_cast<weir::core::Dtype>(cfg->input_dtype));
  return reinterpret_cast<weir_shard*>(s);
}

// No exception may cross the ABI: the only one possible above is an allocation failure.
weir_shard* copy_configure(weir_shard_config* cfg, char* error, size_t error_bytes) {
  try {
    return configure_copy(cfg, error, error_bytes);
  } catch (const std::exception& e) {
    std::snprintf(error, error_bytes, "%s", e.what());
    return nullptr;
  }
}

int copy_process(weir_shard* shard, const weir_shard_block* in, const weir_shard_host* host) {
  const auto* s = reinterpret_cast<const CopyShard*>(shard);
  std::uint32_t capacity = 0;
  void* dst = host->claim(host->self, 0, &capacity);
  if (dst == nullptr) return 0;  // dropped at the source for a full lossless reader: counted there
  const std::uint32_t n = std::min(in->count, capacity);
  std::memcpy(dst, in->samples, std::size_t{n} * s->sample_bytes);
  host->publish(host->self, 0, n, in->realtime_ns, in->flags);
  return 0;
}

void copy_stop(weir_shard* shard) { delete reinterpret_cast<CopyShard*>(shard); }

const weir_shard_api kCopyApi = {
    WEIR_SHARD_ABI_VERSION,
    sizeof(weir_shard_api),
    "copy",
    "republishes every input block unchanged as the channel <base>.<suffix>",
    kCopyParams,
    sizeof(kCopyParams) / sizeof(kCopyParams[0]),
    weir::shard_host::kAllDtypes,
    &copy_configure,
    &copy_process,
    &copy_stop,
};

}  // namespace

extern "C" const weir_shard_api* weir_builtin_copy(std::uint32_t host_abi_version) {
  return host_abi_version == WEIR_SHARD_ABI_VERSION ? &kCopyApi : nullptr;
}
