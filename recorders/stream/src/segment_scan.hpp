#pragma once
// Reading back what earlier segments of a run say about themselves (who wrote them, whether they
// were closed cleanly, the last block of each channel), and clearing the "open for SWMR write"
// marks a killed recorder leaves in its file.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "weir/core/error.hpp"
#include "weir/recorder/repair.hpp"

namespace weir::rec {

struct ChannelEnd {
  std::string channel;
  std::uint64_t blocks = 0;         // rows in block_sequence
  std::uint64_t last_sequence = 0;  // valid when blocks > 0
  std::uint64_t end = 0;            // one past the last sequence the file accounts for: its blocks and its
                                    // gap rows that carry sequences (not dropped_at_source, not markers)
  bool any = false;                 // the file accounts for at least one sequence of the channel
};

struct SegmentInfo {
  std::filesystem::path path;
  bool marked = false;   // HDF5's superblock still says a SWMR writer has it open
  bool stopped = false;  // stop_time was written: closed cleanly
  std::uint64_t run = 0, segment = 0;
  std::string host;
  std::uint32_t recorder_pid = 0;
  std::uint64_t recorder_start_ticks = 0;
  std::uint64_t arena_created_ns = 0;
  std::vector<ChannelEnd> channels;
};

/// Opens a segment read-only (as a SWMR reader when it is still marked) and reads its facts.
/// Fails naming the file when it is not a weir recording of a known format major.
[[nodiscard]] core::Result<SegmentInfo> read_segment(const std::filesystem::path& path);

/// Clears the superblock's write marks of a file whose writer is gone (h5::clear_swmr_marks, what
/// `h5clear -s` does), so tools that do not open it as SWMR readers (h5dump, h5py without
/// swmr=True) can. Requires: no process writes the file.
[[nodiscard]] core::Result<void> clear_marks(const std::filesystem::path& path);

/// Why a marked segment's writer may still be writing it ("" when it is gone): another host's
/// recorder cannot be checked; this host's is alive when its pid and start time name a live process.
[[nodiscard]] std::string live_writer(const SegmentInfo& info, const std::string& this_host);

}  // namespace weir::rec
