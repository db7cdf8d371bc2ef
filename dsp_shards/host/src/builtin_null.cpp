// The `null` built-in: reads every block and does nothing else. Running it measures what the host
// itself costs per block (wake, next, validate, done, counters, timing).
#include <cstdio>
#include <new>

#include "weir/shard_host/builtin.hpp"

namespace {

struct NullShard {
  std::uint64_t blocks = 0;
  std::uint64_t samples = 0;
};

weir_shard* null_configure(weir_shard_config* cfg, char* error, size_t error_bytes) {
  (void)cfg;
  auto* s = new (std::nothrow) NullShard{};
  if (s == nullptr) std::snprintf(error, error_bytes, "out of memory");
  return reinterpret_cast<weir_shard*>(s);
}

int null_process(weir_shard* shard, const weir_shard_block* in, const weir_shard_host* host) {
  (void)host;
  auto* s = reinterpret_cast<NullShard*>(shard);
  ++s->blocks;
  s->samples += in->count;
  return 0;
}

void null_stop(weir_shard* shard) { delete reinterpret_cast<NullShard*>(shard); }

const weir_shard_api kNullApi = {
    WEIR_SHARD_ABI_VERSION,
    sizeof(weir_shard_api),
    "null",
    "reads every block and does nothing: measures the host's own cost per block",
    nullptr,
    0,
    weir::shard_host::kAllDtypes,
    &null_configure,
    &null_process,
    &null_stop,
};

}  // namespace

extern "C" const weir_shard_api* weir_builtin_null(std::uint32_t host_abi_version) {
  return host_abi_version == WEIR_SHARD_ABI_VERSION ? &kNullApi : nullptr;
}
