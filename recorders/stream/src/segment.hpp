#pragma once
// One recording file (a segment of a run): creates the whole layout of docs/design/recording.md,
// switches SWMR writing on, and closes with stop_time. SWMR cannot add objects later, so every
// channel and key the segment will hold is named at create.
#include <hdf5.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "channel_group.hpp"
#include "entry_fields.hpp"
#include "host_clock.hpp"
#include "key_log.hpp"
#include "weir/core/error.hpp"
#include "weir/h5/handle.hpp"

namespace weir::rec {

/// The root attributes of a segment.
struct SegmentMeta {
  std::uint64_t run = 0;
  std::uint64_t segment = 0;
  std::uint64_t start_ns = 0;
  std::string host;
  std::string arena;
  std::string arena_geometry;
  std::uint64_t arena_created_ns = 0;
  std::string pipeline;
  const NexusMeta* nexus = nullptr;  // the pipeline's NeXus metadata; null: defaults
  std::uint32_t recorder_pid = 0;
  std::uint64_t recorder_start_ticks = 0;
  HostClock clock;  // the host clock's state as the segment opens
};

class Segment {
 public:
  /// Creates the file (never over an existing one: fails with already_exists), every group,
  /// dataset and attribute, /entry/clock with its first offsets row, then starts SWMR writing and
  /// flushes. direct_chunks: as ChannelGroup::create.
  [[nodiscard]] static core::Result<Segment> create(const std::filesystem::path& path, const SegmentMeta& meta,
                                                    const std::vector<ChannelStatic>& channels,
                                                    const std::vector<KeySpec>& keys, EncodePool* pool,
                                                    bool direct_chunks = true);
  Segment() = default;

  [[nodiscard]] ChannelGroup& channel(std::size_t i) noexcept { return channels_[i]; }
  [[nodiscard]] const ChannelGroup& channel(std::size_t i) const noexcept { return channels_[i]; }
  [[nodiscard]] KeyLog& key(std::size_t i) noexcept { return keys_[i]; }
  [[nodiscard]] std::size_t channel_count() const noexcept { return channels_.size(); }
  [[nodiscard]] std::size_t key_count() const noexcept { return keys_.size(); }

  /// Hands everything staged to HDF5 and flushes the file (H5Fflush): a crash after this keeps it.
  /// `final`: the last one, at close (PV logs' partial chunks then, whatever their period).
  [[nodiscard]] core::Result<void> flush(bool final = false);
  /// A clock offsets row (the segment's close), flush(), stop_time, close. A failure still closes
  /// the file. keep_fd: receives a duplicate of the file's descriptor (taken before the close; -1
  /// when there is none), so the caller can fsync the very file it wrote whatever its path names now.
  [[nodiscard]] core::Result<void> close(std::uint64_t stop_ns, int* keep_fd = nullptr);
  /// After a write failure: every key log back to the last flush (channels: ChannelGroup::roll_back).
  void roll_back_keys() noexcept;
  /// fsync(2) of the open file (what flush() handed over reaches the disk). Fails naming the file and
  /// the errno ("errno = N").
  [[nodiscard]] core::Result<void> sync();
  /// A duplicate of the open file's descriptor (to fsync it from another thread), -1 when none.
  [[nodiscard]] int duplicate_fd() const noexcept;
  /// The file now has this name (renamed while open): messages and path() name it.
  void renamed(const std::filesystem::path& path) { path_ = path; }
  /// Closes without writing anything more (after a write failure). Returns what closing reported.
  [[nodiscard]] core::Result<void> abandon();

  [[nodiscard]] bool is_open() const noexcept { return file_.valid(); }
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
  [[nodiscard]] std::uint64_t file_bytes() const noexcept;
  /// What the file holds or will hold once HDF5 has written out what it was handed: the larger of
  /// the file's size and the bytes handed to it. Rotation by size and the free-space checks use it.
  [[nodiscard]] std::uint64_t bytes() const noexcept;
  /// The channels' payload committed so far (data rows, time values, table and gap rows, staged
  /// or handed over), uncompressed: what rotation by size counts, independent of when HDF5 writes.
  [[nodiscard]] std::uint64_t committed_bytes() const noexcept;
  [[nodiscard]] bool compressed() const noexcept { return compressed_; }
  [[nodiscard]] std::uint64_t start_ns() const noexcept { return start_ns_; }

 private:
  [[nodiscard]] core::Result<void> close_file();

  std::filesystem::path path_;
  std::uint64_t start_ns_ = 0;
  bool compressed_ = false;
  h5::File file_;
  [[nodiscard]] core::Result<void> create_clock(const HostClock& clock);
  void add_clock_offset(std::uint8_t event) noexcept;

  /// An NXdata of an array key against its axis key (recording_format.hpp, "Array keys").
  struct ArrayPlot {
    std::size_t signal = 0, axis = 0, units = 0;  // key logs; units == keys_.size(): none
    std::string axis_name, axis_key, what;
    h5::Group group;
    h5::Dataset counts, axis_values;
    std::uint64_t signal_rows = 0, axis_rows = 0;  // the logs' rows when last written
    std::string units_text;
    bool units_written = false;
  };
  [[nodiscard]] core::Result<void> create_plots(const std::vector<ChannelStatic>& channels, const std::vector<KeySpec>& specs);
  [[nodiscard]] core::Result<void> write_plots();

  /// /entry/start_time and end_time from the blocks so far; without a block, stop_ns (0: not yet).
  [[nodiscard]] core::Result<void> write_entry_times(std::uint64_t stop_ns);

  h5::Group entry_, keys_group_, clock_group_;
  EntryFields entry_fields_;
  h5::Type offset_file_type_, offset_mem_type_;
  Column clock_offsets_;
  std::vector<ChannelGroup> channels_;
  std::vector<KeyLog> keys_;
  std::vector<ArrayPlot> plots_;
};

}  // namespace weir::rec
