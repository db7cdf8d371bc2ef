#pragma once
// For the recorder's ledger tests: a run's files and its run record, read back and checked to account
// for every block of a channel exactly once.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "harness.hpp"
#include "weir/ledger/run_record.hpp"

namespace weir::test {

/// The run record of run `run` of `arena` in dir (it must exist and read).
inline ledger::RunRecord run_record(const std::filesystem::path& dir, const std::string& arena, std::uint64_t run) {
  auto r = ledger::read_run_record(ledger::run_record_path(dir, arena, run));
  REQUIRE_MESSAGE(r, (r ? "" : r.error().what));
  REQUIRE_MESSAGE(r->has_value(), "no run record for run " << run << " of " << arena << " in " << dir.string());
  return std::move(**r);
}

/// What the files say about one channel: blocks recorded, and gap rows (markers and
/// dropped_at_source rows, which carry no sequences, aside).
struct ChannelLedger {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> spans;  // [first, last] of blocks and of gap rows
  std::vector<GapFact> rows;                                   // every gap row, in file order
  std::uint64_t recorded = 0;
};

inline ChannelLedger channel_ledger(const std::vector<Facts>& files, const std::string& channel) {
  ChannelLedger l;
  for (const Facts& f : files) {
    INFO(f.exit.out << f.exit.err);
    REQUIRE(f.ok());
    const auto seqs = f.seqs.find(channel);
    if (seqs == f.seqs.end()) continue;
    for (const auto& [first, last] : parse_ranges(seqs->second)) {
      l.spans.emplace_back(first, last);
      l.recorded += last - first + 1;
    }
    for (const GapFact& g : f.gaps) {
      if (g.channel != channel) continue;
      l.rows.push_back(g);
      if (g.blocks > 0 && g.reason != "dropped_at_source") l.spans.emplace_back(g.sequence, g.sequence + g.blocks - 1);
    }
  }
  std::sort(l.spans.begin(), l.spans.end());
  return l;
}

/// Checks that the blocks and gap rows tile [first, end) exactly: no overlap (nothing twice), no hole.
inline void check_tiles(const ChannelLedger& l, std::uint64_t first, std::uint64_t end) {
  std::uint64_t next = first;
  for (const auto& [from, to] : l.spans) {
    CHECK_MESSAGE(from == next, "blocks or gap rows at " << from << "-" << to << ", expected the next at " << next);
    next = std::max(next, to + 1);
  }
  CHECK(next == end);
}

/// The rows of one reason.
inline std::vector<GapFact> rows_of(const ChannelLedger& l, const std::string& reason) {
  std::vector<GapFact> out;
  for (const GapFact& g : l.rows)
    if (g.reason == reason) out.push_back(g);
  return out;
}

}  // namespace weir::test
