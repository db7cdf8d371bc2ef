// The file-writer's control loop: a staging arena fed by the receivers, runs started and stopped by
// pl72 / 6s4t (or one run from start to stop), each run recorded by the local recorder.
#include "weir/kafka_file_writer/file_writer.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <charconv>
#include <filesystem>
#include <memory>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "active_run.hpp"
#include "staging_feed.hpp"
#include "weir/core/clock.hpp"
#include "weir/kafka/run_control.hpp"

namespace weir::kafka::fw {

namespace {

constexpr int kControlPollMs = 50;
constexpr std::int64_t kNsPerMs = 1'000'000;
constexpr std::uint32_t kStagingChannels = 128;
constexpr std::size_t kMaxName = 40;  // the staging arena's name adds ".PID"

std::string job_text(const std::string& job_id) { return job_id.empty() ? std::string("(none)") : job_id; }

// The staging arena: /dev/shm/weir.NAME.PID, gone when this goes.
class StagingArena {
 public:
  static core::Result<StagingArena> create(const FileWriterOptions& o) {
    const std::string where = fmt::format("{}.{}", o.name, ::getpid());
    core::ArenaOptions a;
    a.channel_capacity = kStagingChannels;
    a.channel_data_bytes = o.arena_bytes;
    a.consumer_capacity = std::max(a.consumer_capacity, 2 * kStagingChannels);
    a.replace_stale = true;
    auto arena = core::Arena::create(where, a);
    if (!arena) return core::fail(arena.error().code, "the staging arena: " + arena.error().what);
    return StagingArena(where, std::move(*arena));
  }
  StagingArena(StagingArena&&) noexcept = default;
  StagingArena(const StagingArena&) = delete;
  StagingArena& operator=(const StagingArena&) = delete;
  StagingArena& operator=(StagingArena&&) = delete;
  ~StagingArena() {
    if (!where_.empty()) (void)core::Arena::remove(where_);
  }
  [[nodiscard]] const core::Arena& arena() const noexcept { return arena_; }

 private:
  StagingArena(std::string where, core::Arena arena) : where_(std::move(where)), arena_(std::move(arena)) {}
  std::string where_;
  core::Arena arena_;
};

core::Result<void> validate(const FileWriterOptions& o) {
  if (o.name.empty() || o.name.size() > kMaxName)
    return core::fail(core::Errc::invalid_argument, fmt::format("name '{}': 1 to {} bytes", o.name, kMaxName));
  if (o.brokers.empty()) return core::fail(core::Errc::invalid_argument, "--from-kafka: no brokers (HOST:PORT,...)");
  if (o.topics.empty()) return core::fail(core::Errc::invalid_argument, "--from-kafka: no --topic");
  if (o.sources.empty()) return core::fail(core::Errc::invalid_argument, "--from-kafka: no --source");
  if (o.grace_ns <= 0) return core::fail(core::Errc::invalid_argument, "--grace-s must be > 0");
  if (o.record.out.empty()) return core::fail(core::Errc::invalid_argument, "--out: no directory");
  if (o.record.out.ends_with(".h5"))
    return core::fail(core::Errc::invalid_argument,
                      fmt::format("--out {}: with --from-kafka, --out is the directory runs are written in", o.record.out));
  return {};
}

// The recorder's options for a run: the file, the run number and the run's text fields.
core::Result<rec::RecordOptions> run_options(const FileWriterOptions& o, const kafka::RunStart* start) {
  rec::RecordOptions r = o.record;
  if (r.channels.empty()) r.channels = {"*"};
  r.wait_for_channels = true;  // a source that first sends during the run joins it
  r.from_oldest = true;        // a channel the recorder finds later is read from its first block
  r.duration_s = 0;            // the run's window ends it
  if (start == nullptr) return r;
  if (!start->filename.empty()) {
    auto file = run_file(o.record.out, start->filename);
    if (!file) return tl::make_unexpected(file.error());
    r.out = std::move(*file);
  }
  if (r.run == 0) r.run = run_number(start->run_name);
  if (!start->run_name.empty()) r.nexus.title = start->run_name;
  r.nexus.texts = {{"kafka_job_id", start->job_id},
                   {"kafka_run_name", start->run_name},
                   {"kafka_service_id", start->service_id},
                   {"kafka_instrument_name", start->instrument_name},
                   {"kafka_nexus_structure", start->nexus_structure},
                   {"kafka_metadata", start->metadata}};
  return r;
}

class Writer {
 public:
  Writer(const FileWriterOptions& o, const core::Arena& staging, const std::function<void(const RunReport&)>& on_run,
         const Notice& notice)
      : o_(o), staging_(staging), on_run_(on_run), notice_(notice) {}

