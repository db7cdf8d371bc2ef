#pragma once
// The recorder's working state, shared by its setup (recorder.cpp) and its loop (recorder_loop.cpp).
#include <sys/types.h>

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "channel_group.hpp"
#include "closed_files.hpp"
#include "encode_pool.hpp"
#include "retention.hpp"
#include "segment.hpp"
#include "segment_scan.hpp"
#include "syncer.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/signals.hpp"
#include "weir/ledger/run_record.hpp"
#include "weir/recorder/naming.hpp"
#include "weir/recorder/recorder.hpp"

namespace weir::rec {

inline constexpr std::size_t kNoSlot = std::numeric_limits<std::size_t>::max();

/// One followed channel: its registered reader and what was recorded of it.
struct Follow {
  core::ChannelReader reader;
  ChannelStatic info;
  std::size_t slot = kNoSlot;       // its index in the open segment; kNoSlot until a segment holds it
  std::uint64_t dropped_seen = 0;   // the channel's dropped_at_source when last compared
  GapReason first_loss = GapReason::lapped;  // a loss before the first block read: before_start, recorder_down
                                             // or recorder_stopped
  std::vector<GapRow> opening{};             // rows the first segment that holds the channel starts with (a
                                             // restart's marker, before_start); written when it opens
  std::uint64_t first_sequence = 0;          // where the run's ledger of the channel begins
  std::uint64_t stop_head = 0;               // the writer's head the stop's last row was measured against
  bool read_any = false;
  bool awaiting_start = false;  // controlled run: skipping blocks before the run's start; first_sequence not known
  bool run_done = false;        // controlled run: met its stop (stop_head is where the run's ledger ends)
  std::uint64_t done_blocks = 0, done_samples = 0;  // in segments already closed
  std::uint64_t gaps = 0, gap_blocks = 0;
  std::unique_ptr<PvLogSource> pv_log{};  // a PV log channel's meta and carried entries (info.pv_log points here)
};

/// What one file holds, per followed channel (its index in follows_), for an honest summary.
struct FileBlocks {
  std::vector<std::uint64_t> blocks, samples;
  bool failed = false;  // closing it failed (a disk fault): what it holds is not known
  bool synced = false;  // closed and fsynced: on the disk, even if a fault stops it being looked at now
};

/// One followed key, sampled on change.
/// The hidden name a segment is made under: ".NAME.PID.making" beside it (no reader lists it: it
/// neither ends in .h5 nor parses as a segment name). recorder_names.cpp.
[[nodiscard]] std::filesystem::path making_path(const std::filesystem::path& path, std::uint32_t pid);

// A closed file of another run of the recorder's, still owed a manifest or a hand-off.
struct OwedFile {
  std::string file;
  std::uint64_t run = 0;
};

struct KeyFollow {
  std::string name;
  core::KeyHandle handle{};
  bool resolved = false;
  bool numeric = true;
  std::size_t slot = kNoSlot;
  bool logged = false;             // a value was logged in the open segment
  bool empty_at_open = false;      // the key held no value when the open segment was made
  std::uint64_t last_epoch = 0;    // the slot epoch of the last value logged
  bool ever_logged = false;        // a value of it is in some file of the run
  bool owed = false;               // its latest value is in no file (a log of another kind is needed)
  std::vector<std::byte> buffer;   // value_bytes, allocated once
};

class Recorder {
 public:
  Recorder(const core::Arena& arena, const RecordOptions& options, RecordControl& control);
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;
  ~Recorder();
  /// Matches patterns, picks the run, continues an earlier one, registers readers, opens the first file.
  [[nodiscard]] core::Result<void> start();
  /// Records until a stop; a write failure ends it with summary().error set.
  void run();
  /// start() failed: when on a full disk or a disk fault, records the fault (summary(), the run
  /// record) and says true; false for any other error.
  [[nodiscard]] bool stop_at_start(const core::Error& error);
  [[nodiscard]] RecordSummary summary() const;

