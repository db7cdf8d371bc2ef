// The one table of built-in shard kinds: the host's own and every algorithm family's.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <array>
#include <iterator>

#include "weir/dsp/event_shards.hpp"
#include "weir/dsp/lua_shard.h"
#include "weir/dsp/spectral_shards.hpp"
#include "weir/shard_host/builtin.hpp"

namespace weir::shard_host {

namespace {

constexpr BuiltinKind kBuiltins[] = {
    {"null", &weir_builtin_null},
    {"copy", &weir_builtin_copy},
    {"fft", &weir_builtin_fft},
    {"filter", &weir_builtin_filter},
    {"stats", &weir_builtin_stats},
    {"trigger", &weir_builtin_trigger},
    {"mca", &weir_builtin_mca},
    {"lua", &weir_builtin_lua},
};

}  // namespace

constexpr PluginKind kPlugins[] = {
    {"embed", "libweir_shard_embed.so", "libtorch (Debian's libtorch-dev)"},
};

std::span<const BuiltinKind> builtin_kinds() noexcept { return kBuiltins; }

std::span<const PluginKind> plugin_kinds() noexcept { return kPlugins; }

const PluginKind* find_plugin(std::string_view name) noexcept {
  const auto* it = std::find_if(std::begin(kPlugins), std::end(kPlugins),
                                [name](const PluginKind& k) { return k.name == name; });
  return it == std::end(kPlugins) ? nullptr : it;
}

std::vector<std::string> plugin_dirs() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("WEIR_SHARD_PATH"); env != nullptr) {
    const std::string_view all(env);
    std::size_t start = 0;
    while (start <= all.size()) {
      std::size_t colon = all.find(':', start);
      if (colon == std::string_view::npos) colon = all.size();
      if (colon > start) dirs.emplace_back(all.substr(start, colon - start));
      start = colon + 1;
    }
  }
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) dirs.push_back(exe.parent_path().string());
  dirs.emplace_back(WEIR_PLUGIN_INSTALL_DIR);
  return dirs;
}

const BuiltinKind* find_builtin(std::string_view name) noexcept {
  const auto* it = std::find_if(std::begin(kBuiltins), std::end(kBuiltins),
                                [name](const BuiltinKind& k) { return k.name == name; });
  return it == std::end(kBuiltins) ? nullptr : it;
}

}  // namespace weir::shard_host
