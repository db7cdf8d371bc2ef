#pragma once
// What the commands that create channels and feed them (sim, replay) share: the options of the
// channels they create, and the JSON of each channel they fed.
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "time_units.hpp"
#include "weir/core/channel.hpp"
#include "weir/tools/output.hpp"

namespace weir::tools {

inline constexpr double kMaxWaitMs = 1e6;  // --wait-ms limit: a thousand seconds

/// --ring, --on-full and --wait-ms: how a channel the command creates is made and written.
struct ChannelWriterArgs {
  std::uint32_t ring = core::kDefaultRingBlocks;
  std::string on_full = "wait";
  double wait_ms = static_cast<double>(core::kDefaultWriterWaitNs) / kNsPerMs;

  [[nodiscard]] core::FullPolicy full_policy() const noexcept {
    return on_full == "drop" ? core::FullPolicy::drop : core::FullPolicy::wait;
  }
  [[nodiscard]] std::int64_t wait_timeout_ns() const noexcept { return std::llround(wait_ms * kNsPerMs); }

  /// Sets a driver's ring_blocks, full_policy and wait_timeout_ns (acq::SimOptions, acq::ReplayOptions).
  template <class DriverOptions>
  void apply_to(DriverOptions& options) const {
    options.ring_blocks = ring;
    options.full_policy = full_policy();
    options.wait_timeout_ns = wait_timeout_ns();
  }
};

/// Adds --ring, --on-full and --wait-ms to `sub`; `creator` names what creates the channel in the
/// help ("run", "replay"). Thread: main only.
void add_channel_writer_options(CLI::App& sub, ChannelWriterArgs& args, std::string_view creator);

/// The fields every fed channel reports (name, created, blocks_published, samples_published,
/// blocks_dropped); the caller adds its own. `Report` is acq::SimChannelReport or acq::ReplayChannelReport.
template <class Report>
[[nodiscard]] JsonObject fed_channel_json(const Report& c) {
  JsonObject one;
  one.text("name", c.name)
      .boolean("created", c.created)
      .number("blocks_published", c.blocks_published)
      .number("samples_published", c.samples_published)
      .number("blocks_dropped", c.blocks_dropped);
  return one;
}

}  // namespace weir::tools
