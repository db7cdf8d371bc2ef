// epics "serve", run control: the run's PVs kept up to date from the run-control block (state, number,
// files, blocks captured), the puts to Capture, Start, Stop and Abort queued for the control thread,
// and that thread, which makes each transition through the doors library (door "epics"), reports it
// in RunMessage_RBV and completes the asynchronous put.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include <boRecord.h>
#include <callback.h>
#include <dbAccess.h>
#include <dbCommon.h>
#include <dbLock.h>
#include <fmt/format.h>

#include "ioc_server_impl.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/clock.hpp"
#include "weir/ledger/run_record.hpp"
#include "weir/runctl/doors.hpp"

namespace weir::epics::detail {

namespace {

constexpr std::string_view kDoor = "epics";
constexpr std::size_t kControlQueue = 16;                   // run-control puts waiting for the control thread
constexpr int kCallbackRetries = 500;                       // a full callback queue is asked again this often ...
constexpr std::int64_t kCallbackRetryNs = 10'000'000;       // ... this far apart (5 s in all)

}  // namespace

void Server::show_capture(bool running) {
  dbCommon* rec = capture_->rec;
  dbScanLock(rec);
  auto* bo = reinterpret_cast<boRecord*>(rec);
  if (rec->pact == 0 && (rec->udf != 0 || (bo->val != 0) != running)) {
    bo->val = running ? 1 : 0;
    rec->udf = 0;
    capture_->syncing = true;
    (void)dbProcess(rec);
    capture_->syncing = false;
  }
  dbScanUnlock(rec);
}

void Server::update_runs(std::int64_t now_rt, bool force) {
  const epicsTimeStamp t = epics_time(now_rt);
  const std::uint32_t changes = rc_.changes();
  if (force || changes != run_changes_seen_) {  // a transition: rare, so the copy may allocate
    run_changes_seen_ = changes;
    const core::RunStatus s = rc_.status();
    running_ = s.state == core::RunState::running;
    (void)stage_i64(*run_state_, running_ ? 1 : 0, NO_ALARM, NO_ALARM, t);
    (void)stage_i64(*capture_rbv_, running_ ? 1 : 0, NO_ALARM, NO_ALARM, t);
    (void)stage_i64(*run_number_, static_cast<std::int64_t>(s.number), NO_ALARM, NO_ALARM, t);
    (void)stage_i64(*file_number_, static_cast<std::int64_t>(s.number), NO_ALARM, NO_ALARM, t);
    const std::string dir = s.dir.empty() ? options_.record_dir : s.dir;
    (void)stage_text(*file_path_, dir, NO_ALARM, NO_ALARM, t);
    (void)stage_text(*file_path_rbv_, dir, NO_ALARM, NO_ALARM, t);
    const std::string full =
        s.number > 0 && !dir.empty() ? ledger::run_record_path(dir, arena_.location().name, s.number).string() : "";
    (void)stage_text(*full_file_name_, full, NO_ALARM, NO_ALARM, t);
    show_capture(running_);
  }
  // Blocks the recorders wrote since the run began: their consumer rows' blocks_out (recorders of
  // controlled runs write only inside runs), less what they showed while idle.
  const std::uint64_t sum = controls::recorder_blocks_out(arena_);
  if (!running_) {
    captured_base_ = sum;
  } else {
    captured_base_ = std::min(captured_base_, sum);  // a recorder restarted: its row counts from 0
    (void)stage_i64(*num_captured_, static_cast<std::int64_t>(sum - captured_base_), NO_ALARM, NO_ALARM, t);
  }
}

bool Server::queue(Pv& pv, std::int64_t v) noexcept {
  try {
    const std::lock_guard lock(control_m_);
    if (control_quit_ || control_q_.size() >= kControlQueue) return counted(false);
    control_q_.push_back(ControlAsk{&pv, v});
  } catch (...) {
    return counted(false);
  }
  control_cv_.notify_one();
  return true;
}

// --- the control thread ----------------------------------------------------------------------------

void Server::message(const std::string& text, bool error) {
  if (run_message_ == nullptr) return;
  (void)stage_text(*run_message_, text, error ? MINOR_ALARM : NO_ALARM, error ? STATE_ALARM : NO_ALARM,
                   epics_time(core::realtime_ns()));
}

void Server::transition(const ControlAsk& ask, bool quitting) {
  Pv& pv = *ask.pv;
  bool ok = false;
  std::int64_t value = 0;
  std::string text;
  const auto start = [&] {
    core::RunMeta meta;
    {
      const std::lock_guard lock(meta_m_);
      meta = next_meta_;
    }
    auto s = runctl::start_run(arena_, meta, kDoor);
    ok = s.has_value();
    text = ok ? fmt::format("run {} started", s->number) : s.error().what;
  };
  const auto stop = [&](core::RunEnd how) {
    auto s = runctl::stop_run(arena_, kDoor, how);
    ok = s.has_value();
    const char* verb = how == core::RunEnd::aborted ? "abort" : "stop";
    if (!ok) {
      text = fmt::format("{}: {}", verb, s.error().what);
      return;
    }
    text = runctl::ledger_line(s->row);
    if (!s->closed) text += fmt::format(" ({} recorder(s) had not closed the run's files)", s->late.size());
  };
  if (quitting) {
    text = "refused: weir-epics is stopping";
  } else {
    switch (pv.role) {
      case Role::capture:
        if (ask.value != 0) start();
        else if (rc_.status().state == core::RunState::idle) ok = true, text = "no run is running";
        else stop(core::RunEnd::stopped);
        value = rc_.status().state == core::RunState::running ? 1 : 0;
        break;
      case Role::run_start: start(); break;
      case Role::run_stop: stop(core::RunEnd::stopped); break;
      case Role::run_abort: stop(core::RunEnd::aborted); break;
      default: text = "refused: not a run-control PV"; break;
    }
  }
  (void)counted(ok);
  message(text, !ok);
  {
    const std::lock_guard lock(pv.m);
    pv.async_ok = ok;
    pv.async_val = value;
  }
  // The put's second pass. A full callback queue is retried, bounded: the record stays active until
  // it is queued, and a client's put-callback waits for it.
  for (int attempt = 0; attempt < kCallbackRetries; ++attempt) {
    if (callbackRequestProcessCallback(&pv.done, priorityLow, pv.rec) == 0) return;
    std::this_thread::sleep_for(std::chrono::nanoseconds(kCallbackRetryNs));
  }
  refused_.fetch_add(1, std::memory_order_relaxed);  // relaxed: a counter for the report
}

void Server::control_loop() {
  std::unique_lock lock(control_m_);
  for (;;) {
    control_cv_.wait_for(lock, std::chrono::nanoseconds(kMaxWaitNs), [&] { return control_quit_ || !control_q_.empty(); });
    if (control_q_.empty()) {
      if (control_quit_) return;
      continue;
    }
    const ControlAsk ask = control_q_.front();
    control_q_.pop_front();
    const bool quitting = control_quit_;
    lock.unlock();
    transition(ask, quitting);
    lock.lock();
  }
}

void Server::stop_control() noexcept {
  {
    const std::lock_guard lock(control_m_);
    control_quit_ = true;
  }
  control_cv_.notify_all();
  if (control_.joinable()) control_.join();
}

}  // namespace weir::epics::detail
