// The `null` built-in: reads every block and does nothing else. Running it measures what the host
// itself costs per block (wake, next, validate, done, counters, timing).
#include <array>
#include <cstdint>
#include <memory>

#include "weir/dsp/shard_adapter.hpp"
#include "weir/shard_host/builtin.hpp"

namespace {

struct NullShard {
  static constexpr const char* kKind = "null";
  static constexpr const char* kDescription = "reads every block and does nothing: measures the host's own cost per block";
  static constexpr std::array<weir_shard_param, 0> kParams{};
  static constexpr std::uint32_t kInputDtypes = weir::shard_host::kAllDtypes;
  static constexpr bool kErrorsNameKind = false;  // the host names the shard

  static weir::core::Result<std::unique_ptr<NullShard>> configure(weir_shard_config&) {
    return std::make_unique<NullShard>();
  }
  int process(const weir_shard_block& in, const weir_shard_host&) noexcept {
    ++blocks;
    samples += in.count;
    return 0;
  }

  std::uint64_t blocks = 0;
  std::uint64_t samples = 0;
};

}  // namespace

extern "C" const weir_shard_api* weir_builtin_null(std::uint32_t v) { return weir::dsp::shard_entry<NullShard>(v); }
