#pragma once
// What the alert conditions read, copied out of the arena in one look: the figures `weir serve`'s
// /metrics exports (tools/serve/src/metrics.cpp) from the same places: channel descriptors and
// their newest blocks, consumer rows, the keys `weir run` keeps per part (weir.part.NAME.state,
// .restarts), drivers' <part>.accounting.<term>, recorders' <part>.handoff_failures, the last closed
// run's verdict (runctl::kClosedExactKey), the disks and the kernel's clock. Plain data: tests
// build it by hand.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "weir/core/arena.hpp"

namespace weir::alerts {

/// The key a recorder's hand-off counts its failed attempts under: `<part>.handoff_failures` (u64),
/// kept by the hand-off change of issue 45; the handoff_failing condition reads it.
inline constexpr const char* kHandoffFailuresSuffix = ".handoff_failures";

struct ConsumerFigures {
  std::string name;       // the row's name; "#ROW" when it has none
  bool alive = false;
  bool latest = false;    // policy "latest": skips ahead by design, never lagging
  std::uint64_t lag = 0;  // blocks published, not yet read
  std::uint64_t blocks_lost = 0;
};

struct ChannelFigures {
  std::string name;
  double rate_hz = 0;
  std::uint32_t samples_per_block = 0, ring_blocks = 0;
  bool active = false;     // a block was published; age_s and samples_per_s are known
  double age_s = 0;        // since the newest block (monotonic)
  double samples_per_s = 0;
  std::uint64_t dropped_at_source = 0;
  std::vector<ConsumerFigures> consumers;
};

struct PartFigures {
  std::string state;                 // "running", "given up", ...; "" when weir run keeps no state for it
  std::uint64_t restarts = 0;
  std::uint64_t lost_units = 0;      // sum of its accounting terms other than "recorded"
  std::optional<std::uint64_t> handoff_failures;
};

struct DiskFigures {
  bool known = false;  // statvfs answered
  std::uint64_t free_bytes = 0, size_bytes = 0;
};

struct Figures {
  std::vector<ChannelFigures> channels;
  std::map<std::string, PartFigures> parts;  // by part name
  std::map<std::string, DiskFigures> disks;  // by path
  std::optional<bool> run_exact;             // the last closed run balanced
  std::optional<bool> clock_synchronised;
};

/// Reads the figures now; `paths` are the filesystems to statvfs. Allocates; reads the arena only.
/// Thread: any (not a hot path: the alert evaluator's own thread).
[[nodiscard]] Figures read_figures(const core::Arena& arena, const std::vector<std::string>& paths);

}  // namespace weir::alerts