 private:
  // setup (recorder.cpp)
  void pick_run();
  [[nodiscard]] core::Result<void> continue_run();
  [[nodiscard]] core::Result<void> follow_channel(const core::ChannelInfo& channel, core::StartAt start);
  /// A controlled run: the first block of `channel` in its ring that begins at or after the run's start,
  /// else the next to come (a temporary lossy reader looks at the block headers).
  [[nodiscard]] std::uint64_t run_boundary(const std::string& channel, std::uint64_t head) const;
  void follow_key(std::string_view key, const core::ValueInfo& info);
  /// The text of `key`'s units key (key + kUnitsSuffix) in the arena; empty when it has none.
  std::string key_units(const std::string& key, std::vector<std::byte>& buffer) const;
  [[nodiscard]] bool discover();
  [[nodiscard]] core::Result<void> open_segment();
  [[nodiscard]] core::Result<void> close_segment();
  [[nodiscard]] bool segment_holds_nothing() const noexcept;  // no block, gap row or key news in the open segment
  [[nodiscard]] core::Result<void> remove_closed(const std::string& file, int fd);  // an empty segment, closed
  [[nodiscard]] core::Result<void> name_segment(Segment& segment, const std::filesystem::path& making,
                                                const std::filesystem::path& path, bool& taken);
  void remove_stale_makings();
  // a killed recorder's NAME.partial renamed NAME (recorder_names.cpp, as the three before it)
  [[nodiscard]] core::Result<void> take_final_name(const SegmentName& segment, int& error_number);
  // closed files of the recorder's other runs still owed a manifest or a hand-off
  [[nodiscard]] std::vector<OwedFile> owed_files();
  void account_segment(bool all_committed);  // adds the open segment's blocks to the totals; unslots
  void notice(const std::string& line) const;
  // the run record and the output directory (recorder_ledger.cpp)
  void read_record();
  void update_record(bool at_stop);
  [[nodiscard]] core::Result<void> check_out_dir();  // still the directory (and filesystem) recording began in
  void note_fault(const core::Error& error, bool disk_full);
  // A closed NAME.partial takes its final name (files_.back()) once on the disk (fd: a dup of its
  // descriptor, closed here; sync false: renamed at once, unsynced).
  [[nodiscard]] core::Result<void> finish_name(const std::string& partial, int fd, bool sync = true);
  void named_closed(const std::string& file);  // to the closed-file thread: its manifest, its hand-off
  [[nodiscard]] core::Result<void> sync_open();                           // fsync the open file (interval)
  [[nodiscard]] core::Result<void> sync_failure();  // a sync the sync thread could not complete
  void finish_syncs();                              // waits for every sync; marks the files that reached the disk
  void note_synced(std::uint64_t now_ns);  // from the sync thread too
  void finish_closed_files();                 // at the stop: waits for the manifests (and hand-offs due, bounded)

  // loop (recorder_loop.cpp)
  [[nodiscard]] core::Result<std::uint64_t> pump(Follow& f, std::uint64_t limit, std::uint64_t until);
  [[nodiscard]] bool size_reached() const noexcept;
  [[nodiscard]] std::uint64_t blocks_before_size(const Follow& f) const noexcept;
  [[nodiscard]] core::Result<void> add_gap(Follow& f, std::uint64_t sequence, std::uint64_t blocks, GapReason reason);
  [[nodiscard]] core::Result<void> sample_keys();
  [[nodiscard]] core::Result<void> flush();
  [[nodiscard]] core::Result<void> check_disk();
  [[nodiscard]] core::Result<void> rotate(bool now);
  [[nodiscard]] core::Result<void> log_carried();  // before a stop: a new file for carried PV log entries
  [[nodiscard]] bool something_to_write() const noexcept;
  void wait_for_key_types();
  [[nodiscard]] bool reachable(const std::string& file, bool synced) const noexcept;  // still at --out
  void loop();
  void wait(std::int64_t until_ns);
  [[nodiscard]] core::Result<void> drain();
  [[nodiscard]] bool writers_publishing(std::int64_t deadline);
  void drain_and_close();
  void close_last_segment();  // the keys' last values, the counters, the file closed
  void stop_on_error(const core::Error& error);
  void publish_counters();
  // controlled runs (recorder_run.cpp)
  [[nodiscard]] bool before_run(Follow& f, const core::BlockView& view);  // skip a block before the run's start
  [[nodiscard]] bool past_run(Follow& f, const core::BlockView& view);    // a block at or after its stop
  void watch_run();       // notices the run's stop
  [[nodiscard]] bool run_finished() const noexcept;  // every channel met the stop (or its wait ran out)
  void finish_run();      // writes the run's last rows and closes

