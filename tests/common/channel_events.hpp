#pragma once
// A channel read back as its readers see it: every block still in the ring, oldest first, as its
// samples or as a gap with the reason its writer gave (core::lost_reason of the lost status), and
// a short text of the whole for messages: "[1 2] timeout [4] late late [5 6]".
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "weir/core/channel.hpp"
#include "weir/core/gap_reason.hpp"

namespace weir::test {

struct ChannelEvent {
  bool gap = false;
  core::GapReason reason = core::GapReason::lapped;  // a gap's
  std::vector<double> samples;                       // a block's (f64 or f32 channels)
};

/// Reads the channel with a lossy ChannelReader from its oldest block to its head. Every block must
/// still be in the ring (a lap is a test failure: the ring was too small for what was read).
inline std::vector<ChannelEvent> read_events(const core::Arena& arena, const std::string& channel) {
  auto reader = core::ChannelReader::open(arena, channel, core::ConsumerPolicy::lossy, "test-events", core::StartAt::oldest);
  REQUIRE_MESSAGE(reader, (reader ? "" : reader.error().what));
  const core::Dtype dtype = reader->desc().dtype;
  REQUIRE((dtype == core::Dtype::f64 || dtype == core::Dtype::f32));
  std::vector<ChannelEvent> events;
  for (;;) {
    core::BlockView view;
    std::uint64_t lost = 0;
    const core::NextStatus status = reader->next(view, lost);
    if (status == core::NextStatus::empty) break;
    if (status == core::NextStatus::lost) {
      const core::GapReason reason = core::lost_reason(view.flags);
      REQUIRE_MESSAGE(reason != core::GapReason::lapped, "channel '" << channel << "': " << lost << " blocks lapped");
      for (std::uint64_t i = 0; i < lost; ++i) events.push_back({true, reason, {}});
      continue;
    }
    ChannelEvent e;
    for (std::uint32_t i = 0; i < view.samples; ++i) {
      if (dtype == core::Dtype::f64) {
        double v = 0;
        std::memcpy(&v, view.data + std::size_t{i} * sizeof v, sizeof v);
        e.samples.push_back(v);
      } else {
        float v = 0;
        std::memcpy(&v, view.data + std::size_t{i} * sizeof v, sizeof v);
        e.samples.push_back(v);
      }
    }
    REQUIRE(reader->done(view));
    events.push_back(std::move(e));
  }
  return events;
}

/// "[1 2] timeout [4]": blocks in brackets, gaps by their reason's name.
inline std::string describe(const std::vector<ChannelEvent>& events) {
  std::string out;
  for (const ChannelEvent& e : events) {
    if (!out.empty()) out += ' ';
    if (e.gap) {
      out += core::gap_reason_name(e.reason);
      continue;
    }
    out += '[';
    for (std::size_t i = 0; i < e.samples.size(); ++i) {
      char number[32];
      std::snprintf(number, sizeof number, "%s%g", i == 0 ? "" : " ", e.samples[i]);
      out += number;
    }
    out += ']';
  }
  return out;
}

}  // namespace weir::test
