#pragma once
// What the fft and filter shards share at configure time: their wording of parameter refusals,
// checking the input, naming and declaring the output. Messages leave out the kind: the shard
// adapter puts "<kind>: " in front.
#include <cstdint>
#include <string>
#include <string_view>

#include "weir/core/error.hpp"
#include "weir/dsp/shard_params.hpp"
#include "weir/shard.h"

namespace weir::dsp::detail {

/// The family's wording: "parameter <name> = '<value>': <why>".
[[nodiscard]] std::string spectral_wording(const ParamProblem& problem);

/// An error about one parameter's value, for relations configure checks itself.
[[nodiscard]] core::Error bad(std::string_view name, std::string_view value, const std::string& why);

/// Checks what every shard of the family needs: the host's ABI and struct size, a real input
/// dtype, a positive rate, a non-zero block size. Errors name the input channel.
[[nodiscard]] core::Result<void> check_input(const weir_shard_config& cfg);

/// "<input>.<suffix>", or output_base as given when the host passed one other than the input's name.
[[nodiscard]] std::string output_name(const weir_shard_config& cfg, const char* suffix);

/// Declares channel output 0 (f32). Fails when name or units do not fit.
[[nodiscard]] core::Result<void> declare_channel(weir_shard_config& cfg, const std::string& name, double rate_hz,
                                                 std::uint32_t samples_per_block, const std::string& units);

/// Declares key output `name` after the outputs declared so far; returns its index. Fails when the
/// name does not fit or the table is full.
[[nodiscard]] core::Result<std::uint32_t> declare_key(weir_shard_config& cfg, const std::string& name,
                                                      std::uint32_t key_type, std::uint64_t max_bytes);

}  // namespace weir::dsp::detail