  const core::Arena& arena_;
  const RecordOptions& options_;
  RecordControl& control_;
  core::KvStore kv_;
  OutTarget target_;
  std::string arena_name_;
  std::uint64_t run_ = 0;
  std::uint64_t next_number_ = 0;          // the next segment's file number
  std::optional<SegmentInfo> previous_;     // the run's last readable segment when continuing one
  std::map<std::string, std::uint64_t> resume_;  // continuing a run: per channel, one past the last sequence
                                                 // the run's files account for (same arena incarnation)
  std::filesystem::path record_path_;            // the run record beside the files
  std::optional<ledger::RunRecord> record_;      // as read at start (nullopt: none, or unreadable)
  int out_fd_ = -1;                              // the output directory, open (O_DIRECTORY) for fsync
  std::unique_ptr<ClosedFiles> closed_files_;    // manifests and hand-offs off this thread (none: neither asked for);
                                                 // declared before syncer_, whose thread hands files to it
  std::unique_ptr<Retention> retention_;         // keep: deletes old files off this thread (none: no limit set)
  std::optional<Syncer> syncer_;                 // fsyncs off this thread (not with FsyncPolicy::never)
  std::vector<std::string> earlier_files_;       // continuing a run: its files an earlier recorder closed
  std::unique_ptr<EncodePool> encoders_;         // encode chunks of channels with a codec (made with the first);
                                                 // declared before segment_, whose columns use it, so it outlives them
  dev_t out_dev_ = 0;                            // the output directory's identity at start
  ino_t out_ino_ = 0;
  std::vector<FileBlocks> file_blocks_;          // per file in files_: what it holds (once closed)
  std::int64_t sync_at_ = 0;                     // --fsync interval: monotonic time of the next fsync
  bool starting_ = true;                         // before the first segment is open (readers are not named yet)
  bool segment_due_ = false;                     // rotated: the next segment opens when there is something to write
  bool dir_gone_ = false;                        // the output directory vanished or changed: its file still works
  bool disk_full_ = false;                       // stopped on a full disk (exit 3)
  bool disk_fault_ = false;                      // stopped on a disk fault (exit 4)
  int fault_errno_ = 0;
  std::vector<Follow> follows_;
  std::vector<KeyFollow> keys_;
  std::optional<core::Watcher> watcher_;
  std::uint32_t key_watches_ = 0;
  bool key_news_ = false;          // the open segment logged a key value no earlier file holds
  bool pv_new_file_ = false;       // a PV log entry the open file cannot log is carried: rotate
  bool key_kind_changed_ = false;  // sample_keys saw an array in a plain log, or text in the numeric log of a
                                   // key that was empty when the file opened: rotate
  Segment segment_;
  std::vector<std::string> files_;
  std::uint64_t reserve_bytes_ = 0;        // free disk below which recording stops
  std::uint64_t checked_file_bytes_ = 0;   // file size at the last free-space check
  std::uint32_t host_pid_ = 0;
  std::uint64_t start_ticks_ = 0;
  std::string host_;
  std::optional<core::RunControl> run_control_;  // controlled runs only
  std::uint32_t run_changes_ = 0;                // the run control's change counter when last looked at
  bool run_looked_ = false;                      // the run control was looked at once (the first loop turn)
  std::int64_t run_stop_ns_ = 0;                 // the run's stop (CLOCK_REALTIME), 0 until known
  std::int64_t run_stop_deadline_ = 0;           // monotonic: channels that met no block past the stop end here
  bool marks_due_ = false;                       // a channel's first sequence became known: update the record
  bool first_block_seen_ = false;
  std::string stopped_by_;
  std::string error_;
  bool disk_low_ = false;  // free space fell below reserve_bytes_ (writing itself still works)
};

}  // namespace weir::rec
