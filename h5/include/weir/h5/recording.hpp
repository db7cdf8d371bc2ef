#pragma once
// The recording reader: the files of one run (docs/design/recording.md, format 1.x, names in
// recording_format.hpp), checked and indexed. Holds every channel's metadata and block index;
// samples stay in the files and are read a batch at a time (SampleReader).
#include <hdf5.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "weir/core/arena_layout.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/error.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/h5/handle.hpp"
#include "weir/h5/recording_format.hpp"

namespace weir::h5 {

/// One recorded block, in recording order across the files.
struct RecordedBlock {
  std::uint64_t sequence = 0;  // the recording writer's block sequence number
  std::uint64_t realtime_ns = 0;
  std::uint64_t monotonic_ns = 0;
  std::uint64_t offset = 0;          // index in its file's `data` of the block's first sample
  std::uint64_t missing_before = 0;  // blocks the recording lost right before this one
  std::uint32_t samples = 0;
  std::uint32_t flags = 0;
  std::uint32_t file = 0;  // index into Recording::files
};

/// One row of a file's gaps table that stands for lost sequence numbers (dropped_at_source rows do
/// not: those blocks never got one, and are only counted in RecordedChannel::dropped_at_source).
struct RecordedGap {
  std::uint64_t sequence = 0;  // first missing block
  std::uint64_t blocks = 0;
  std::uint64_t realtime_ns = 0;
  std::uint32_t reason = 0;  // index into kGapReasonNames (GapReason)
  std::uint32_t file = 0;
};

struct RecordedChannel {
  std::string name;  // the channel's name (the group's `channel` attribute)
  std::string link;  // its group's name under /entry, escaped as the format says
  core::Dtype dtype = core::Dtype::f32;
  double rate_hz = 0;
  std::string units;
  std::vector<std::string> labels;
  std::uint32_t samples_per_block = 0;
  core::FrameShape frame;  // a frame channel's shape and axis (format 1.2); plain samples otherwise
  std::vector<RecordedBlock> blocks;
  std::vector<RecordedGap> gaps;        // every such gap row of every file, in file order
  std::uint64_t missing_after = 0;      // gap rows past the last block (the recording ended inside a gap)
  std::uint64_t gap_row_blocks = 0;     // blocks the gap rows account for
  std::uint64_t dropped_at_source = 0;  // blocks the writer dropped while recorded (no sequence numbers)
  std::uint64_t samples = 0;            // total over blocks
  /// Blocks the recording lost: before, between and after its blocks.
  [[nodiscard]] std::uint64_t missing() const noexcept;
};

struct Recording {
  std::vector<std::string> files;
  std::vector<RecordedChannel> channels;  // in order of first appearance
  std::string arena;                      // the first file's arena attribute
};

/// Refuses a file (an open HDF5 file id) without weir_format, of another format, or of another
/// major version, naming `path`. Thread: one per process (serial HDF5).
[[nodiscard]] core::Result<void> check_format(hid_t file, const std::string& path);

/// Opens, checks and indexes the files of one run, in the order given (a rotated run's segments).
/// As the format says, the tables are authoritative: of tables of different lengths (a killed
/// recorder's file) the first n rows count, n the shortest, up to the first unwritten row.
/// Refuses, naming the file and what is wrong: a missing or unreadable file, one that is not HDF5,
/// one without weir_format or with another format or major version, a channel lacking a dataset or
/// an attribute of the format, blocks outside `data`, sequence numbers that do not increase (also
/// across files of one arena incarnation: `arena_created_ns`), a channel whose dtype, block size or
/// rate changes between files, and a run without channels. Thread: one per process (serial HDF5).
[[nodiscard]] core::Result<Recording> open_recording(std::span<const std::string> files);

/// One file's log of a key (/entry/keys/<link>): how its values are stored there.
struct RecordedKeyLog {
  std::uint32_t file = 0;  // index into Recording::files
  std::string link;        // the log group's name under /entry/keys
  core::ValueType type = core::ValueType::f64;  // f64 (numbers), text, or array (format 1.2)
  core::ArrayShape array;                       // an array log's element dtype and shape
};

/// One logged value of a key: when, and where it is stored.
struct RecordedKeyChange {
  std::uint64_t realtime_ns = 0;  // the file's start_ns + time
  std::uint32_t log = 0;          // index into RecordedKey::logs
  std::uint64_t row = 0;          // row of that log's `value`
};

/// A key logged by a recording: its logs (one per file that has it) and every logged value, in
/// file order. The values stay in the files (KeyReader).
struct RecordedKey {
  std::string name;  // the log group's `key` attribute
  std::vector<RecordedKeyLog> logs;
  std::vector<RecordedKeyChange> changes;
};

/// The keys the files of `recording` log under /entry/keys, in order of first appearance. Refuses,
/// naming the file and the log, a log whose time or value is missing or unreadable, an array log
/// without its dtype or shape, and (when a file logs keys) a file without start_ns. A log's rows
/// are the first n of time and value, n the shorter. Thread: one per process (serial HDF5).
[[nodiscard]] core::Result<std::vector<RecordedKey>> read_keys(const Recording& recording);

/// One logged value as bytes: a f64, text (UTF-8, no NUL), or an array's elements in its dtype.
struct KeyValue {
  core::ValueType type = core::ValueType::f64;
  core::ArrayShape array;           // for an array value
  std::span<const std::byte> data;  // valid until the reader's next call
};

/// Reads a key's logged values, one at a time: keeps its current log's `value` open and nothing
/// else. Thread: one per process (serial HDF5).
class KeyReader {
 public:
  KeyReader(const Recording& recording, const RecordedKey& key);

  /// The value of change `index` of the key.
  [[nodiscard]] core::Result<KeyValue> value(std::uint64_t index);

 private:
  const Recording* recording_;
  const RecordedKey* key_;
  Dataset value_;  // `value` of log open_log_
  std::uint32_t open_log_ = UINT32_MAX;
  std::vector<std::byte> staged_;
};

/// Reads blocks' samples out of a recording's files, a batch at a time, for one channel: keeps its
/// current file's `data` open and nothing else. Thread: one per process (serial HDF5).
class SampleReader {
 public:
  SampleReader(const Recording& recording, const RecordedChannel& channel);

  /// Makes block `index` available (reading it and the blocks after it in the same file, up to
  /// `batch_bytes` or one block, whichever is more) and returns its samples as bytes.
  [[nodiscard]] core::Result<std::span<const std::byte>> block(std::uint64_t index, std::uint64_t batch_bytes);

 private:
  [[nodiscard]] core::Result<void> load(std::uint64_t index, std::uint64_t batch_bytes);

  const Recording* recording_;
  const RecordedChannel* channel_;
  std::uint32_t sample_bytes_ = 0;
  Type memory_type_;
  Dataset data_;  // `data` of the file open_file_
  std::uint32_t open_file_ = UINT32_MAX;
  std::vector<std::byte> staged_;  // samples of blocks [first_, end_)
  std::uint64_t first_ = 0, end_ = 0;
};

}  // namespace weir::h5
