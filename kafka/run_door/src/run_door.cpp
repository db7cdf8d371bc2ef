#include "weir/kafka_run_door/run_door.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "weir/core/clock.hpp"
#include "weir/core/run_control.hpp"
#include "weir/runctl/doors.hpp"

namespace weir::kafka {

namespace {

constexpr int kPollMs = 100;
constexpr std::int64_t kStopLeadNs = 1'000'000'000;  // a pl72's stop time is set this long before it comes
constexpr std::string_view kDoor = "kafka";

// The stop time a message asks for, as the run control takes it: 0 (now) for none or one already past.
std::int64_t stop_at(std::uint64_t stop_time_ms) {
  const auto at = static_cast<std::int64_t>(stop_time_ms) * core::kNsPerMs;
  return stop_time_ms == 0 || at <= core::realtime_ns() ? 0 : at;
}

core::RunMeta meta_of(const RunStart& s) {
  core::RunMeta m;
  m.title = s.run_name.substr(0, core::kRunTitleBytes);
  std::string comment = "kafka job " + s.job_id;
  if (!s.metadata.empty()) comment += "; metadata " + s.metadata;
  m.comment = comment.substr(0, core::kRunCommentBytes);
  return m;
}

}  // namespace

core::Result<RunDoorCounts> follow_run_control(const core::Arena& arena, const ControlOptions& options,
                                               const std::atomic<bool>& stop,
                                               const std::function<void(const std::string&)>& log) {
  auto reader = ControlReader::open(options, stop);
  if (!reader) return tl::make_unexpected(reader.error());
  log(fmt::format("following run control on topic '{}' for arena '{}'", options.topic, arena.location().name));
  RunDoorCounts counts;
  std::string job;           // the job whose pl72 started the arena's running run (through this door)
  std::uint64_t run = 0;     // that run
  std::int64_t pending = 0;  // a pl72's stop time still ahead (CLOCK_REALTIME ns), 0 none
  const auto end_run = [&](std::int64_t at) {
    auto stopped = runctl::stop_run(arena, kDoor, core::RunEnd::stopped, run, runctl::kDefaultCloseWaitNs, at);
    if (stopped) {
      ++counts.stops;
      log(fmt::format("job {}: {}", job, runctl::ledger_line(stopped->row)));
    } else {
      ++counts.refused;
      log(fmt::format("job {}: {}", job, stopped.error().what));
    }
    job.clear();
    run = 0;
    pending = 0;
  };
  while (!stop.load(std::memory_order_relaxed)) {
    // A pl72's stop time, set shortly before it comes (end_run waits for the recorders to close the run).
    if (pending != 0 && pending - core::realtime_ns() < kStopLeadNs) end_run(pending);
    auto message = reader->poll(kPollMs);
    if (!message) continue;
    switch (message->kind) {
      case ControlMessage::Kind::start: {
        const RunStart& s = message->start;
        auto started = runctl::start_run(arena, meta_of(s), kDoor);
        if (!started) {
          ++counts.refused;
          log(fmt::format("pl72 job {} ({}): {}", s.job_id, s.run_name, started.error().what));
          break;
        }
        ++counts.starts;
        job = s.job_id;
        run = started->number;
        pending = s.stop_time_ms != 0 ? std::max<std::int64_t>(stop_at(s.stop_time_ms), 1) : 0;
        log(fmt::format("pl72 job {} ({}): run {} started", s.job_id, s.run_name, run));
        break;
      }
      case ControlMessage::Kind::stop: {
        const RunStop& s = message->stop;
        if (run == 0 || s.job_id != job) {
          ++counts.refused;
          const core::RunStatus now = core::RunControl(arena).status();
          log(fmt::format("6s4t job {}: refused: {}", s.job_id,
                          now.state == core::RunState::running
                              ? fmt::format("run {} (started by {}) is running, not this job's", now.number, now.door)
                          : now.number == 0 ? std::string("no run is running (none has run in this arena)")
                                            : fmt::format("no run is running (run {} was {} by {})", now.number,
                                                          core::run_end_name(now.ended), now.door)));
          break;
        }
        end_run(stop_at(s.stop_time_ms));
        break;
      }
      case ControlMessage::Kind::malformed:
        ++counts.malformed;
        log(fmt::format("control topic: a malformed message: {}", message->error));
        break;
      case ControlMessage::Kind::other: break;
    }
  }
  return counts;
}

}  // namespace weir::kafka
