// run_replay: channels checked and created, then one merged schedule of every selected channel's
// blocks, published on absolute CLOCK_MONOTONIC deadlines (as the simulator does) or flat out.
#include "weir/replay/replay.hpp"

#include <fnmatch.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "replay_channels.hpp"
#include "replay_keys.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/clock.hpp"

namespace weir::acq {

namespace {

constexpr double kNsPerSecond = 1e9;

using core::monotonic_ns;

// One block's or logged key value's place in the merged schedule: recorded times relative to the
// recording's start.
struct Event {
  std::int64_t first_ns;  // its first sample
  std::int64_t due_ns;    // its last sample: when it is published (a key's value: when it was logged)
  std::uint32_t lane;     // into the channel lanes, or the key lanes when key
  std::uint64_t block;    // the block, or the key's change
  bool key = false;
};

// Every block of every lane, and every logged value of every key lane, in publishing order. A
// channel's own blocks never reorder: its times are clamped so they never go back (segments from
// another boot), and the sort is stable. Keys are placed by realtime against the realtime of the
// earliest block; they come before blocks due at the same time (values logged before the first
// block: at once).
std::vector<Event> schedule(const std::vector<detail::Lane>& lanes, const std::vector<detail::KeyLane>& keys,
                            std::int64_t& span_ns) {
  std::uint64_t origin = UINT64_MAX, origin_realtime = 0;
  for (const detail::Lane& lane : lanes)
    if (!lane.channel->blocks.empty() && lane.channel->blocks.front().monotonic_ns < origin) {
      origin = lane.channel->blocks.front().monotonic_ns;
      origin_realtime = lane.channel->blocks.front().realtime_ns;
    }
  std::vector<Event> events;
  span_ns = 0;
  for (std::uint32_t k = 0; k < keys.size(); ++k) {
    const RecordedKey& key = *keys[k].key;
    for (std::uint64_t c = 0; c < key.changes.size(); ++c) {
      const std::uint64_t at = key.changes[c].realtime_ns;
      const auto due = at > origin_realtime ? static_cast<std::int64_t>(at - origin_realtime) : 0;
      events.push_back(Event{due, due, k, c, true});
      span_ns = std::max(span_ns, due);
    }
  }
  for (std::uint32_t l = 0; l < lanes.size(); ++l) {
    const RecordedChannel& c = *lanes[l].channel;
    std::int64_t first = 0, due = 0;
    for (std::uint64_t b = 0; b < c.blocks.size(); ++b) {
      const RecordedBlock& r = c.blocks[b];
      first = std::max(first, static_cast<std::int64_t>(r.monotonic_ns - origin));
      const auto duration =
          static_cast<std::int64_t>(std::llround(static_cast<double>(r.samples) * kNsPerSecond / c.rate_hz));
      due = std::max(due, first + duration);
      events.push_back(Event{first, due, l, b});
    }
    span_ns = std::max(span_ns, due);
  }
  if (origin == UINT64_MAX) {  // no block: keys alone take no time
    span_ns = 0;
    for (Event& e : events) e.first_ns = e.due_ns = 0;
  }
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.due_ns < b.due_ns; });
  return events;
}

bool selected(const std::string& name, const std::vector<std::string>& patterns) {
  if (patterns.empty()) return true;
  return std::any_of(patterns.begin(), patterns.end(),
                     [&](const std::string& p) { return fnmatch(p.c_str(), name.c_str(), 0) == 0; });
}

// Waits until every replayed channel has options.wait_consumers live lossless consumers (of
// options.wait_kind), the deadline, or a stop; fails naming the channels still short of them.
core::Result<void> wait_for_consumers(const core::Arena& arena, const std::vector<detail::Lane>& lanes,
                                      const ReplayOptions& options, const std::atomic<bool>& stop) {
  if (options.wait_consumers == 0) return {};
  const std::int64_t deadline = monotonic_ns() + options.wait_consumers_ns;
  constexpr std::int64_t kLookNs = 10'000'000;
  for (;;) {
    std::string short_of;
    const std::vector<core::ChannelInfo> channels = core::list_channels(arena);
    for (const detail::Lane& lane : lanes) {
      std::uint32_t ready = 0;
      for (const core::ChannelInfo& c : channels)
        if (c.name == lane.channel->name)
          for (const core::ConsumerInfo& k : c.consumers)
            ready += k.alive && k.policy == core::ConsumerPolicy::lossless &&
                     (options.wait_kind.empty() || k.kind == options.wait_kind);
      if (ready < options.wait_consumers)
        short_of += (short_of.empty() ? "" : ", ") + lane.channel->name + " (" + std::to_string(ready) + ")";
    }
    if (short_of.empty() || stop.load(std::memory_order_relaxed)) return {};
    if (monotonic_ns() >= deadline)
      return core::fail(core::Errc::not_found,
                        "replay: after " + std::to_string(options.wait_consumers_ns / 1'000'000'000) + " s, channels "
                            "still without " + std::to_string(options.wait_consumers) + " lossless " +
                            (options.wait_kind.empty() ? "" : "'" + options.wait_kind + "' ") + "consumer(s): " + short_of);
    (void)core::sleep_until(monotonic_ns() + kLookNs, &stop);
  }
}

}  // namespace

