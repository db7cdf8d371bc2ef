#pragma once
// One recording file's ledger facts, read tolerantly: its root attributes, each channel's block
// sequences and flags and its gap rows, and whether it still carries a SWMR writer's marks. Unlike
// open_recording, nothing is refused for what the ledger must report (sequences that repeat or go
// back, files of several runs): only a file that is not a readable recording at all. The file is
// opened read-only and never modified. Layout: docs/design/recording.md.
#include <cstdint>
#include <string>
#include <vector>

#include "weir/core/error.hpp"
#include "weir/h5/recording_format.hpp"

namespace weir::h5 {

/// One row of a channel's gaps table, its reason looked up by name in the table's reason_names.
struct SegmentGap {
  std::uint64_t sequence = 0;
  std::uint64_t blocks = 0;
  std::uint64_t realtime_ns = 0;
  std::uint32_t reason = 0;  // GapReason; kGapReasonCount or more: a name this build does not know
};

/// One channel of one file: the rows of its block tables that count (the first n, n the shortest
/// table's length, up to the first kUnwrittenSequence) and its written gap rows.
struct SegmentChannel {
  std::string name;                     // the group's `channel` attribute (its link when absent)
  std::vector<std::uint64_t> sequence;  // block_sequence
  std::vector<std::uint32_t> flags;     // block_flags, as many as sequence
  std::vector<SegmentGap> gaps;
};

struct SegmentTables {
  std::uint64_t run = 0;
  std::uint64_t segment = 0;
  std::string arena;
  std::uint64_t arena_created_ns = 0;  // 0 when the file does not say
  std::uint64_t stop_ns = 0;           // 0: not closed cleanly
  bool stopped = false;                // stop_time (or stop_ns) set: closed by its recorder
  bool swmr_marked = false;            // a SWMR writer's marks (a killed or live recorder's file)
  std::vector<SegmentChannel> channels;  // in link order
};

/// Reads one file's ledger facts. Fails naming the file when it is missing, not HDF5, not of the
/// recording format (checked as check_format does), or a channel's tables cannot be read.
/// Thread: one per process (serial HDF5).
[[nodiscard]] core::Result<SegmentTables> read_segment_tables(const std::string& path);

}  // namespace weir::h5
