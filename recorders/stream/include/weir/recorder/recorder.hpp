#pragma once
// The streaming recorder: follows an arena's channels (as a registered consumer each) and keys,
// and writes them into SWMR HDF5 segments, rotating by size, time, request or a new channel.
// File format: docs/design/recording.md. Usage and guarantees: recorders/stream/README.md.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "weir/codec/codec.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/arena_layout.hpp"
#include "weir/core/error.hpp"
#include "weir/core/run_control.hpp"
#include "weir/h5/recording_format.hpp"
#include "weir/recorder/format.hpp"
#include "weir/recorder/nexus_meta.hpp"
#include "weir/recorder/retention.hpp"

namespace weir::rec {

/// Durability (docs/design/recording.md, "Durability"): when the recorder fsyncs its files.
enum class FsyncPolicy : std::uint8_t {
  rotation,  // each closed file and its directory entry (the default)
  interval,  // as rotation, and the open file every fsync_interval_s after a flush
  never,     // the kernel's own write-back only
};
[[nodiscard]] std::string_view fsync_name(FsyncPolicy policy) noexcept;
/// "rotation", "interval" or "never"; fails naming the text otherwise.
[[nodiscard]] core::Result<FsyncPolicy> parse_fsync(std::string_view text);

/// The kind of a recorder's consumer rows (`weir ls`), set once the recorder writes: at start, after
/// its first file is open, so a supervisor that waits for it starts no writer while that file is made.
inline constexpr std::string_view kRecorderKind = "record:hdf5";

/// A channel's codec, or `auto`: the codec measured best for its dtype (kAutoIntegerCodec for integer
/// ADC codes; none for floats, whose noisy mantissas no fast codec shrinks by much).
struct CodecChoice {
  codec::Codec codec{};
  bool automatic = false;
};
inline constexpr codec::Codec kAutoIntegerCodec{codec::Method::lz4, true, 0};  // shuffle+lz4: bench/README.md

/// The codec of the channels whose names match a glob (RecordOptions::codecs).
struct CodecRule {
  std::string pattern;
  CodecChoice choice{};
};

/// A command run for each closed file (docs/design/recording.md, "Hand-off"), in a process of its own.
struct HandoffOptions {
  std::vector<std::string> command;  // argv; "{path}", "{name}", "{dir}" and "{sha256}" in an argument are replaced
  double timeout_s = kHandoffTimeoutS;    // killed (its whole process group) after this long: a failed try
  double retry_s = kHandoffRetryS;        // first retry after a failure; doubled each time
  double retry_max_s = kHandoffRetryMaxS;  // at most this long between tries
};

struct RecordOptions {
  std::vector<std::string> channels;  // glob patterns (fnmatch): "adc*"
  std::vector<std::string> keys;      // glob patterns of keys sampled on change; may be empty
  std::string out;                    // a directory, or a file name ending in .h5
  core::ConsumerPolicy policy = core::ConsumerPolicy::lossless;  // lossless or lossy
  std::uint32_t flush_ms = kDefaultFlushMs;  // H5Fflush period (time-based), > 0
  std::uint64_t rotate_bytes = 0;     // next segment once a file reaches this size (0: never)
  double rotate_s = 0;                // next segment after this many seconds (0: never)
  CodecChoice codec{};                // channel data's chunks (none: stored as they are)
  std::vector<CodecRule> codecs;      // per channel: the first rule whose glob matches, else `codec`
  unsigned encode_threads = 0;        // threads that encode chunks (0: one per CPU, at most 8)
  std::uint64_t run = 0;              // run number; 0: one more than the highest found
  std::string pipeline_text;          // stored as the pipeline attribute
  std::string pipeline_file;          // where it came from: a controlled run keeps its text at the stop too
  NexusMeta nexus;                    // the pipeline's entry, source and channel metadata (empty: defaults)
  double duration_s = 0;              // clean stop after this long (0: until asked)
  bool wait_for_channels = false;     // a pattern matching nothing waits instead of refusing
  std::uint32_t key_wait_ms = 0;      // the first file waits up to this long for followed keys that are
                                      // still empty to take a value (never past half a channel's ring)
  bool from_oldest = false;           // channels there at start: from their oldest block in the ring, not the next
  std::uint32_t throttle_us = 0;      // testing: sleep this long after each block (a slow disk)
  std::int64_t min_free_bytes = -1;   // stop when free disk falls below (-1: what closing needs)
  bool staged_writes = false;         // testing: every data chunk through H5Dwrite, never H5Dwrite_chunk
  FsyncPolicy fsync = FsyncPolicy::rotation;
  double fsync_interval_s = 10;       // FsyncPolicy::interval: the open file is fsynced this often (> 0)
  bool require_mount = false;         // refuse an --out on the root filesystem (the st_dev of "/")
  // The reason of the row for a channel's sequences from its first_sequence up to the first block
  // it can read, when no file of the run accounts for them: before_start (a late start), or, from a
  // supervisor restarting a recorder that ran before in the run, disk_error (its files went with a
  // failed disk) or recorder_down.
  h5::GapReason missing_before = h5::GapReason::before_start;
  // Each closed file's SHA-256 in FILE.sha256 (docs/design/recording.md, "Checksums"), off the
  // recording thread; then the hand-off command, when there is one.
  bool checksums = true;
  HandoffOptions on_close;
  // Retention (weir/recorder/retention.hpp): the oldest closed files of finished runs deleted to keep
  // the disk within these limits, off the recording thread; none enabled: nothing is ever deleted.
  KeepOptions keep;
  std::string part;  // the pipeline part it runs as: counters go to keys "<part>.files_hashed", ... ("": none)
  // One controlled run (docs/design/runs.md), set by record_runs() for each run of the arena's run
  // control: only blocks whose first sample is at or after run_start_ns and before the run's stop are
  // recorded (a block's realtime_ns is its first sample's time), and the recording ends at that stop.
  bool controlled = false;
  std::int64_t run_start_ns = 0;
  std::uint32_t run_row = core::kRunRecorderRows;  // the recorder's row in the run control (first block time)
};

/// --codec: comma-separated items, each "NAME" (every channel's codec: RecordOptions::codec) or
/// "PATTERN=NAME" (a rule of RecordOptions::codecs, in order), NAME "auto" or as codec::parse takes
/// it. Fails naming the item and the choices.
[[nodiscard]] core::Result<void> parse_codecs(std::string_view text, RecordOptions& options);
/// The codec of channel `name` of `dtype`: its first matching rule's, else options.codec.
[[nodiscard]] codec::Codec codec_for(const RecordOptions& options, std::string_view name, core::Dtype dtype);

/// --missing-before: "before_start", "disk_error" or "recorder_down"; fails naming the text and
/// the three otherwise.
[[nodiscard]] core::Result<h5::GapReason> parse_missing_before(std::string_view text);

/// How a caller steers a recording from other threads or signal handlers.
struct RecordControl {
  std::atomic<bool> stop{false};     // clean stop: drain, write stop_time, close
  std::atomic<bool> rotate{false};   // close this segment, open the next (SIGHUP); cleared when done
  std::atomic<bool> started{false};  // set once every reader is registered and the first file is open
  std::function<void(std::string_view)> notice;  // one line per event ("recording to FILE"); may be empty
};
static_assert(std::atomic<bool>::is_always_lock_free, "the flags are set from signal handlers");

struct ChannelSummary {
  std::string name;
  std::uint64_t blocks = 0, samples = 0, bytes = 0;  // written to files
  std::uint64_t gaps = 0, gap_blocks = 0;            // gap rows and the blocks they account for
};

struct RecordSummary {
  std::uint64_t run = 0;
  std::vector<std::string> files;  // segments written by this recording, in order
  std::vector<ChannelSummary> channels;
  std::uint64_t blocks = 0, samples = 0, bytes = 0, gaps = 0, gap_blocks = 0;
  std::string stopped_by;  // "request", "duration", "error", "run stop" (a controlled run ended)
  std::string error;       // set when recording stopped on an error (disk full, write failure)
  bool disk_full = false;  // the error is a full disk (ENOSPC, or below the free-space reserve)
  bool disk_fault = false; // the error is a disk fault: EIO, EROFS, the directory vanished or its filesystem changed
  int error_number = 0;    // the fault's errno, 0 when none is known
  std::uint64_t unreachable_blocks = 0;  // blocks written to files no longer reachable at --out (not in `blocks`)
};

/// Whether `dir` is on the root filesystem (its st_dev is that of "/"); fails naming the path when it
/// cannot be looked at. Thread: any.
[[nodiscard]] core::Result<bool> on_root_filesystem(const std::filesystem::path& dir);

/// How a failure at start is classed, as a stop on a write failure is (RecordSummary): a full disk
/// (ENOSPC, EDQUOT, below the free-space reserve) or a disk fault (EIO, EROFS, a vanished directory,
/// another filesystem, --require-mount refused), with its errno; neither for any other error.
struct StartFault {
  bool disk_full = false;
  bool disk_fault = false;
  int error_number = 0;
};
/// The class of an errno met on the output's filesystem (both false for one that is no disk's fault).
[[nodiscard]] StartFault classify_errno(int error_number) noexcept;

/// Checks the options and that --out can be written (creating the directory), before anything
/// starts; fails naming the path and the reason, and classes the failure in `fault` when given.
/// Thread: any.
[[nodiscard]] core::Result<void> check_options(const RecordOptions& options, StartFault* fault = nullptr);

/// Records until control.stop, the duration, or a write failure. A full disk or a disk fault met
/// before the first file is open (check_options, the directory, the free-space reserve, the first
/// segment) is a summary with `error` and no files, as a fault while running is. Refuses at start, naming the
/// pattern and listing the arena's channels, a channel pattern matching nothing (unless
/// wait_for_channels), and a run whose last segment is still being written by a live recorder.
/// A write failure (disk full, EIO, EROFS) or an output directory that vanished or changed its
/// filesystem stops the recording: the summary is returned with `error`, `disk_full` or `disk_fault`
/// and `error_number` set, the segment ends with a disk_error gap row when that can still be written,
/// and closes (or is given up, when its file driver failed). Keeps the run record beside the files
/// (weir/ledger/run_record.hpp) at start, at the stop and after each fsync; fsyncs run on a thread
/// of their own (options.fsync).
/// Thread: one thread; HDF5 is used from this thread only.
[[nodiscard]] core::Result<RecordSummary> record(const core::Arena& arena, const RecordOptions& options,
                                                 RecordControl& control);

/// What record_runs() did.
struct RunsSummary {
  std::uint64_t runs = 0;      // runs recorded (closed)
  RecordSummary last;          // the last run's summary (with its error, when one stopped recording)
  bool error = false;          // a run ended on a write failure: recording stopped there
};

/// Controlled runs (`weir record --controlled`): takes a recorder row in the arena's run control, then, for
/// as long as control.stop is not set, waits (costing nothing) for a run to start and records it
/// into its own files (run number, metadata as NeXus fields, every key's value at start), closing
/// them at the run's stop and marking the row closed. A run already running when it starts (a
/// restart) is continued. `options.run` is ignored. Stops at the first run that ends on a write
/// failure. Thread: one thread; HDF5 from this thread only.
[[nodiscard]] core::Result<RunsSummary> record_runs(const core::Arena& arena, const RecordOptions& options,
                                                    RecordControl& control);

}  // namespace weir::rec