core::Result<ReplayReport> run_replay(const core::Arena& arena, const Recording& recording,
                                      const ReplayOptions& options, const std::atomic<bool>& stop) {
  if (!std::isfinite(options.speed) || options.speed < 0)
    return core::fail(core::Errc::invalid_argument, "replay: speed must be a positive number or max");
  std::vector<const RecordedChannel*> chosen;
  std::string names;
  for (const RecordedChannel& c : recording.channels) {
    names += (names.empty() ? "" : ", ") + c.name;
    if (selected(c.name, options.channels)) chosen.push_back(&c);
  }
  if (chosen.empty())
    return core::fail(core::Errc::invalid_argument,
                      "replay: no channel of the recording matches the patterns given (it has " + names + ")");
  std::vector<RecordedKey> logged;
  if (!options.keys.empty()) {
    auto keys = read_keys(recording);
    if (!keys) return tl::make_unexpected(keys.error());
    std::string key_names;
    for (RecordedKey& k : *keys) {
      key_names += (key_names.empty() ? "" : ", ") + k.name;
      if (selected(k.name, options.keys)) logged.push_back(std::move(k));
    }
    if (logged.empty())
      return core::fail(core::Errc::invalid_argument,
                        "replay: no logged key of the recording matches the --keys patterns given (it logs " +
                            (key_names.empty() ? std::string("none") : key_names) + ")");
  }
  auto lanes = detail::open_lanes(arena, recording, chosen, options);
  if (!lanes) return tl::make_unexpected(lanes.error());
  if (auto ready = wait_for_consumers(arena, *lanes, options, stop); !ready) return tl::make_unexpected(ready.error());
  std::vector<detail::KeyLane> key_lanes;
  key_lanes.reserve(logged.size());
  for (const RecordedKey& k : logged) key_lanes.emplace_back(arena, recording, k);

  ReplayReport report;
  for (const RecordedKey& k : logged) report.keys.push_back(k.name);
  report.files = recording.files;
  report.speed = options.speed;
  std::int64_t span_ns = 0;
  const std::vector<Event> events = schedule(*lanes, key_lanes, span_ns);
  report.recorded_s = static_cast<double>(span_ns) / kNsPerSecond;
  const bool paced = options.speed > 0;
  const auto scaled = [&](std::int64_t ns) {
    return static_cast<std::int64_t>(std::llround(static_cast<double>(ns) / options.speed));
  };
  const std::int64_t start_ns = monotonic_ns();
  std::int64_t end_ns = start_ns;

  // Without blocks a pass takes no time: looping would spin, so one pass publishes the gaps and ends.
  const bool loop = options.loop && std::any_of(events.begin(), events.end(), [](const Event& e) { return !e.key; });
  for (std::uint64_t pass = 0; !report.stopped; ++pass) {
    if (loop && options.max_loops != 0 && pass == options.max_loops) break;
    if (!loop && pass == 1) break;
    const std::int64_t pass_ns = static_cast<std::int64_t>(pass) * span_ns;  // recorded time of this pass's start
    for (const Event& e : events) {
      if (stop.load(std::memory_order_relaxed)) {  // a flag: nothing is ordered on it
        report.stopped = true;
        break;
      }
      std::uint64_t monotonic = 0;  // 0: publish stamps "now" (max speed)
      if (paced) {
        const std::int64_t deadline = start_ns + scaled(pass_ns + e.due_ns);
        if (core::sleep_until(deadline, &stop, kReplayStopPollNs) == core::SleepStatus::stopped) {
          report.stopped = true;
          break;
        }
        report.max_lateness_ns = std::max(report.max_lateness_ns, monotonic_ns() - deadline);
        monotonic = static_cast<std::uint64_t>(start_ns + scaled(pass_ns + e.first_ns));
      }
      if (e.key) {
        auto status = key_lanes[e.lane].write(e.block);
        if (!status) return tl::make_unexpected(status.error());
        if (*status == core::KvStatus::ok) {
          ++report.keys_written;
        } else if (report.keys_failed++ == 0) {
          report.key_failure = "key '" + key_lanes[e.lane].key->name + "': " + core::kv_status_text(*status);
        }
        continue;
      }
      const auto realtime_shift = static_cast<std::uint64_t>(pass_ns);
      if (auto ok = (*lanes)[e.lane].publish(e.block, realtime_shift, monotonic, options.read_bytes); !ok)
        return tl::make_unexpected(ok.error());
    }
    if (report.stopped) break;
    for (detail::Lane& lane : *lanes) lane.end_pass();
    end_ns = monotonic_ns();
    ++report.loops;
  }
  if (report.stopped) end_ns = monotonic_ns();

  report.elapsed_s = static_cast<double>(end_ns - start_ns) / kNsPerSecond;
  for (detail::Lane& lane : *lanes) {
    report.blocks_published += lane.report.blocks_published;
    report.samples_published += lane.report.samples_published;
    report.blocks_dropped += lane.report.blocks_dropped;
    report.blocks_missing += lane.report.blocks_missing;
    report.channels.push_back(lane.report);
  }
  return report;
}

}  // namespace weir::acq
