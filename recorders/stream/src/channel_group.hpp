#pragma once
// One channel in one segment: /entry/<channel> (NXdata) with its data, the per-block tables and
// the gaps table (docs/design/recording.md). Blocks are staged by the recorder's loop and reach
// HDF5 a chunk at a time; flush() hands over the rest.
#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

#include "column.hpp"
#include "encode_pool.hpp"
#include "event_group.hpp"
#include "pv_log_group.hpp"
#include "weir/core/arena_layout.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/error.hpp"
#include "weir/h5/handle.hpp"
#include "weir/h5/recording_format.hpp"
#include "weir/recorder/format.hpp"

namespace weir::rec {

using h5::GapReason;
using h5::GapRow;

/// What a channel is, copied from its descriptor when a segment opens.
struct ChannelStatic {
  std::string name;
  core::Dtype dtype = core::Dtype::f32;
  std::uint32_t sample_bytes = 0;
  double rate_hz = 0;
  std::string units;
  std::string labels;  // comma-separated
  std::uint32_t samples_per_block = 0;
  std::uint32_t ring_blocks = 0;
  std::string policy;  // the recorder's consumer policy
  core::FrameShape frame;  // framed: data is frames x frame_elements (format 1.2)
  codec::Codec codec{};    // of the data chunks (none: stored as they are)
  PvLogSource* pv_log = nullptr;  // a PV log channel's meta and carried entries (the recorder's); null: no NXlogs
};

/// A block's metadata for the tables.
struct BlockMeta {
  std::uint64_t sequence = 0;
  std::uint32_t samples = 0;
  std::uint32_t flags = 0;
  std::uint64_t realtime_ns = 0;
  std::uint64_t monotonic_ns = 0;
  std::uint64_t first_sample = 0;  // the channel-stream index of its first sample
};

class ChannelGroup {
 public:
  /// Creates the group, its datasets and attributes under `entry`. Data chunks hold a whole
  /// number of blocks, about kTargetChunkBytes (see chunk_blocks()). start_ns: the segment's start,
  /// the origin of the time axis. direct_chunks: whole uncompressed data chunks go to the file by
  /// H5Dwrite_chunk (false: every chunk through H5Dwrite, as tests and benchmarks compare). With a
  /// codec (channel.codec), data chunks are encoded by `pool` (required then).
  [[nodiscard]] static core::Result<ChannelGroup> create(hid_t entry, const ChannelStatic& channel, EncodePool* pool,
                                                         std::uint64_t start_ns, const std::string& file,
                                                         bool direct_chunks = true);

  /// Room for one block's samples (samples_per_block of them). Hot path.
  [[nodiscard]] std::byte* stage_samples() noexcept { return data_.stage_end(); }
  /// Adds the staged block (its samples copied to stage_samples()) and its table row, and a
  /// clock_steps row when its realtime stamp is earlier than the previous block's (the clock
  /// stepped back). Hot path: no allocation; then call write_pending() when pending() says so.
  void commit_block(const BlockMeta& meta) noexcept;
  [[nodiscard]] bool pending() const noexcept;
  /// Writes the first block's attributes and whole chunks that are ready. Cold path.
  [[nodiscard]] core::Result<void> write_pending();
  /// Stages a gap row; it reaches the file with the blocks around it (a flush or a full chunk of
  /// rows). A row that continues the segment's last row (same reason, the next sequence) extends it
  /// instead, even when that row is in the file already (it is rewritten at the next write): one
  /// row per contiguous run (markers and dropped_at_source rows never merge). Returns whether a new
  /// row was added. Hot path: no allocation, no HDF5 call; then write_pending() when pending() says so.
  bool add_gap(const GapRow& row) noexcept;
  /// Hands the staged gap rows to HDF5 now (the last act on a file a failed write ends).
  [[nodiscard]] core::Result<void> write_gaps();
  /// Hands every staged sample and row to HDF5 (data, then tables, then gaps).
  /// `final`: the segment's last flush (its close): PV logs hand over everything (else their
  /// partial chunks only every kPvLogPartialEveryNs).
  [[nodiscard]] core::Result<void> flush(bool final = false);

