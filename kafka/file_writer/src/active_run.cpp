// One run of the file-writer: gates from staging into the run's arena, the recorder on it.
#include "active_run.hpp"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "weir/core/channel.hpp"
#include "weir/core/clock.hpp"

namespace weir::kafka::fw {

namespace {

constexpr int kBatch = 64;                         // blocks one gate moves before the next gets a turn
constexpr std::int64_t kDiscoverEveryNs = 100'000'000;  // new staging channels looked for this often
constexpr std::int64_t kIdleSleepUs = 500;
constexpr std::uint32_t kRunChannels = 128;

core::ArenaOptions arena_options(const FileWriterOptions& o) {
  core::ArenaOptions a;
  a.channel_capacity = kRunChannels;
  a.channel_data_bytes = o.arena_bytes;
  a.consumer_capacity = std::max(a.consumer_capacity, 2 * kRunChannels);
  return a;
}

}  // namespace

ActiveRun::ActiveRun(core::Arena arena, const core::Arena& staging, const FileWriterOptions& options, RunReport report,
                     Notice notice)
    : arena_(std::move(arena)), staging_(staging), options_(options), report_(std::move(report)),
      notice_(std::move(notice)) {}

ActiveRun::~ActiveRun() {
  stop_at(core::realtime_ns(), core::realtime_ns());
  if (gate_.joinable()) gate_.join();
  control_.stop.store(true, std::memory_order_relaxed);
  if (recorder_.joinable()) recorder_.join();
}

core::Result<std::unique_ptr<ActiveRun>> ActiveRun::start(const core::Arena& staging, const FileWriterOptions& options,
                                                          const rec::RecordOptions& record, RunReport report,
                                                          const Notice& notice) {
  auto arena = core::Arena::create("memfd:" + options.name, arena_options(options));
  if (!arena) return core::fail(arena.error().code, "the run's arena: " + arena.error().what);
  std::unique_ptr<ActiveRun> run(new ActiveRun(std::move(*arena), staging, options, std::move(report), notice));
  std::vector<RunGate> gates;
  run->open_new_gates(gates);
  ActiveRun* self = run.get();
  self->control_.notice = notice;
  self->recorder_ = std::thread([self, record] {
    self->summary_ = rec::record(self->arena_, record, self->control_);
    self->recorder_ended_.store(true, std::memory_order_release);
  });
  const std::int64_t until = core::monotonic_ns() + options.start_wait_ns;
  while (!self->control_.started.load(std::memory_order_acquire) &&
         !self->recorder_ended_.load(std::memory_order_acquire) && core::monotonic_ns() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  if (!self->control_.started.load(std::memory_order_acquire)) {
    self->control_.stop.store(true, std::memory_order_relaxed);
    self->recorder_.join();
    self->done_.store(true, std::memory_order_release);
    if (self->summary_ && !*self->summary_) return tl::make_unexpected(self->summary_->error());
    if (self->summary_ && !(*self->summary_)->error.empty())
      return core::fail(core::Errc::io_error, (*self->summary_)->error);
    return core::fail(core::Errc::io_error, fmt::format("the recorder did not open its first file within {:.1f} s",
                                                        static_cast<double>(options.start_wait_ns) / 1e9));
  }
  self->gate_ = std::thread([self, g = std::move(gates)]() mutable { self->gate_loop(std::move(g)); });
  return run;
}

void ActiveRun::open_new_gates(std::vector<RunGate>& gates) {
  for (const core::ChannelInfo& c : core::list_channels(staging_)) {
    if (std::any_of(gates.begin(), gates.end(), [&](const RunGate& g) { return g.name() == c.name; })) continue;
    auto gate = RunGate::open(staging_, arena_, c.name, "writer:" + options_.name);
    if (!gate) {
      notice_(fmt::format("run {}: {}", report_.job_id, gate.error().what));
      continue;
    }
    gates.push_back(std::move(*gate));
  }
}

void ActiveRun::stop_at(std::int64_t stop_ns, std::int64_t deadline_ns) noexcept {
  stop_ns_.store(std::max(stop_ns, report_.start_ns), std::memory_order_relaxed);
  deadline_ns_.store(deadline_ns, std::memory_order_relaxed);
}

void ActiveRun::gate_loop(std::vector<RunGate> gates) {
  std::int64_t next_discover = core::monotonic_ns() + kDiscoverEveryNs;
  std::vector<std::string> channels;  // the channels the sources become: each must pass the stop
  for (const SourceRoute& r : options_.sources) {
    std::string c = r.channel.empty() ? r.source : r.channel;
    if (std::find(channels.begin(), channels.end(), c) == channels.end()) channels.push_back(std::move(c));
  }
  const std::size_t sources = channels.size();
  for (;;) {
    const RunWindow window{report_.start_ns, stop_ns_.load(std::memory_order_relaxed)};
    bool moved = false;
    for (RunGate& g : gates)
      for (int i = 0; i < kBatch && g.step(window); ++i) moved = true;
    if (recorder_ended_.load(std::memory_order_acquire)) {
      report_.ended_by = "error";
      break;
    }
    if (window.stop_ns != kOpenStop) {
      const bool all_passed = gates.size() >= sources && !gates.empty() &&
                              std::all_of(gates.begin(), gates.end(), [](const RunGate& g) { return g.passed_stop(); });
      if (all_passed) {
        report_.ended_by = "sources";
        break;
      }
      if (core::realtime_ns() >= deadline_ns_.load(std::memory_order_relaxed)) {
        report_.ended_by = "grace";
        break;
      }
    }
    if (const std::int64_t now = core::monotonic_ns(); now >= next_discover) {
      open_new_gates(gates);  // a source that appeared during the run (cold: allocates)
      next_discover = now + kDiscoverEveryNs;
    }
    if (!moved) std::this_thread::sleep_for(std::chrono::microseconds(kIdleSleepUs));
  }
  report_.stop_ns = stop_ns_.load(std::memory_order_relaxed);
  for (RunGate& g : gates) {
    g.finish();
    report_.channels.emplace_back(g.name(), g.counts());
  }
  gates.clear();  // the run's writers go before the recorder's stop: it waits for no live writer
  control_.stop.store(true, std::memory_order_relaxed);
  while (!recorder_ended_.load(std::memory_order_acquire))  // the recorder's clean stop is bounded (its drain)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  done_.store(true, std::memory_order_release);
}

RunReport ActiveRun::finish() {
  if (gate_.joinable()) gate_.join();
  if (recorder_.joinable()) recorder_.join();
  if (summary_ && *summary_) {
    report_.summary = **summary_;
  } else if (summary_) {
    report_.summary.error = summary_->error().what;
    report_.summary.stopped_by = "error";
  }
  return std::move(report_);
}

}  // namespace weir::kafka::fw
