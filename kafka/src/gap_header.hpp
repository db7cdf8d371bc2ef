#pragma once
// The "weir.gaps" Kafka header: the runs of blocks a sender did not send before the message that
// carries it, as "FIRST:COUNT:REASON" joined by ',' (FIRST a block sequence, REASON a gap reason's
// name), in sequence order and back to back: the last run ends at the message's counter. Private to
// the kafka module.
#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "weir/core/gap_reason.hpp"

namespace weir::kafka {

inline constexpr const char* kGapHeader = "weir.gaps";
inline constexpr std::size_t kMaxGapRuns = 64;  // more alternations than this merge into the last run

struct GapRun {
  std::uint64_t first = 0, count = 0;
  core::GapReason reason = core::GapReason::source_loss;
};

/// Adds `count` blocks from `first` for `reason`: joins the last run when it is contiguous and of the
/// same reason (or when kMaxGapRuns runs are pending). Cold path (runs are rare). Thread: one.
inline void add_run(std::vector<GapRun>& runs, std::uint64_t first, std::uint64_t count, core::GapReason reason) {
  if (count == 0) return;
  if (!runs.empty() && runs.back().first + runs.back().count == first &&
      (runs.back().reason == reason || runs.size() >= kMaxGapRuns)) {
    runs.back().count += count;
    return;
  }
  runs.push_back({first, count, reason});
}

inline std::string format_runs(const std::vector<GapRun>& runs) {
  std::string out;
  for (const GapRun& r : runs) {
    if (!out.empty()) out += ',';
    out += std::to_string(r.first) + ':' + std::to_string(r.count) + ':' + std::string(core::gap_reason_name(r.reason));
  }
  return out;
}

/// The runs in a header's value; false (runs cleared) when it does not parse.
inline bool parse_runs(std::string_view text, std::vector<GapRun>& runs) {
  runs.clear();
  while (!text.empty()) {
    const std::size_t end = text.find(',');
    const std::string_view item = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    const std::size_t a = item.find(':');
    const std::size_t b = a == std::string_view::npos ? a : item.find(':', a + 1);
    GapRun r;
    if (b == std::string_view::npos ||
        std::from_chars(item.data(), item.data() + a, r.first).ec != std::errc() ||
        std::from_chars(item.data() + a + 1, item.data() + b, r.count).ec != std::errc() ||
        !core::parse_gap_reason(item.substr(b + 1), r.reason)) {
      runs.clear();
      return false;
    }
    runs.push_back(r);
  }
  return true;
}

}  // namespace weir::kafka