  [[nodiscard]] const ChannelStatic& channel() const noexcept { return channel_; }
  [[nodiscard]] std::uint64_t blocks() const noexcept { return sequence_.size(); }
  [[nodiscard]] std::uint64_t blocks_written() const noexcept { return sequence_.written(); }
  [[nodiscard]] std::uint64_t gap_rows() const noexcept { return gaps_.size(); }
  [[nodiscard]] bool any_block() const noexcept { return any_block_; }
  [[nodiscard]] std::uint64_t first_realtime_ns() const noexcept { return first_.realtime_ns; }  // any_block()
  [[nodiscard]] std::uint64_t last_realtime_ns() const noexcept { return last_realtime_ns_; }    // any_block()
  /// Samples of the blocks committed (a short block's padding not counted).
  [[nodiscard]] std::uint64_t samples() const noexcept { return samples_committed_; }
  /// Samples of the blocks whose table rows HDF5 has.
  [[nodiscard]] std::uint64_t samples_written() const noexcept;
  [[nodiscard]] std::uint64_t chunk_blocks() const noexcept { return chunk_blocks_; }
  /// Bytes handed to HDF5 so far: table rows, and samples when uncompressed (compressed sizes are
  /// only known to the file). HDF5 under SWMR holds a dataset's first chunks back from the file
  /// for a while, so this sees growth the file size does not yet show.
  [[nodiscard]] std::uint64_t bytes_written() const noexcept;
  /// Uncompressed bytes of everything committed: data rows, time values, table and gap rows.
  [[nodiscard]] std::uint64_t committed_bytes() const noexcept;
  /// What one more whole block adds to committed_bytes().
  [[nodiscard]] std::uint64_t block_bytes() const noexcept;
  /// Notes a successful file flush: every row handed over so far is on disk.
  void mark_durable() noexcept;
  /// After a failed write: shrinks every dataset back to the last flush (best effort) and returns
  /// the first block sequence the file no longer holds (next_sequence when it holds none of this
  /// segment's blocks... and none were staged).
  std::uint64_t roll_back(std::uint64_t next_sequence) noexcept;
  [[nodiscard]] std::uint64_t last_sequence() const noexcept { return last_sequence_; }
  [[nodiscard]] std::uint64_t clock_steps() const noexcept { return steps_.size(); }
  /// A PV log channel: logs the entries the last segment could not (PvLogGroup::log_carried).
  void log_carried() {
    if (pv_logs_.valid()) pv_logs_.log_carried();
  }
  /// A PV log channel's entries call for a new segment (PvLogGroup::wants_new_file).
  [[nodiscard]] bool wants_new_file() const noexcept { return pv_logs_.valid() && pv_logs_.wants_new_file(); }
  /// Rows of the PV logs in this segment (0 for other channels).
  [[nodiscard]] std::uint64_t pv_log_rows() const noexcept { return pv_logs_.valid() ? pv_logs_.rows() : 0; }

 private:
  ChannelGroup() = default;
  [[nodiscard]] core::Result<void> write_first_block_attrs();
  /// Rewrites data's clock attribute when the blocks seen so far say more than it does.
  [[nodiscard]] core::Result<void> write_clock();
  [[nodiscard]] core::Result<void> write_tables(bool partial);
  [[nodiscard]] core::Result<void> write_axes(const std::string& second_axis);

  ChannelStatic channel_;
  std::string what_;
  h5::Group group_;
  std::uint64_t start_ns_ = 0;
  std::uint64_t origin_ns_ = 0;  // of the time axis: start_ns_, or the first block's stamp when earlier
  h5::Type sample_type_, gap_file_type_, gap_mem_type_, step_file_type_, step_mem_type_;
  EventGroup events_;  // an event channel's NXevent_data (none for others)
  PvLogGroup pv_logs_;  // a PV log channel's NXlogs (none for others)
  Column data_, time_, sequence_, offset_, samples_, realtime_, monotonic_, flags_, gaps_, steps_;
  std::uint64_t chunk_blocks_ = 0;
  std::uint64_t row_elements_ = 1;  // samples in one row of data: frame_elements when framed, else samples_per_block
  std::uint32_t rows_per_block_ = 1;  // most rows one block adds
  double row_seconds_ = 0;            // from one row's first sample to the next row's
  bool framed_ = false;
  std::vector<std::byte> pad_;        // one sample of a short block's padding
  std::uint64_t samples_committed_ = 0;
  std::uint64_t samples_durable_ = 0;  // samples of the blocks the last flush made durable
  bool compressed_ = false;
  std::uint64_t handed_last_sequence_ = 0;  // sequence of the last row handed to HDF5
  std::uint64_t durable_next_ = 0;          // sequence after the last row the last flush made durable
  bool any_durable_ = false;
  BlockMeta first_{};
  bool first_pending_ = false;
  bool any_block_ = false;
  std::uint64_t last_sequence_ = 0;
  std::uint64_t last_realtime_ns_ = 0;  // the previous block's stamp
  static constexpr std::uint8_t kSawSourceClock = 1;  // clock_seen_: a block with core::kBlockSourceTimeFlag
  static constexpr std::uint8_t kSawHostClock = 2;    // ... one without
  std::uint8_t clock_seen_ = 0;                       // of this segment's blocks
  std::uint8_t clock_written_ = 0;                    // what data's clock attribute says
  GapRow last_gap_{};                                 // the last gaps row, as it is now (run-length)
  bool has_last_gap_ = false;
};

}  // namespace weir::rec
