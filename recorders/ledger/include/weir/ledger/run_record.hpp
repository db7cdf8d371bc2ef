#pragma once
// The run record: a small JSON file kept beside a run's HDF5 files, written by `weir run` (at start
// and at stop) and by `weir record` (when it starts and stops following a channel). It holds what
// the files alone cannot say: where each channel's ledger begins, the writer's final sequence when
// the run stopped (so blocks after a recorder's early stop are a counted tail, not a silence), the
// parts that ran and the faults they met. `weir audit` reads it next to the files.
//
// Name: <dir>/<prefix>_run<RUN, 6 digits>.ledger.json, where prefix is the arena's name (--out DIR)
// or the file stem (--out FILE.h5). Written atomically (a temporary file, fsync, rename, fsync of the
// directory) under an flock on "<name>.lock", so several writers (a supervisor, its recorders)
// read-modify-write it without losing each other's changes.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "weir/core/error.hpp"

namespace weir::ledger {

inline constexpr char kRunRecordFormat[] = "weir-run-record 1";
inline constexpr char kRunRecordSuffix[] = ".ledger.json";

/// One channel's ledger bounds. Sequences are the writer's block sequence numbers.
struct ChannelMark {
  std::string channel;
  std::uint64_t first_sequence = 0;     // the first block the run answers for (the writer's head when the run
                                        // began following the channel; 0 for a channel made by the run)
  std::uint64_t written = 0;            // the writer's next sequence (one past its last block) when last updated
  std::uint64_t dropped_at_source = 0;  // the channel's dropped_at_source counter then
  bool final = false;                   // `written` was taken at the run's stop, after its writers stopped
  std::uint64_t arena_created_ns = 0;   // the incarnation these sequences belong to
};

/// A part of a supervised run, as the supervisor last saw it.
struct PartMark {
  std::string name;
  std::string role;        // "driver", "shard", "record", "bridge"
  std::string state;       // "running", "restarting", "given up", "stopped", ...
  std::string last_exit;   // "exit 3", "killed by SIGKILL"; "" while it never ended
  std::uint64_t restarts = 0;
  bool essential = false;
};

/// A fault a recorder met (disk full, EIO, a vanished directory...), with its errno.
struct Fault {
  std::string part;             // the part or recorder that met it ("record" for a recorder run by hand)
  std::string reason;           // a gap reason name (weir/h5/recording_format.hpp), "disk_error" for disk faults
  std::string what;             // the message
  int error_number = 0;         // errno; 0 when none applies
  std::uint64_t realtime_ns = 0;
};

/// A change of a controlled run's configuration while it ran (a pipeline reloaded under `weir run`).
struct ConfigEvent {
  std::uint64_t realtime_ns = 0;
  std::string what;      // "reload"
  std::string pipeline;  // the pipeline file's text from then on
};

/// A file of the run that retention deleted (docs/design/recording.md, "Retention"): written into the
/// record before the file goes, so the audit names it deleted, not missing.
struct DeletedFile {
  std::string file;              // its name in the run's directory
  std::uint64_t segment = 0;     // its number in the run's series
  std::uint64_t bytes = 0;
  std::string sha256;            // from its manifest; "" when it had none
  std::string reason;            // "free_space", "max_total" or "max_age"
  std::string part;              // the recorder that deleted it ("record" for one run by hand)
  std::uint64_t deleted_ns = 0;  // CLOCK_REALTIME
};

struct RunRecord {
  std::string format = kRunRecordFormat;
  std::uint64_t run = 0;
  std::string arena;
  std::uint64_t arena_created_ns = 0;
  std::string pipeline;            // the pipeline file; "" for a recorder started by hand
  std::string writer;              // "weir run" or "weir record": who started the run
  std::uint64_t started_ns = 0;    // CLOCK_REALTIME, ns since the epoch
  std::uint64_t stopped_ns = 0;    // 0 while the run goes on (or its writer was killed)
  std::string fsync;               // the recorders' durability policy: "rotation", "interval", "never"
  std::uint64_t synced_ns = 0;     // CLOCK_REALTIME of the last completed fsync of a recorder
  std::vector<ChannelMark> channels;
  std::vector<PartMark> parts;
  std::vector<Fault> faults;
  std::string pipeline_at_end;             // a controlled run: the pipeline file's text when it stopped
  std::vector<ConfigEvent> config_events;  // a controlled run: every reload while it ran
  std::vector<DeletedFile> deleted;        // files retention deleted, in the order it did

  /// The channel's mark, added (with `first_sequence` = `written` = 0) when it has none.
  ChannelMark& channel(std::string_view name);
  [[nodiscard]] const ChannelMark* find_channel(std::string_view name) const noexcept;
  /// The part's mark, added when it has none.
  PartMark& part(std::string_view name);
};

/// <dir>/<prefix>_run<RUN, 6 digits>.ledger.json. Thread: any.
[[nodiscard]] std::filesystem::path run_record_path(const std::filesystem::path& dir, std::string_view prefix,
                                                    std::uint64_t run);

/// Reads a run record; nullopt when the file does not exist. Fails naming the file when it exists
/// but is not a run record (bad JSON, another format). Thread: any.
[[nodiscard]] core::Result<std::optional<RunRecord>> read_run_record(const std::filesystem::path& path);

/// Reads the record (a fresh one when there is none), lets `change` edit it, and writes it back
/// atomically and durably under the record's lock. Fails naming the file and the errno's reason.
/// Thread: any; processes: any number, serialised by the lock (each wait bounded: 2 s).
[[nodiscard]] core::Result<void> update_run_record(const std::filesystem::path& path,
                                                   const std::function<void(RunRecord&)>& change);

/// The record as JSON text (one object, indented), and back. Thread: any.
[[nodiscard]] std::string to_json(const RunRecord& record);
[[nodiscard]] core::Result<RunRecord> from_json(std::string_view text, const std::string& where);

}  // namespace weir::ledger
