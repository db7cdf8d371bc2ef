// The one table of built-in shard kinds: the host's own and every algorithm family's.
#include <algorithm>
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

std::span<const BuiltinKind> builtin_kinds() noexcept { return kBuiltins; }

const BuiltinKind* find_builtin(std::string_view name) noexcept {
  const auto* it = std::find_if(std::begin(kBuiltins), std::end(kBuiltins),
                                [name](const BuiltinKind& k) { return k.name == name; });
  return it == std::end(kBuiltins) ? nullptr : it;
}

}  // namespace weir::shard_host
