#pragma once
// `weir record --from-kafka`: the NeXus file-writer fed from Kafka topics, started and stopped by
// pl72 / 6s4t run messages on a control topic (or recording from start to stop without one).
//
// Design (docs/design/kafka.md, "File-writer"): the process owns a staging arena (/dev/shm, named
// NAME.PID, removed at exit) into which Kafka receivers publish each se00 source as a channel, with
// exact gap blocks for missing message counters. A run gets an arena of its own (a memfd named
// NAME, gone with the run), and a gate thread per run republishes from staging into it only the
// blocks whose time falls in the run's window [start, stop) (run_gate.hpp), while the local
// recorder (weir::recorder) records the run's arena on a thread of its own. So each run's channels
// begin with its first block and the files, gap rows, run record and `weir audit` are the local
// recorder's, with nothing before or after the run in them.
//
// This module (kafka/file_writer, weir::kafka_file_writer) does the work and prints nothing: what
// happens comes out through the `notice` and `on_run` callbacks and the report. `weir record
// --from-kafka` (tools/cli/src/cmd_record_kafka.cpp) parses the command line into FileWriterArgs
// (file_writer_args.hpp), calls run_file_writer and prints.
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "weir/core/error.hpp"
#include "weir/kafka/client_options.hpp"
#include "weir/kafka/receiver.hpp"
#include "weir/kafka_file_writer/run_gate.hpp"
#include "weir/recorder/recorder.hpp"

namespace weir::kafka::fw {

/// A source taken off the data topics, and the channel it becomes (the source's name when empty).
struct SourceRoute {
  std::string source;
  std::string channel;
};

struct FileWriterOptions {
  std::string name;                   // channel consumers, keys kafka.NAME-*, file prefix without a filename
  std::string brokers;
  std::vector<std::string> topics;    // data topics
  std::vector<SourceRoute> sources;   // the se00 sources to record
  std::string control_topic;          // empty: one run from start to stop
  std::string service_id;             // take only run starts for this service id (empty: every one)
  std::int64_t grace_ns = 2'000'000'000;          // after the stop time: the longest wait for sources still behind it
  std::int64_t connect_timeout_ns = 10'000'000'000;  // the control topic's metadata
  std::int64_t start_wait_ns = 10'000'000'000;    // the recorder's first file
  double duration_s = 0;              // without a control topic: stop after this long (0: at the stop signal)
  std::uint64_t runs = 0;             // with a control topic: return after this many runs (0: at the stop signal)
  std::uint32_t ring_blocks = 1024;   // each staging and run channel's ring
  std::uint64_t arena_bytes = 256ULL << 20;  // each arena's channel pool
  bool from_newest = false;           // receivers start at each partition's end
  kafka::Properties properties;       // librdkafka properties for every client
  rec::RecordOptions record;          // the recorder's options; out is the directory runs are written in
};

/// One run, as it ended.
struct RunReport {
  std::string job_id;                 // "" without a control topic
  std::string run_name;
  std::string out;                    // what the recorder was given as --out
  std::int64_t start_ns = 0, stop_ns = 0;  // the window
  std::string ended_by;               // "sources" (all passed the stop), "grace", "error"
  rec::RecordSummary summary;
  std::vector<std::pair<std::string, GateCounts>> channels;
};

struct WriterReport {
  std::vector<RunReport> runs;
  std::uint64_t starts_refused = 0;   // pl72s refused (a run open, a bad filename, a recorder that failed to start)
  std::uint64_t starts_ignored = 0;   // pl72s for another service id
  std::uint64_t stops_unknown = 0;    // 6s4ts for no open job
  std::uint64_t other = 0, malformed = 0;  // other messages on the control topic; ones that did not decode
  std::vector<kafka::ReceiverReport> receivers;
};

/// Where pl72's `filename` is written: `out_dir`/its stem + ".h5" (the recorder's segment naming
/// then adds _0001 ...). Fails naming the file name for one that is absolute, empty after
/// normalising, or leaves out_dir (".."). Thread: any.
[[nodiscard]] core::Result<std::string> run_file(const std::string& out_dir, const std::string& filename);

/// The run number a run name gives: its trailing digits ("run 17" -> 17), 0 (the recorder's next)
/// without any. Thread: any.
[[nodiscard]] std::uint64_t run_number(std::string_view run_name) noexcept;

/// One line per event ("run start job J: ...", a refused start, the recorder's "recording to FILE",
/// a receiver's error). Called from the caller's thread and from the writer's own threads (the
/// recorder's, the gate's), possibly at the same time: it must be safe to call from any thread.
using Notice = std::function<void(std::string_view)>;

/// Runs the file-writer until `stop` (and the open run's stop), the duration, or `runs` runs.
/// `on_run` (may be empty) is called on the caller's thread as each run ends; `notice` (may be
/// empty) gets one line per event. Fails before any run for bad options, an arena that cannot be
/// made, or a control topic no broker answers for. Prints nothing.
/// Thread: the caller's, plus a receiver thread per data topic and, while a run is open, a gate
/// and a recorder thread.
[[nodiscard]] core::Result<WriterReport> run_file_writer(const FileWriterOptions& options, const std::atomic<bool>& stop,
                                                         const std::function<void(const RunReport&)>& on_run,
                                                         const Notice& notice);

}  // namespace weir::kafka::fw
