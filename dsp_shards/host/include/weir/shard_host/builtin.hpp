#pragma once
// The built-in shard kinds: one constexpr-style table of entry functions, no registration macros.
// Built-ins return the same weir_shard_api table a third-party .so would, and go through the same
// validation (loader.hpp).
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "weir/shard.h"

namespace weir::shard_host {

/// The input_dtypes mask with every dtype of the ABI (bits WEIR_DTYPE_I8 .. WEIR_DTYPE_C64).
inline constexpr std::uint32_t kAllDtypes = ((1U << (WEIR_DTYPE_C64 + 1)) - 1) & ~1U;

struct BuiltinKind {
  std::string_view name;      // the kind, as given to `weir shard NAME KIND`
  weir_shard_entry_fn entry;  // returns the kind's table for a host ABI version
};

/// A kind built as a plugin shared object rather than linked in, because its dependencies are too
/// heavy for every weir process to load (embed: libtorch). `weir shard NAME KIND` loads the file
/// from the first of these directories that holds it: each of $WEIR_SHARD_PATH (colon-separated),
/// the running executable's directory (the build puts plugins beside build/tools/weir), and the
/// installed plugin directory (<libdir>/weir).
struct PluginKind {
  std::string_view name;   // the kind
  std::string_view file;   // the shared object's file name
  std::string_view needs;  // what the build needs to make it, for the message when it is missing
};

/// Every plugin kind weir knows of, built or not. Thread: any.
[[nodiscard]] std::span<const PluginKind> plugin_kinds() noexcept;

/// The plugin called name, or nullptr. Thread: any.
[[nodiscard]] const PluginKind* find_plugin(std::string_view name) noexcept;

/// The directories searched for plugin files, in order (see PluginKind). Thread: control only.
[[nodiscard]] std::vector<std::string> plugin_dirs();

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
