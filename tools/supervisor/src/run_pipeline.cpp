#include "weir/supervisor/run_pipeline.hpp"

#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include <fmt/format.h>

#include "run_audit.hpp"
#include "run_check.hpp"
#include "run_ledger.hpp"
#include "run_plan.hpp"
#include "run_schedule.hpp"
#include "weir/supervisor/pipeline_drivers.hpp"
#include "run_start.hpp"
#include "run_status.hpp"
#include "run_supervisor.hpp"
#include "run_threads.hpp"
#include "service_notify.hpp"
#include "weir/alerts/alert_service.hpp"
#include "weir/config/pipeline.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/clock.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/run_control.hpp"
#include "weir/ledger/run_record.hpp"
#include "weir/runctl/doors.hpp"

namespace weir::supervisor {
namespace {

std::atomic<int> stop_signals{0};
std::atomic<bool> reload_requested{false};
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<bool>::is_always_lock_free);

void on_stop(int) { stop_signals.fetch_add(1, std::memory_order_relaxed); }
void on_hup(int) { reload_requested.store(true, std::memory_order_relaxed); }

// Log lines and the live status line share the terminal: a log line first clears the status line.
class Console {
 public:
  explicit Console(std::function<void(const std::string&)> sink)
      : sink_(std::move(sink)), tty_(!sink_ && isatty(STDOUT_FILENO) != 0) {}
  [[nodiscard]] bool tty() const noexcept { return tty_; }
  void log(const std::string& line) {
    if (sink_) {
      sink_(line);
      return;
    }
    fmt::print("{}{}\n", tty_ && status_shown_ ? "\r\033[K" : "", line);
    status_shown_ = false;
    std::fflush(stdout);
  }
  void status(const std::string& line) {
    fmt::print("\r\033[K{}", line);
    status_shown_ = true;
    std::fflush(stdout);
  }
  void end_status() {
    if (status_shown_) fmt::print("\n");
    status_shown_ = false;
  }

