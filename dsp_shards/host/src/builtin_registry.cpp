// The one table of built-in shard kinds. The algorithm families' entry functions are declared here
// (they are plain C ABI functions; their libraries need no header of ours) and listed only when
// CMake found the family's library.
#include <algorithm>
#include <array>
#include <iterator>

#include "weir/shard_host/builtin.hpp"

extern "C" {
#ifdef WEIR_HAVE_DSP_SPECTRAL
const weir_shard_api* weir_builtin_fft(std::uint32_t host_abi_version);
const weir_shard_api* weir_builtin_filter(std::uint32_t host_abi_version);
#endif
#ifdef WEIR_HAVE_DSP_EVENTS
const weir_shard_api* weir_builtin_stats(std::uint32_t host_abi_version);
const weir_shard_api* weir_builtin_trigger(std::uint32_t host_abi_version);
const weir_shard_api* weir_builtin_mca(std::uint32_t host_abi_version);
#endif
#ifdef WEIR_HAVE_DSP_LUA
const weir_shard_api* weir_builtin_lua(std::uint32_t host_abi_version);
#endif
}

namespace weir::shard_host {

namespace {

constexpr BuiltinKind kBuiltins[] = {
    {"null", &weir_builtin_null},
    {"copy", &weir_builtin_copy},
#ifdef WEIR_HAVE_DSP_SPECTRAL
    {"fft", &weir_builtin_fft},
    {"filter", &weir_builtin_filter},
#endif
#ifdef WEIR_HAVE_DSP_EVENTS
    {"stats", &weir_builtin_stats},
    {"trigger", &weir_builtin_trigger},
    {"mca", &weir_builtin_mca},
#endif
#ifdef WEIR_HAVE_DSP_LUA
    {"lua", &weir_builtin_lua},
#endif
};

}  // namespace

std::span<const BuiltinKind> builtin_kinds() noexcept { return kBuiltins; }

const BuiltinKind* find_builtin(std::string_view name) noexcept {
  const auto* it = std::find_if(std::begin(kBuiltins), std::end(kBuiltins),
                                [name](const BuiltinKind& k) { return k.name == name; });
  return it == std::end(kBuiltins) ? nullptr : it;
}

}  // namespace weir::shard_host
