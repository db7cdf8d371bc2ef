// Loading shards: built-in kinds from the registry, third-party ones with dlopen, both checked by
// the same check_api before the host uses anything but the entry function.
#include "weir/shard_host/loader.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cstring>
#include <utility>
#include <vector>

#include "weir/core/arena_layout.hpp"
#include "weir/core/channel.hpp"
#include "weir/shard_host/builtin.hpp"
#include "weir/shard_host/params.hpp"

namespace weir::shard_host {

namespace {

using core::Errc;
using core::fail;


std::string builtin_list() {
  std::string list;
  for (const BuiltinKind& k : builtin_kinds()) list += (list.empty() ? "" : ", ") + std::string(k.name);
  return list;
}

// Closes a dlopen handle on every early return until it is handed to a LoadedShard.
struct DlHandle {
  void* handle = nullptr;
  ~DlHandle() {
    if (handle != nullptr) dlclose(handle);
  }
  void* release() noexcept { return std::exchange(handle, nullptr); }
};

// The table the entry function returns, or why there is none.
// Asks for the host's own version first, then each older one it still loads (shard.h).
core::Result<const weir_shard_api*> call_entry(weir_shard_entry_fn entry, const std::string& what) {
  for (std::uint32_t version = WEIR_SHARD_ABI_VERSION; version >= WEIR_SHARD_ABI_OLDEST; --version) {
    const weir_shard_api* api = entry(version);
    if (api == nullptr) continue;  // a table of another version than asked is judged by check_api
    if (auto ok = check_api(api, what); !ok) return tl::make_unexpected(ok.error());
    return api;
  }
  return fail(Errc::invalid_argument, what + ": " + WEIR_SHARD_ENTRY_SYMBOL + " returned no table (NULL) for ABI "
                                          "versions " + std::to_string(WEIR_SHARD_ABI_OLDEST) + " to " +
                                          std::to_string(WEIR_SHARD_ABI_VERSION) + ": the shard serves none that this host loads");
}

// A built-in kind's table, checked like any other.
core::Result<const weir_shard_api*> load_builtin(std::string_view kind, const std::string& what) {
  const BuiltinKind* builtin = find_builtin(kind);
  if (builtin == nullptr) {
    std::vector<std::string_view> names;
    for (const BuiltinKind& k : builtin_kinds()) names.push_back(k.name);
    const std::string near = closest_name(kind, names);
    return fail(Errc::not_found, "unknown shard kind '" + std::string(kind) + "'" +
                                     (near.empty() ? "" : ": did you mean '" + near + "'?") +
                                     " (built-in kinds: " + builtin_list() +
                                     "; a shared object is named by a path containing '/' or ending in .so)");
  }
  auto api = call_entry(builtin->entry, what);
  if (!api) return tl::make_unexpected(api.error());
  if ((*api)->name != kind)
    return fail(Errc::invalid_argument, what + ": the built-in's table calls itself '" + (*api)->name + "'");
  return *api;
}

}  // namespace

core::Result<std::string> find_plugin_file(const PluginKind& plugin) {
  std::string searched;
  for (const std::string& dir : plugin_dirs()) {
    const std::string path = dir + "/" + std::string(plugin.file);
    if (::access(path.c_str(), R_OK) == 0) return path;
    searched += (searched.empty() ? "" : ", ") + dir;
  }
  return fail(Errc::not_found, "shard '" + std::string(plugin.name) + "': the kind is a plugin, " +
                                   std::string(plugin.file) + ", found in none of " + searched +
                                   " (it is built only where " + std::string(plugin.needs) +
                                   " is installed; $WEIR_SHARD_PATH adds directories)");
}

bool names_shard_file(std::string_view text) noexcept {
  return text.find('/') != std::string_view::npos || (text.size() > 3 && text.ends_with(".so"));
}

LoadedShard::LoadedShard(const weir_shard_api* api, void* handle, std::string what) noexcept
    : api_(api), handle_(handle), what_(std::move(what)) {}

LoadedShard::LoadedShard(LoadedShard&& other) noexcept
    : api_(std::exchange(other.api_, nullptr)), handle_(std::exchange(other.handle_, nullptr)),
      what_(std::move(other.what_)) {}

LoadedShard& LoadedShard::operator=(LoadedShard&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) dlclose(handle_);
    api_ = std::exchange(other.api_, nullptr);
    handle_ = std::exchange(other.handle_, nullptr);
    what_ = std::move(other.what_);
  }
  return *this;
}

LoadedShard::~LoadedShard() {
  if (handle_ != nullptr) dlclose(handle_);
}