 private:
  std::function<void(const std::string&)> sink_;
  bool tty_;
  bool status_shown_ = false;
};

// Creates the arena (or attaches), every declared channel and those drivers make from their own settings
// (an EPICS driver's PV log and waveforms); a channel that exists must match.
core::Result<core::Arena> prepare_arena(const config::Pipeline& p, bool replace) {
  core::ArenaOptions options = p.arena.options;
  options.replace_stale = options.replace_stale || replace;
  auto arena = p.arena.attach ? core::Arena::open(p.arena.name) : core::Arena::create(p.arena.name, options);
  if (!arena) return tl::make_unexpected(core::with_context(arena.error(), p.arena.origin.where()));
  for (const auto& c : p.channels) {
    if (auto existing = core::find_channel(*arena, c.spec.name); existing) continue;  // attached: the driver checks it
    if (auto made = core::create_channel(*arena, c.spec); !made)
      return tl::make_unexpected(core::with_context(made.error(), c.origin.where()));
  }
  const config::DriverChannels implied = pipeline_driver_channels();
  for (const auto& d : p.drivers) {
    auto specs = implied(d);
    if (!specs) return tl::make_unexpected(specs.error());
    for (const auto& spec : *specs) {
      if (auto existing = core::find_channel(*arena, spec.name); existing) continue;
      if (auto made = core::create_channel(*arena, spec); !made)
        return tl::make_unexpected(core::with_context(made.error(), d.origin.where()));
    }
  }
  return arena;
}

// Re-reads the file: starts, stops or restarts shards and recorders that changed; reports what
// only a new run can change.
void reload(const RunOptions& args, Loaded& current, Supervisor& s, Console& console, std::int64_t grace_ns,
            std::uint64_t run) {
  const std::string& file = args.file;
  console.log(fmt::format("reload: reading {}", file));
  auto fresh = load_checked(file, args.check_args, true);
  if (!fresh) {
    console.log(fmt::format("reload refused, nothing changed: {}", fresh.error().what));
    return;
  }
  assign_run(fresh->parts, fresh->pipeline, run);
  const auto log = [&console](const std::string& line) { console.log(line); };
  // A pool the file sizes must stay as it is; one sized from the channels only has to hold them.
  const std::uint64_t pool = current.pipeline.arena.options.channel_data_bytes;  // the running arena's
  const auto same_arena = [pool](const config::ArenaDecl& a, const config::ArenaDecl& b) {
    return a.name == b.name && a.options.slot_count == b.options.slot_count &&
           a.options.channel_capacity == b.options.channel_capacity &&
           (!b.pool_given || b.options.channel_data_bytes == pool);
  };
  if (!same_arena(current.pipeline.arena, fresh->pipeline.arena))
    console.log("reload: the arena changed; that needs a new run: not applied");
  if (fresh->resolved.channel_bytes > pool)
    console.log(fmt::format("reload: the channels now need {:.1f} MiB but the arena's channel pool is {:.1f} MiB; "
                            "channels that do not fit need a new run",
                            static_cast<double>(fresh->resolved.channel_bytes) / 1048576.0,
                            static_cast<double>(pool) / 1048576.0));
  fresh->pipeline.arena = current.pipeline.arena;  // the arena stays the one this run created
  std::size_t changes = 0;
  for (const PartPlan& old_part : current.parts) {
    const auto it = std::find_if(fresh->parts.begin(), fresh->parts.end(),
                                 [&](const PartPlan& p) { return p.name == old_part.name; });
    if (old_part.role == PartRole::driver) {
      if (it == fresh->parts.end() || !it->same_as(old_part))
        console.log(fmt::format("reload: {} changed; drivers change only with a new run: not applied", old_part.title));
      continue;
    }
    if (it == fresh->parts.end()) {
      console.log(fmt::format("reload: removing {}", old_part.title));
      s.remove(old_part.name, grace_ns);
      ++changes;
    } else if (!it->same_as(old_part)) {
      console.log(fmt::format("reload: restarting {} with: weir {}", old_part.title, fmt::join(it->args, " ")));
      s.remove(old_part.name, grace_ns);
      start_part(s, *fresh, *it, log);
      ++changes;
    }
  }
  for (const PartPlan& new_part : fresh->parts) {
    const bool known = std::any_of(current.parts.begin(), current.parts.end(),
                                   [&](const PartPlan& p) { return p.name == new_part.name; });
    if (known) continue;
    if (new_part.role == PartRole::driver) {
      console.log(fmt::format("reload: new {}; drivers change only with a new run: not applied", new_part.title));
      continue;
    }
    console.log(fmt::format("reload: adding {}", new_part.title));
    start_part(s, *fresh, new_part, log);
    ++changes;
  }
  // Keep the drivers as they run; everything else as the file now says.
  std::vector<PartPlan> parts;
  for (const PartPlan& p : current.parts)
    if (p.role == PartRole::driver) parts.push_back(p);
  for (const PartPlan& p : fresh->parts)
    if (p.role != PartRole::driver) parts.push_back(p);
  fresh->parts = std::move(parts);
  fresh->pipeline.drivers = current.pipeline.drivers;
  current = std::move(*fresh);
  console.log(fmt::format("reload: {} change(s) applied", changes));
}

// Waits until every live consumer has read what was written (or a timeout): what the drivers
// acquired reaches the recorders before they are stopped.
void wait_drained(const core::Arena& arena, std::int64_t timeout_ns, Console& console) {
  const std::int64_t deadline = core::monotonic_ns() + timeout_ns;
  for (;;) {
    std::uint64_t lag = 0;
    for (const auto& c : core::list_channels(arena))
      for (const auto& k : c.consumers)
        if (k.alive && k.policy != core::ConsumerPolicy::latest) lag = std::max(lag, k.lag);
    if (lag == 0) return;
    if (core::monotonic_ns() >= deadline) {
      console.log(fmt::format("stop: consumers still {} block(s) behind after {:.1f} s; stopping them anyway", lag,
                              static_cast<double>(timeout_ns) / 1e9));
      return;
    }
    const timespec pause{0, 20'000'000};
    nanosleep(&pause, nullptr);
  }
}

double process_cpu_s() noexcept {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

int allowed_cpus() noexcept {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return CPU_COUNT(&set);
}

// runs = "controlled": the arena takes runs, numbered and logged in the first recorder's directory.
core::Result<void> prepare_controlled(const core::Arena& arena, const std::filesystem::path& dir) {
  return runctl::enable(arena, dir);
}

// Runs the log still shows running whose `weir run` died with them (killed, a power cut): closed now,
// as interrupted, with what their files hold. Lines to log.
std::vector<std::string> interrupted_note(const core::Arena& arena, const std::filesystem::path& dir) {
  std::vector<std::string> lines;
  const core::RunStatus now = core::RunControl(arena).status();
  auto closed = runctl::close_interrupted(dir, arena.location().name,
                                          now.state == core::RunState::running ? now.number : 0,
                                          "its weir run ended while it ran (killed or lost power); closed at the next start");
  if (!closed) {
    lines.push_back(fmt::format("run log: {}", closed.error().what));
    return lines;
  }
  for (const std::uint64_t n : *closed)
    lines.push_back(fmt::format("run {} was interrupted (its weir run ended while it ran): closed in the run log", n));
  return lines;
}

// A reload while a controlled run runs: a configuration event in the run's record, with the text.
void note_reload(const core::Arena& arena, const std::vector<RecorderTarget>& targets, const std::string& file,
                 const std::function<void(const std::string&)>& log) {
  const core::RunStatus s = core::RunControl(arena).status();
  if (s.state != core::RunState::running) return;
  std::ifstream in(file, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto now = static_cast<std::uint64_t>(core::realtime_ns());
  for (const RecorderTarget& t : targets) {
    auto ok = ledger::update_run_record(ledger::run_record_path(t.dir, t.prefix, s.number), [&](ledger::RunRecord& r) {
      r.config_events.push_back(ledger::ConfigEvent{now, "reload", text});
    });
    if (!ok) log(fmt::format("run {}: {}", s.number, ok.error().what));
  }
  log(fmt::format("run {}: the reload is a configuration event in its record", s.number));
}

// Before the parts stop: a run still running ends here, its files closed by the recorders while
// they still run, and its row written.
void stop_controlled(const core::Arena& arena, const std::function<void(const std::string&)>& log) {
  const core::RunStatus s = core::RunControl(arena).status();
  if (s.state != core::RunState::running) return;
  auto stopped = runctl::stop_run(arena, "weir run", core::RunEnd::stopped, s.number);
  if (stopped)
    log(fmt::format("stopping: {}", runctl::ledger_line(stopped->row)));
  else
    log(fmt::format("stopping: run {}: {}", s.number, stopped.error().what));
}

// What READY=1 promises systemd: every part was started (recorders registered before the drivers)
// and none is waiting to be restarted. A part given up or refused does not hold READY back: the
// status line names it and the alert rules fire on it, while the rest of the logger records.
bool parts_settled(const Supervisor& s) {
  return std::none_of(s.parts().begin(), s.parts().end(),
                      [](const std::unique_ptr<PartState>& p) { return p->status == PartStatus::backoff; });
}

}  // namespace

core::Result<RunReport> run_pipeline(const RunOptions& args) {
  auto loaded = load_checked(args.file, args.check_args, true);
  if (!loaded) return tl::make_unexpected(loaded.error());
  auto arena = prepare_arena(loaded->pipeline, args.replace);
  if (!arena) return tl::make_unexpected(arena.error());
  // One run per pipeline start: every recorder, and every restart of one, writes this run.
  auto targets = recorder_targets(loaded->pipeline, arena->location().name);
  if (!targets) return tl::make_unexpected(targets.error());
  const bool controlled = loaded->pipeline.arena.controlled_runs;
  const std::uint64_t run = controlled ? 0 : next_run(*targets);
  assign_run(loaded->parts, loaded->pipeline, run);
  if (controlled)
    if (auto ok = prepare_controlled(*arena, targets->front().dir); !ok) return tl::make_unexpected(ok.error());
  const bool remove_at_end = !args.keep && !loaded->pipeline.arena.attach &&
                             loaded->pipeline.arena.name.find('/') == std::string::npos;
  core::KvStore kv(*arena);
  const auto me = static_cast<std::uint64_t>(getpid());
  (void)kv.set(kRunPidKey, std::as_bytes(std::span{&me, 1}), core::ValueType::u64);
  (void)kv.set(kRunNumberKey, std::as_bytes(std::span{&run, 1}), core::ValueType::u64);

  struct sigaction stop_action {};
  stop_action.sa_handler = &on_stop;
  sigemptyset(&stop_action.sa_mask);
  sigaction(SIGINT, &stop_action, nullptr);
  sigaction(SIGTERM, &stop_action, nullptr);
  struct sigaction hup_action {};
  hup_action.sa_handler = &on_hup;
  sigemptyset(&hup_action.sa_mask);
  sigaction(SIGHUP, &hup_action, nullptr);

  const double cpu_at_start = process_cpu_s();
  Console console(args.log);
  Supervisor supervisor([&console](const std::string& line) { console.log(line); }, args.weir_exe);
  console.log(fmt::format("weir run {}: arena '{}', {} part(s), {}", args.file, loaded->pipeline.arena.name,
                          loaded->parts.size(),
                          controlled ? fmt::format("controlled runs (weir runctl start {}), numbers and run log in {}",
                                                   arena->location().name, targets->front().dir.string())
                                     : fmt::format("run {}", run)));
  const auto log = [&console](const std::string& line) { console.log(line); };
  if (controlled)  // check_controlled: a controlled pipeline has a recorder, whose directory keeps the runs
    for (const std::string& line : interrupted_note(*arena, targets->front().dir)) console.log(line);
  // Controlled runs keep their run records themselves (the recorders, per run); a free run's are kept here.
  RunLedger ledger(controlled ? std::vector<RecorderTarget>{} : *targets, run, args.file, log);
  supervisor.on_change([&](const PartState& part) {
    publish_part(kv, part);
    if (part.status == PartStatus::given_up || part.status == PartStatus::config_error) ledger.parts(supervisor);
  });
  const auto grace_ns = static_cast<std::int64_t>(args.grace_s * 1e9);
  const std::int64_t first_start = core::monotonic_ns();
  start_in_order(supervisor, *loaded, *arena, grace_ns, [&] {
    ledger.started(*arena);
    ledger.parts(supervisor);
  }, log);

  // `alert` declarations: evaluated and delivered by threads of their own; this loop only prints their log.
  std::optional<alerts::AlertService> alert_service;
  if (!loaded->pipeline.alerts.empty()) {
    std::vector<std::string> recorder_dirs;
    for (const RecorderTarget& t : *targets) recorder_dirs.push_back(t.dir.string());
    alert_service.emplace(*arena, loaded->pipeline.alerts, recorder_dirs);
    alert_service->start();
    console.log(fmt::format("alerts: {} declared, evaluated every {:g} s", loaded->pipeline.alerts.size(),
                            alerts::kEvaluateEveryS));
  }
  std::optional<RunSchedule> schedule;
  if (controlled && loaded->pipeline.arena.schedule) {
    const config::RunScheduleDecl& d = *loaded->pipeline.arena.schedule;
    std::string counted = d.channel;
    if (counted.empty() && !loaded->resolved.channels.empty()) counted = loaded->resolved.channels.front().name;
    schedule.emplace(*arena, d, counted, log);
    schedule->start();
  }
  std::set<std::string> sources;
  for (const auto& [channel, writer] : loaded->resolved.channel_writer)
    if (writer.rfind("driver", 0) == 0) sources.insert(channel);
  RunStatus status(*arena, sources);
  status.follow_kafka(loaded->pipeline);
  const std::int64_t start = core::monotonic_ns();
  const auto source_samples = [&] {
    std::uint64_t n = 0;
    for (const auto& c : core::list_channels(*arena))
      if (sources.count(c.name) != 0) n += c.samples_written;
    return n;
  };
  // The input rate is measured from here on: the drivers have started by then.
  const std::int64_t mark_at = start + std::min<std::int64_t>(1'000'000'000, static_cast<std::int64_t>(args.duration_s * 0.25e9));
  std::int64_t mark_ns = 0;
  std::uint64_t mark_samples = 0;
  std::int64_t next_status = start + 1'000'000'000;
  std::int64_t next_log = start + static_cast<std::int64_t>(args.status_every_s * 1e9);
  // systemd (Type=notify): READY=1, a STATUS= line a second, WATCHDOG=1 from this loop only.
  ServiceNotify notify;
  RunStatus notify_status(*arena, sources);  // its own rate interval: the log line's stays the log's
  std::int64_t next_notify = start;
  if (notify.enabled())
    console.log(notify.watchdog_ns() > 0
                    ? fmt::format("systemd: notify socket set, watchdog every {:.1f} s (pinged every {:.1f} s)",
                                  static_cast<double>(notify.watchdog_ns()) / 1e9,
                                  static_cast<double>(notify.watchdog_ns()) / 2e9)
                    : std::string("systemd: notify socket set, no watchdog"));
  while (stop_signals.load(std::memory_order_relaxed) == 0 && !supervisor.essential_failed()) {
    supervisor.tick(100);
    const std::int64_t now = core::monotonic_ns();
    // Healthy: the loop turns and no essential part failed (the loop's condition). A hung or stopped
    // weir run does not get here, so systemd's watchdog sees the silence.
    notify.healthy(now);
    if (notify.enabled() && (now >= next_notify || (!notify.ready_sent() && parts_settled(supervisor)))) {
      const std::string line = RunStatus::line(notify_status.sample(), supervisor, static_cast<double>(now - start) / 1e9);
      if (!notify.ready_sent() && parts_settled(supervisor))
        notify.ready(line);
      else
        notify.status(line);
      next_notify = now + 1'000'000'000;
    }
    if (alert_service)
      for (const std::string& line : alert_service->take_log()) console.log(line);
    if (mark_ns == 0 && now >= mark_at) {
      mark_samples = source_samples();
      mark_ns = core::monotonic_ns();
    }
    if (args.duration_s > 0 && static_cast<double>(now - start) / 1e9 >= args.duration_s) break;
    if (reload_requested.exchange(false, std::memory_order_relaxed)) {
      reload(args, *loaded, supervisor, console, grace_ns, run);
      if (controlled) note_reload(*arena, *targets, args.file, log);
    }
    if (console.tty() && now >= next_status) {
      console.status(RunStatus::line(status.sample(), supervisor, static_cast<double>(now - start) / 1e9));
      next_status = now + 1'000'000'000;
    } else if (!console.tty() && args.status_every_s > 0 && now >= next_log) {
      console.log(RunStatus::line(status.sample(), supervisor, static_cast<double>(now - start) / 1e9));
      next_log = now + static_cast<std::int64_t>(args.status_every_s * 1e9);
    }
  }
  console.end_status();
  if (alert_service) {  // before the parts stop: a stopping pipeline is no incident
    alert_service->stop();
    for (const std::string& line : alert_service->take_log()) console.log(line);
  }
  if (supervisor.essential_failed()) console.log("an essential part cannot run: stopping the run");
  notify.stopping(supervisor.essential_failed() ? "stopping: an essential part cannot run"
                                                : "stopping: drivers first, then shards and recorders");
  if (notify.send_failures() != 0)
    console.log(fmt::format("systemd: {} notify datagram(s) could not be sent", notify.send_failures()));
  RunReport report;
  report.run = run;
  // What was wrong as the stop began: an essential part down then is a failure of the run.
  report.failures = run_failures(supervisor, true);
  if (schedule) schedule->stop();
  if (controlled) stop_controlled(*arena, log);
  console.log("stopping: drivers first, then shards and recorders once they have read everything");
  // A second SIGINT while stopping kills every part at once.
  std::atomic<bool> stopped{false};
  std::thread second_signal([&] {
    const int seen = stop_signals.load();
    while (!stopped.load()) {
      if (stop_signals.load() > std::max(seen, 1)) {
        supervisor.kill_all();
        return;
      }
      const timespec pause{0, 20'000'000};
      nanosleep(&pause, nullptr);
    }
  });
  RunTotals totals;
  supervisor.stop_all(grace_ns, [&] {
    const std::int64_t drivers_stopped = core::monotonic_ns();
    report.source_s = static_cast<double>(drivers_stopped - first_start) / 1e9;
    if (mark_ns != 0 && drivers_stopped > mark_ns)
      report.source_rate_hz = static_cast<double>(source_samples() - mark_samples) * 1e9 /
                              static_cast<double>(drivers_stopped - mark_ns);
    wait_drained(*arena, grace_ns, console);
    report.channels = core::list_channels(*arena);  // while the consumers are still registered
    totals = status.sample();
    ledger.stopped(*arena);
  });
  ledger.parts(supervisor);
  stopped.store(true);
  second_signal.join();
  report.run_s = static_cast<double>(core::monotonic_ns() - start) / 1e9;
  report.cpus = allowed_cpus();
  report.parts = part_costs(supervisor, loaded->pipeline, loaded->resolved, report.channels);
  report.supervisor_cpu_s = process_cpu_s() - cpu_at_start;
  for (const PartCost& p : report.parts)
    if (p.thread) report.supervisor_cpu_s -= p.cpu_s;
  report.supervisor_cpu_s = std::max(report.supervisor_cpu_s, 0.0);
  report.lost = totals.lost;
  report.dropped = totals.dropped;
  report.errors = totals.errors;
  report.disk_bytes = totals.disk_bytes;
  const double run_s = report.run_s;
  console.log(fmt::format("run summary ({:.1f} s):", run_s));
  for (std::size_t i = 0; i < supervisor.parts().size(); ++i) {
    const PartState& p = *supervisor.parts()[i];
    const PartCost& cost = report.parts[i];
    console.log(fmt::format("  {:<32} {:<10} restarts {}{}, cpu {:.1f} s ({:.0f} % of a core){}{}", p.plan.title,
                            part_status_name(p.status), p.restarts, p.last_exit.empty() ? "" : ", last " + p.last_exit,
                            p.cpu_s, run_s > 0 ? 100 * p.cpu_s / run_s : 0.0, p.plan.thread ? ", a thread" : "",
                            cost.samples != 0 ? fmt::format(", {:.2f} ns/sample", cost.ns_per_sample()) : std::string{}));
  }
  std::string summary = RunStatus::summary(report.channels) + budget_table(report);
  for (std::size_t nl = 0; !summary.empty() && (nl = summary.find('\n')) != std::string::npos; summary.erase(0, nl + 1))
    console.log(summary.substr(0, nl));
  // "lost" comes from the recorders' ledgers: their files and run records, every restart included.
  const LedgerTotals ledger_totals = audit_recorders(ledger, arena->location().name, log);
  report.ledger_lost = ledger_totals.lost;
  if (ledger.targets().empty())
    console.log(fmt::format("  lost {} block(s), dropped at source {}, errors {}, disk {:.1f} MiB", totals.lost,
                            totals.dropped, totals.errors, static_cast<double>(totals.disk_bytes) / 1048576.0));
  else
    console.log(fmt::format("  lost {} block(s) of {} written (the recorders' ledgers, every restart included; disk "
                            "errors {}, unaccounted {}, duplicated {}), dropped at source {}, errors {}, disk {:.1f} MiB",
                            ledger_totals.lost, ledger_totals.written, ledger_totals.disk_error,
                            ledger_totals.unaccounted, ledger_totals.duplicates, totals.dropped, totals.errors,
                            static_cast<double>(totals.disk_bytes) / 1048576.0));
  for (const std::string& problem : ledger_totals.problems) report.failures.push_back(problem);
  if (!controlled && !ledger.targets().empty())  // a controlled run's verdict is left by the door that closed it
    runctl::publish_closed(*arena, run, ledger_totals.unaccounted == 0 && ledger_totals.duplicates == 0);
  for (const std::string& f : run_failures(supervisor, false))
    if (std::find(report.failures.begin(), report.failures.end(), f) == report.failures.end()) report.failures.push_back(f);
  if (report.failures.empty())
    console.log(controlled ? std::string("weir run ok: every part ran as asked")
                           : fmt::format("run {} ok: every part ran as asked", run));
  else
    for (const std::string& f : report.failures) console.log(fmt::format("RUN FAILED: {}", f));
  (void)kv.del(kRunPidKey);
  if (remove_at_end) (void)core::Arena::remove(loaded->pipeline.arena.name);
  return report;
}

ReloadResult request_reload(const core::Arena& arena) {
  core::KvStore kv(arena);
  ReloadResult result;
  core::ValueInfo info;
  if (kv.get(kRunPidKey, std::as_writable_bytes(std::span{&result.pid, 1}), info) != core::KvStatus::ok ||
      result.pid == 0)
    return result;
  result.status = kill(static_cast<pid_t>(result.pid), SIGHUP) == 0 ? ReloadRequest::sent : ReloadRequest::supervisor_gone;
  return result;
}

}  // namespace weir::supervisor
