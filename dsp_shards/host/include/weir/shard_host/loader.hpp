#pragma once
// Loading a shard (cold path): a built-in kind by name, or a shared object by path, checked against
// the host's ABI before anything of it runs beyond its entry function.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "weir/core/error.hpp"
#include "weir/shard_host/builtin.hpp"
#include "weir/shard.h"

namespace weir::shard_host {

/// Whether `text` names a shared object rather than a built-in kind: it contains '/' or ends in
/// ".so". A bare "name.so" is looked up relative to the working directory, not the loader's path.
[[nodiscard]] bool names_shard_file(std::string_view text) noexcept;

/// A loaded shard: its validated table and, for a .so, the dlopen handle (closed on destruction, so
/// every instance made from it must be gone first). Move-only. Thread: any, one owner.
class LoadedShard {
 public:
  LoadedShard() = default;
  LoadedShard(LoadedShard&& other) noexcept;
  LoadedShard& operator=(LoadedShard&& other) noexcept;
  LoadedShard(const LoadedShard&) = delete;
  LoadedShard& operator=(const LoadedShard&) = delete;
  ~LoadedShard();

  /// Requires: loaded (made by load_shard).
  [[nodiscard]] const weir_shard_api& api() const noexcept { return *api_; }
  /// The kind from the table: "fft", "gain", ...
  [[nodiscard]] std::string_view kind() const noexcept { return api_->name; }
  /// How the user named it, for messages: "shard 'fft'" or "shard './libgain.so'".
  [[nodiscard]] const std::string& what() const noexcept { return what_; }
  [[nodiscard]] bool builtin() const noexcept { return handle_ == nullptr; }

 private:
  friend core::Result<LoadedShard> load_shard(std::string_view kind_or_path);
  LoadedShard(const weir_shard_api* api, void* handle, std::string what) noexcept;
  const weir_shard_api* api_ = nullptr;
  void* handle_ = nullptr;
  std::string what_;
};

/// Loads a built-in kind or a .so (dlopen RTLD_NOW | RTLD_LOCAL, then WEIR_SHARD_ENTRY_SYMBOL called
/// with WEIR_SHARD_ABI_VERSION, then with each older version down to WEIR_SHARD_ABI_OLDEST while it
/// returns NULL) and checks its table with check_api. Fails naming the shard and the
/// problem: an unknown kind (with a did-you-mean and the list), the dlopen error text, a missing
/// entry symbol, a NULL table. Thread: control only (dlopen and the entry function may not be
/// thread-safe in third-party code).
[[nodiscard]] core::Result<LoadedShard> load_shard(std::string_view kind_or_path);

/// The file of a plugin kind (builtin.hpp), from the first plugin directory that holds it; fails
/// naming the directories searched and what the build needs to make it. Loads nothing.
/// Thread: control only.
[[nodiscard]] core::Result<std::string> find_plugin_file(const PluginKind& plugin);

/// Checks a table against this host: not NULL, abi_version from WEIR_SHARD_ABI_OLDEST to the host's,
/// struct_size within that version's range (version 2: WEIR_SHARD_API_V2_SIZE to
/// WEIR_SHARD_API_V2_MAX_SIZE; 3: WEIR_SHARD_API_V3_SIZE to the host's sizeof(weir_shard_api); the
/// numbers in the message), a name, configure/process/stop present, at least one input
/// dtype, a parameter table that is present when counted and has named, typed entries.
/// `what` names the shard in messages. Thread: any.
[[nodiscard]] core::Result<void> check_api(const weir_shard_api* api, const std::string& what);

/// The table's flush, or NULL when it has none or its struct_size ends before the field (a first
/// version 2 table, built before flush existed: the field is not read). Thread: any.
[[nodiscard]] inline auto shard_flush(const weir_shard_api& api) noexcept -> decltype(api.flush) {
  return api.struct_size >= offsetof(weir_shard_api, flush) + sizeof api.flush ? api.flush : nullptr;
}

/// The table's idle, or NULL when it has none (every version 2 table). Thread: any.
[[nodiscard]] inline auto shard_idle(const weir_shard_api& api) noexcept -> decltype(api.idle) {
  return api.abi_version >= 3 && api.struct_size >= offsetof(weir_shard_api, idle) + sizeof api.idle ? api.idle
                                                                                                     : nullptr;
}

/// Names of the dtypes in an input_dtypes mask: "i16, f32". Thread: any.
[[nodiscard]] std::string dtype_list(std::uint32_t mask);

}  // namespace weir::shard_host