  // One run from now until `stop` or the duration.
  core::Result<void> single(const std::atomic<bool>& stop) {
    auto record = run_options(o_, nullptr);
    if (!record) return tl::make_unexpected(record.error());
    RunReport r;
    r.run_name = o_.name;
    r.out = record->out;
    r.start_ns = core::realtime_ns();
    auto run = ActiveRun::start(staging_, o_, *record, std::move(r), notice_);
    if (!run) return tl::make_unexpected(run.error());
    const std::int64_t until = o_.duration_s > 0 ? core::monotonic_ns() + static_cast<std::int64_t>(o_.duration_s * 1e9)
                                                 : INT64_MAX;
    notice_(fmt::format("recording topic(s) to {} from now until stopped", record->out));
    bool stopping = false;
    while (!(*run)->done()) {
      if (!stopping && (stop.load(std::memory_order_relaxed) || core::monotonic_ns() >= until)) {
        const std::int64_t now = core::realtime_ns();
        (*run)->stop_at(now, now + o_.grace_ns);
        stopping = true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(kControlPollMs));
    }
    end_run(**run);
    return {};
  }

  // Runs as the control topic starts and stops them, until `stop` (and the open run's end) or o.runs.
  core::Result<void> controlled(const std::atomic<bool>& stop) {
    kafka::ControlOptions c;
    c.name = o_.name;
    c.brokers = o_.brokers;
    c.topic = o_.control_topic;
    c.timeout_ns = o_.connect_timeout_ns;
    c.properties = o_.properties;
    auto reader = kafka::ControlReader::open(c, stop);
    if (!reader) return tl::make_unexpected(reader.error());
    notice_(fmt::format("waiting for run starts on control topic '{}'{}", o_.control_topic,
                        o_.service_id.empty() ? std::string() : " for service id '" + o_.service_id + "'"));
    bool stopping = false;
    for (;;) {
      if (stop.load(std::memory_order_relaxed) && !stopping) {
        stopping = true;
        if (run_) {
          const std::int64_t now = core::realtime_ns();
          run_->stop_at(std::min(now, run_->stop_ns()), now + o_.grace_ns);
        }
      }
      if (run_ && run_->done()) {
        end_run(*run_);
        run_.reset();
        if (o_.runs != 0 && report_.runs.size() >= o_.runs) return {};
      }
      if (stopping && !run_) return {};
      if (auto m = reader->poll(kControlPollMs)) on_message(*m, stopping);
    }
  }

  WriterReport& report() { return report_; }

 private:
  void on_message(const kafka::ControlMessage& m, bool stopping) {
    switch (m.kind) {
      case kafka::ControlMessage::Kind::start: on_start(m.start, stopping); return;
      case kafka::ControlMessage::Kind::stop: on_stop(m.stop); return;
      case kafka::ControlMessage::Kind::malformed:
        ++report_.malformed;
        notice_(fmt::format("control topic '{}': {}", o_.control_topic, m.error));
        return;
      case kafka::ControlMessage::Kind::other: ++report_.other; return;
    }
  }

  void on_start(const kafka::RunStart& s, bool stopping) {
    if (!o_.service_id.empty() && s.service_id != o_.service_id) {
      ++report_.starts_ignored;
      notice_(fmt::format("run start job {} is for service id '{}', not '{}': ignored", s.job_id, s.service_id,
                          o_.service_id));
      return;
    }
    if (run_ || stopping) {
      ++report_.starts_refused;
      notice_(fmt::format("refusing run start job {}: {}", s.job_id,
                          stopping ? std::string("stopping")
                                   : fmt::format("job {} is still open (a second start never ends the first; stop it "
                                                 "with a run stop)",
                                                 run_->job_id())));
      return;
    }
    auto record = run_options(o_, &s);
    if (!record) {
      ++report_.starts_refused;
      notice_(fmt::format("refusing run start job {}: {}", s.job_id, record.error().what));
      return;
    }
    RunReport r;
    r.job_id = s.job_id;
    r.run_name = s.run_name;
    r.out = record->out;
    r.start_ns = static_cast<std::int64_t>(s.start_time_ms) * kNsPerMs;
    auto run = ActiveRun::start(staging_, o_, *record, std::move(r), notice_);
    if (!run) {
      ++report_.starts_refused;
      notice_(fmt::format("refusing run start job {}: {}", s.job_id, run.error().what));
      return;
    }
    run_ = std::move(*run);
    notice_(fmt::format("run start job {}: run '{}' to {}, data from {} ms{}", s.job_id, s.run_name, record->out,
                        s.start_time_ms,
                        s.stop_time_ms != 0 ? fmt::format(" to {} ms", s.stop_time_ms) : std::string(" until a run stop")));
    if (s.stop_time_ms != 0) {
      const auto stop_ns = static_cast<std::int64_t>(s.stop_time_ms) * kNsPerMs;
      run_->stop_at(stop_ns, std::max(stop_ns, core::realtime_ns()) + o_.grace_ns);
    }
  }

