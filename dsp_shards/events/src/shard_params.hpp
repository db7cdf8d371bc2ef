#pragma once
// What the three event shards share at configure time: their wording of parameter refusals,
// checking the input, and declaring outputs; and the little-endian key words process writes.
// Messages leave out the kind: the shard adapter puts "<kind>: " in front.
#include <cstdint>
#include <string>
#include <string_view>

#include "weir/core/error.hpp"
#include "weir/dsp/shard_params.hpp"
#include "weir/shard.h"

namespace weir::dsp::detail {

/// The family's wording: "parameter '<name>' = <value>: <why>".
[[nodiscard]] std::string events_wording(const ParamProblem& problem);

/// "parameter 'name' = value: allowed lo to hi" and similar; cold path.
[[nodiscard]] std::string out_of_range(const char* name, const std::string& value, const std::string& allowed);

/// Checks the ABI version and struct size, the input dtype against `dtypes`, a positive rate and
/// block size, and a non-empty output base. Empties cfg.outputs.
[[nodiscard]] core::Result<void> check_input(weir_shard_config& cfg, std::uint32_t dtypes);

/// Declares `<output_base><suffix>` as a key output in `units` (the host writes them as the text
/// key `<name>_units`, which recordings store with the key's log); returns its index.
[[nodiscard]] core::Result<std::uint32_t> add_key(weir_shard_config& cfg, const char* suffix, std::uint32_t key_type,
                                                  std::uint64_t max_bytes, std::string_view units = {});
/// Declares `<output_base><suffix>` as a channel output; returns its index.
[[nodiscard]] core::Result<std::uint32_t> add_channel(weir_shard_config& cfg, const char* suffix,
                                                      std::uint32_t dtype, double rate_hz,
                                                      std::uint32_t samples_per_block);

/// Declares `<output_base>.pulses`, an event channel (core/event_record.hpp) of at most `max_events`
/// events per input block, a block per input block, heights in `units`; returns its index.
[[nodiscard]] core::Result<std::uint32_t> add_pulses(weir_shard_config& cfg, std::uint32_t max_events,
                                                     const std::string& units);

/// Writes one event record (kEventFields f64) at `record`. Hot path.
void put_event(double* record, double offset_ns, double height, std::uint32_t id, std::uint32_t flags) noexcept;

/// The 8 little-endian bytes of a u64 key value.
void put_u64_le(std::uint64_t value, unsigned char (&out)[8]) noexcept;

}  // namespace weir::dsp::detail