core::Result<void> check_api(const weir_shard_api* api, const std::string& what) {
  const auto refuse = [&](const std::string& why) { return fail(Errc::invalid_argument, what + ": " + why); };
  if (api == nullptr) return refuse("no shard table (NULL)");
  if (api->abi_version < WEIR_SHARD_ABI_OLDEST || api->abi_version > WEIR_SHARD_ABI_VERSION)
    return refuse("built for shard ABI version " + std::to_string(api->abi_version) + ", but this host speaks versions " +
                  std::to_string(WEIR_SHARD_ABI_OLDEST) + " to " + std::to_string(WEIR_SHARD_ABI_VERSION) +
                  (api->abi_version == 1 ? " (version 2 added frame shapes and array keys to weir_shard_output)"
                                         : "") +
                  "; rebuild it against this weir's weir/shard.h");
  // A version 2 table ends at stop or flush; a version 3 one has idle and may grow up to the host's.
  const bool v2 = api->abi_version == 2;
  const std::size_t least = v2 ? WEIR_SHARD_API_V2_SIZE : WEIR_SHARD_API_V3_SIZE;
  const std::size_t most = v2 ? WEIR_SHARD_API_V2_MAX_SIZE : sizeof(weir_shard_api);
  if (api->struct_size < least || api->struct_size > most)
    return refuse("its weir_shard_api is " + std::to_string(api->struct_size) + " bytes, but this host's is " +
                  std::to_string(sizeof(weir_shard_api)) + " (for ABI version " + std::to_string(api->abi_version) + " it accepts " +
                  std::to_string(least) + " to " + std::to_string(most) + "; same ABI version, different header?); rebuild it against "
                  "this weir's weir/shard.h");
  if (api->name == nullptr || api->name[0] == '\0') return refuse("the table has no name");
  if (std::strlen(api->name) >= WEIR_SHARD_NAME_BYTES)
    return refuse("its name is longer than " + std::to_string(WEIR_SHARD_NAME_BYTES - 1) + " bytes");
  if (api->configure == nullptr) return refuse("configure is NULL");
  if (api->process == nullptr) return refuse("process is NULL");
  if (api->stop == nullptr) return refuse("stop is NULL");
  if ((api->input_dtypes & kAllDtypes) == 0) return refuse("it accepts no known input dtype (input_dtypes is 0)");
  if (api->param_count > WEIR_SHARD_MAX_PARAMS)
    return refuse("it declares " + std::to_string(api->param_count) + " parameters; at most " + std::to_string(WEIR_SHARD_MAX_PARAMS));
  if (api->param_count > 0 && api->params == nullptr)
    return refuse("it declares " + std::to_string(api->param_count) + " parameters but the table is NULL");
  for (std::uint32_t i = 0; i < api->param_count; ++i) {
    const weir_shard_param& p = api->params[i];
    if (p.name == nullptr || p.name[0] == '\0') return refuse("parameter " + std::to_string(i) + " has no name");
    if (p.type < WEIR_PARAM_INT || p.type > WEIR_PARAM_BOOL)
      return refuse("parameter '" + std::string(p.name) + "' has unknown type " + std::to_string(p.type));
    for (std::uint32_t j = 0; j < i; ++j)
      if (std::strcmp(api->params[j].name, p.name) == 0)
        return refuse("parameter '" + std::string(p.name) + "' is declared twice");
  }
  return {};
}

std::string dtype_list(std::uint32_t mask) {
  std::string list;
  for (std::uint32_t d = WEIR_DTYPE_I8; d <= WEIR_DTYPE_C64; ++d)
    if ((mask & (1U << d)) != 0)
      list += (list.empty() ? "" : ", ") + std::string(core::dtype_name(static_cast<core::Dtype>(d)));
  return list;
}

core::Result<LoadedShard> load_shard(std::string_view kind_or_path) {
  std::string path(kind_or_path);
  std::string what = "shard '" + path + "'";
  if (const PluginKind* plugin = find_plugin(kind_or_path); plugin != nullptr && !names_shard_file(kind_or_path)) {
    auto file = find_plugin_file(*plugin);  // then loaded as any shared object
    if (!file) return tl::make_unexpected(file.error());
    path = *file;
    what = "shard '" + std::string(kind_or_path) + "' (" + path + ")";
  } else if (!names_shard_file(kind_or_path)) {
    auto api = load_builtin(kind_or_path, what);
    if (!api) return tl::make_unexpected(api.error());
    return LoadedShard(*api, nullptr, what);
  }
  if (path.find('/') == std::string::npos) path = "./" + path;  // "x.so" means the file here, not a library search
  dlerror();  // clear any earlier error so the text below is this call's
  DlHandle handle{dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)};
  if (handle.handle == nullptr) {
    const char* text = dlerror();
    return fail(Errc::not_found, what + ": dlopen failed: " + (text != nullptr ? text : "unknown error"));
  }
  dlerror();
  void* symbol = dlsym(handle.handle, WEIR_SHARD_ENTRY_SYMBOL);
  if (symbol == nullptr)
    return fail(Errc::invalid_argument, what + ": no entry symbol '" + WEIR_SHARD_ENTRY_SYMBOL +
                                            "': is it a weir shard, and is the entry function extern \"C\" and "
                                            "exported?");
  const auto entry = reinterpret_cast<weir_shard_entry_fn>(symbol);  // dlsym's documented use
  auto api = call_entry(entry, what);
  if (!api) return tl::make_unexpected(api.error());
  return LoadedShard(*api, handle.release(), what);
}

}  // namespace weir::shard_host