  void on_stop(const kafka::RunStop& s) {
    if (!run_ || s.job_id != run_->job_id()) {
      ++report_.stops_unknown;
      notice_(fmt::format("run stop for unknown job_id '{}' (open: {}): ignored", s.job_id,
                          run_ ? run_->job_id() : std::string("none")));
      return;
    }
    const std::int64_t now = core::realtime_ns();
    const std::int64_t stop_ns = s.stop_time_ms != 0 ? static_cast<std::int64_t>(s.stop_time_ms) * kNsPerMs : now;
    run_->stop_at(stop_ns, std::max(stop_ns, now) + o_.grace_ns);
    notice_(fmt::format("run stop job {}: data up to {} ms", s.job_id, stop_ns / kNsPerMs));
  }

  void end_run(ActiveRun& run) {
    RunReport r = run.finish();
    notice_(fmt::format("run {} ended ({}): {} blocks, {} gap rows, {} file(s)", job_text(r.job_id), r.ended_by,
                        r.summary.blocks, r.summary.gaps, r.summary.files.size()));
    if (on_run_) on_run_(r);
    report_.runs.push_back(std::move(r));
  }

  const FileWriterOptions& o_;
  const core::Arena& staging_;
  const std::function<void(const RunReport&)>& on_run_;
  const Notice& notice_;
  std::unique_ptr<ActiveRun> run_;
  WriterReport report_;
};

}  // namespace

core::Result<std::string> run_file(const std::string& out_dir, const std::string& filename) {
  const std::filesystem::path name(filename);
  const std::filesystem::path normal = name.lexically_normal();
  if (filename.empty() || name.is_absolute() || normal.empty() || normal == "." || *normal.begin() == ".." ||
      !normal.has_filename())
    return core::fail(core::Errc::invalid_argument,
                      fmt::format("filename '{}' is not a file inside --out {}", filename, out_dir));
  std::filesystem::path file = std::filesystem::path(out_dir) / normal;
  file.replace_extension(".h5");
  return file.string();
}

std::uint64_t run_number(std::string_view run_name) noexcept {
  std::size_t i = run_name.size();
  while (i > 0 && std::isdigit(static_cast<unsigned char>(run_name[i - 1])) != 0) --i;
  std::uint64_t n = 0;
  const auto [end, ec] = std::from_chars(run_name.data() + i, run_name.data() + run_name.size(), n);
  return ec == std::errc{} && end == run_name.data() + run_name.size() ? n : 0;
}

core::Result<WriterReport> run_file_writer(const FileWriterOptions& o, const std::atomic<bool>& stop,
                                           const std::function<void(const RunReport&)>& on_run, const Notice& notice) {
  const Notice say = notice ? notice : Notice([](std::string_view) {});
  if (auto ok = validate(o); !ok) return tl::make_unexpected(ok.error());
  auto record = run_options(o, nullptr);
  if (!record) return tl::make_unexpected(record.error());
  if (auto ok = rec::check_options(*record); !ok) return tl::make_unexpected(ok.error());
  auto staging = StagingArena::create(o);
  if (!staging) return tl::make_unexpected(staging.error());
  StagingFeed feed;
  if (auto ok = feed.start(staging->arena(), o, say); !ok) return tl::make_unexpected(ok.error());
  Writer writer(o, staging->arena(), on_run, say);
  auto ran = o.control_topic.empty() ? writer.single(stop) : writer.controlled(stop);
  writer.report().receivers = feed.stop();
  if (!ran) return tl::make_unexpected(ran.error());
  return std::move(writer.report());
}

}  // namespace weir::kafka::fw
