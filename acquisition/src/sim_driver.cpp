// The simulator driver: attach or create channels, then claim, generate in place and publish one
// block per channel per block period, paced on absolute CLOCK_MONOTONIC deadlines or flat out.
#include "weir/acq/sim_driver.hpp"

#include <time.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <span>
#include <utility>

#include <fmt/core.h>

#include "weir/core/channel.hpp"
#include "weir/core/clock.hpp"

namespace weir::acq {

namespace {

constexpr double kNsPerSecond = 1e9;
constexpr double kRateTolerance = 1e-9;  // relative: an existing channel's rate "matches" within this

std::string num(double value) {
  std::array<char, 32> text{};
  std::snprintf(text.data(), text.size(), "%g", value);
  return text.data();
}

tl::unexpected<core::Error> refuse(const std::string& why) {
  return core::fail(core::Errc::invalid_argument, "sim: " + why);
}

SignalConfig signal_for(const SimOptions& options, std::size_t channel) {
  SignalConfig config = options.signal;
  config.sample_rate_hz = options.rate_hz;
  config.seed = options.signal.seed + channel;  // one independent, reproducible stream per channel
  return config;
}

// One channel being fed: its writer, its generator and its counters.
struct Lane {
  core::ChannelWriter writer;
  SignalGenerator generator;
  SimChannelReport report;
};

// Why an existing channel cannot take this run's blocks, or empty if it can.
std::string mismatch(const core::ChannelInfo& channel, const SimOptions& options) {
  std::string why;
  const auto add = [&why](const std::string& text) { why += (why.empty() ? "" : ", ") + text; };
  if (channel.dtype != options.dtype)
    add(std::string("dtype ") + core::dtype_name(channel.dtype) + ", not " + core::dtype_name(options.dtype));
  if (channel.samples_per_block != options.block_samples)
    add(fmt::format("blocks of {} samples, not {}", channel.samples_per_block, options.block_samples));
  if (std::abs(channel.rate_hz - options.rate_hz) > kRateTolerance * options.rate_hz)
    add("a rate of " + num(channel.rate_hz) + " Hz, not " + num(options.rate_hz) + " Hz");
  return why;
}

}  // namespace

core::Result<void> validate(const SimOptions& options) {
  if (options.channels.empty()) return refuse("name at least one channel");
  for (std::size_t i = 0; i < options.channels.size(); ++i) {
    const std::string& name = options.channels[i];
    if (name.empty() || name.size() > core::kMaxNameBytes)
      return refuse(fmt::format("channel name '{}' must be 1 to {} bytes", name, core::kMaxNameBytes));
    for (std::size_t j = 0; j < i; ++j)
      if (options.channels[j] == name) return refuse("channel '" + name + "' is named twice");
  }
  if (!std::isfinite(options.rate_hz) || options.rate_hz <= 0)
    return refuse("rate must be a positive number of Hz, not " + num(options.rate_hz));
  if (options.block_samples == 0 || options.block_samples > core::kMaxSamplesPerBlock)
    return refuse(fmt::format("block must be 1 to {} samples, not {}", core::kMaxSamplesPerBlock, options.block_samples));
  if (core::dtype_bytes(options.dtype) == 0) return refuse("unknown dtype");
  if (!std::isfinite(options.full_scale_v) || options.full_scale_v <= 0)
    return refuse("full scale must be a positive number of volts, not " + num(options.full_scale_v));
  if (!std::isfinite(options.duration_s) || options.duration_s < 0)
    return refuse("duration must be >= 0 seconds, not " + num(options.duration_s));
  if (auto generator = SignalGenerator::create(signal_for(options, 0), options.block_samples); !generator)
    return tl::make_unexpected(core::with_context(generator.error(), "sim"));
  return {};
}

core::Result<SimReport> run_sim(const core::Arena& arena, const SimOptions& options, const std::atomic<bool>& stop) {
  if (auto ok = validate(options); !ok) return tl::make_unexpected(ok.error());
  const std::string where = arena.location().describe();

  // Attach checks first, so a mismatch refuses the run before anything is created.
  const std::vector<core::ChannelInfo> existing = core::list_channels(arena);
  std::vector<bool> missing(options.channels.size(), true);
  for (std::size_t i = 0; i < options.channels.size(); ++i) {
    const auto found = std::find_if(existing.begin(), existing.end(),
                                    [&](const core::ChannelInfo& c) { return c.name == options.channels[i]; });
    if (found == existing.end()) continue;
    if (const std::string why = mismatch(*found, options); !why.empty())
      return refuse("channel '" + found->name + "' in " + where + " already exists with " + why +
                    "; ask for the same, or name another channel");
    missing[i] = false;
  }
  for (std::size_t i = 0; i < options.channels.size(); ++i) {
    if (!missing[i]) continue;
    core::ChannelSpec spec;
    spec.name = options.channels[i];
    spec.dtype = options.dtype;
    spec.rate_hz = options.rate_hz;
    spec.units = !options.units.empty() ? options.units : !core::dtype_is_integer(options.dtype) ? "V" : "counts";
    spec.labels = options.labels;
    spec.samples_per_block = options.block_samples;
    spec.ring_blocks = options.ring_blocks;
    spec.full_policy = options.full_policy;
    spec.wait_timeout_ns = options.wait_timeout_ns;
    if (auto created = core::create_channel(arena, spec); !created)
      return tl::make_unexpected(core::with_context(created.error(), "sim"));
  }

  std::vector<Lane> lanes;
  lanes.reserve(options.channels.size());
  for (std::size_t i = 0; i < options.channels.size(); ++i) {
    auto writer = core::ChannelWriter::open(arena, options.channels[i]);
    if (!writer) return tl::make_unexpected(core::with_context(writer.error(), "sim"));
    // Re-checked on the writer's own descriptor: another process may have created it meanwhile.
    const core::ChannelDesc& d = writer->desc();
    if (d.dtype != options.dtype || d.samples_per_block != options.block_samples)
      return refuse(fmt::format("channel '{}' in {} was created meanwhile with dtype {} and blocks of {} samples",
                                options.channels[i], where, core::dtype_name(d.dtype), d.samples_per_block));
    auto generator = SignalGenerator::create(signal_for(options, i), options.block_samples);
    if (!generator) return tl::make_unexpected(core::with_context(generator.error(), "sim"));
    SimChannelReport report;
    report.name = options.channels[i];
    report.created = missing[i];
    lanes.push_back(Lane{std::move(*writer), std::move(*generator), std::move(report)});
  }

  SimReport out;
  out.fast = options.fast;
  out.requested_rate_hz = options.rate_hz;
  const std::uint32_t block = options.block_samples;
  const double period_ns = static_cast<double>(block) * kNsPerSecond / options.rate_hz;
  const auto duration_ns = static_cast<std::int64_t>(options.duration_s * kNsPerSecond);
  const auto at = [period_ns](std::uint64_t k) { return std::llround(static_cast<double>(k) * period_ns); };
  const std::int64_t start_ns = core::monotonic_ns();
  const std::int64_t start_realtime_ns = core::realtime_ns();
  std::int64_t end_ns = start_ns;  // the end of the last tick: a wait cut short by stop is not counted

  for (std::uint64_t k = 0; options.max_blocks == 0 || k < options.max_blocks; ++k) {
    if (stop.load(std::memory_order_relaxed)) {  // a flag: nothing is ordered on it
      out.stopped = true;
      break;
    }
    std::uint64_t realtime_ns = 0, monotonic_ns = 0;  // 0: publish stamps "now" (fast mode)
    const std::int64_t deadline_ns = start_ns + at(k + 1);
    if (!options.fast) {
      if (duration_ns > 0 && at(k + 1) > duration_ns) break;  // the block would end after the duration
      if (core::sleep_until(deadline_ns, &stop, kStopPollNs) == core::SleepStatus::stopped) {
        out.stopped = true;
        break;
      }
      realtime_ns = static_cast<std::uint64_t>(start_realtime_ns + at(k));  // the block's first sample
      monotonic_ns = static_cast<std::uint64_t>(start_ns + at(k));
    } else if (duration_ns > 0 && core::monotonic_ns() - start_ns >= duration_ns) {
      break;
    }

    for (Lane& lane : lanes) {
      std::span<std::byte> slot;
      switch (lane.writer.claim(slot)) {
        case core::ClaimStatus::ok: {
          const FillResult filled = lane.generator.fill(options.dtype, slot, block, options.full_scale_v);
          lane.writer.publish(block, realtime_ns, monotonic_ns);
          ++lane.report.blocks_published;
          lane.report.samples_published += block;
          lane.report.samples_saturated += filled.saturated;
          break;
        }
        case core::ClaimStatus::dropped:
          lane.generator.skip(block);  // the source runs on: later samples stay where they belong
          ++lane.report.blocks_dropped;
          break;
      }
    }
    ++out.ticks;
    end_ns = core::monotonic_ns();

    if (!options.fast) {
      const std::int64_t late_ns = end_ns - deadline_ns;
      out.max_lateness_ns = std::max(out.max_lateness_ns, late_ns);
      if (static_cast<double>(late_ns) > period_ns) ++out.overruns;
    }
  }

  out.elapsed_s = static_cast<double>(end_ns - start_ns) / kNsPerSecond;
  if (out.elapsed_s > 0)
    out.achieved_rate_hz = static_cast<double>(out.ticks) * static_cast<double>(block) / out.elapsed_s;
  for (Lane& lane : lanes) {
    out.blocks_published += lane.report.blocks_published;
    out.samples_published += lane.report.samples_published;
    out.blocks_dropped += lane.report.blocks_dropped;
    out.samples_saturated += lane.report.samples_saturated;
    out.channels.push_back(std::move(lane.report));
  }
  out.blocks_attempted = out.ticks * lanes.size();
  return out;
}

}  // namespace weir::acq
