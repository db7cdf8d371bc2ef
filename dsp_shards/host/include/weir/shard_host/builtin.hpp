#pragma once
// The built-in shard kinds: one constexpr-style table of entry functions, no registration macros.
// Built-ins return the same weir_shard_api table a third-party .so would, and go through the same
// validation (loader.hpp).
#include <cstdint>
#include <span>
#include <string_view>

#include "weir/shard.h"

namespace weir::shard_host {

/// The input_dtypes mask with every dtype of the ABI (bits WEIR_DTYPE_I8 .. WEIR_DTYPE_C64).
inline constexpr std::uint32_t kAllDtypes = ((1U << (WEIR_DTYPE_C64 + 1)) - 1) & ~1U;

struct BuiltinKind {
  std::string_view name;      // the kind, as given to `weir shard NAME KIND`
  weir_shard_entry_fn entry;  // returns the kind's table for a host ABI version
};

/// Every built-in kind this build has: the host's own (null, copy) plus those of the algorithm
/// families that were built (fft, filter, stats, trigger, mca, lua). Thread: any.
[[nodiscard]] std::span<const BuiltinKind> builtin_kinds() noexcept;

/// The built-in called name, or nullptr. Thread: any.
[[nodiscard]] const BuiltinKind* find_builtin(std::string_view name) noexcept;

}  // namespace weir::shard_host

extern "C" {
/// The host's own built-ins. `null` reads every block and does nothing else (it measures the host's
/// overhead); `copy` republishes each input block unchanged to <base>.copy.
const weir_shard_api* weir_builtin_null(std::uint32_t host_abi_version);
const weir_shard_api* weir_builtin_copy(std::uint32_t host_abi_version);
}
