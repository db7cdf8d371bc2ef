// tango "serve", runs: the run attributes kept up to date from the run-control block (state, number,
// metadata, files, blocks captured), and the commands StartRun, StopRun and AbortRun made through the
// doors library (door "tango") as `weir runctl` makes them; a refusal is a DevFailed WEIR_RUN_REFUSED.
#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "server_impl.hpp"
#include "weir/core/channel.hpp"
#include "weir/ledger/run_record.hpp"
#include "weir/runctl/doors.hpp"

namespace weir::tango::detail {

namespace {

constexpr std::string_view kDoor = "tango";

timeval time_now() {
  timeval t{};
  gettimeofday(&t, nullptr);
  return t;
}

}  // namespace

void Server::message(const std::string& text) {
  if (run_message_) set_text(*run_message_, text, Tango::ATTR_VALID);
}

void Server::update_runs(bool force) {
  const std::uint32_t changes = rc_.changes();
  if (force || changes != run_changes_seen_) {  // a transition: rare, so the copy may allocate
    run_changes_seen_ = changes;
    const core::RunStatus s = rc_.status();
    running_ = s.state == core::RunState::running;
    set_text(*run_state_, running_ ? "Running" : "Idle", Tango::ATTR_VALID);
    set_i64(*run_number_, static_cast<Tango::DevLong64>(s.number), Tango::ATTR_VALID);
    set_text(*run_title_, s.meta.title, Tango::ATTR_VALID);
    set_text(*run_operator_, s.meta.operator_name, Tango::ATTR_VALID);
    set_text(*run_sample_, s.meta.sample, Tango::ATTR_VALID);
    set_text(*run_comment_, s.meta.comment, Tango::ATTR_VALID);
    set_text(*run_dir_, s.dir, Tango::ATTR_VALID);
    const std::string file =
        s.number > 0 && !s.dir.empty() ? ledger::run_record_path(s.dir, arena_.location().name, s.number).string() : "";
    set_text(*run_file_, file, Tango::ATTR_VALID);
  }
  // Blocks the recorders wrote since the run began: their consumer rows' blocks_out (recorders of
  // controlled runs write only inside runs), less what they showed while idle.
  const std::uint64_t sum = controls::recorder_blocks_out(arena_);
  if (!running_) {
    captured_base_ = sum;
    if (force) set_i64(*num_captured_, 0, Tango::ATTR_VALID);
  } else {
    captured_base_ = std::min(captured_base_, sum);  // a recorder restarted: its row counts from 0
    set_i64(*num_captured_, static_cast<Tango::DevLong64>(sum - captured_base_), Tango::ATTR_VALID);
  }
}

Tango::DevLong64 Server::start_run(const Tango::DevVarStringArray& args) {
  commands_.fetch_add(1, std::memory_order_relaxed);  // relaxed: counters for the report
  now_ = time_now();
  std::string refusal;
  core::RunMeta meta;
  if (args.length() > 4) {
    refusal = fmt::format("StartRun takes at most 4 strings (title, operator, sample, comment), not {}", args.length());
  } else {
    std::string* fields[] = {&meta.title, &meta.operator_name, &meta.sample, &meta.comment};
    for (CORBA::ULong i = 0; i < args.length(); ++i) *fields[i] = args[i].in();
    auto s = runctl::start_run(arena_, meta, kDoor);
    if (s) {
      message(fmt::format("run {} started", s->number));
      update_runs(true);
      return static_cast<Tango::DevLong64>(s->number);
    }
    refusal = s.error().what;
  }
  refused_.fetch_add(1, std::memory_order_relaxed);
  message("StartRun refused: " + refusal);
  Tango::Except::throw_exception(kRunRefused, "StartRun refused: " + refusal, "weir::tango::Server::start_run");
}

std::string Server::stop_run(bool abort) {
  commands_.fetch_add(1, std::memory_order_relaxed);  // relaxed: counters for the report
  const char* verb = abort ? "AbortRun" : "StopRun";
  auto s = runctl::stop_run(arena_, kDoor, abort ? core::RunEnd::aborted : core::RunEnd::stopped);
  now_ = time_now();
  if (!s) {
    refused_.fetch_add(1, std::memory_order_relaxed);
    const std::string text = fmt::format("{} refused: {}", verb, s.error().what);
    message(text);
    Tango::Except::throw_exception(kRunRefused, text, "weir::tango::Server::stop_run");
  }
  std::string text = runctl::ledger_line(s->row);
  if (!s->closed) text += fmt::format(" ({} recorder(s) had not closed the run's files)", s->late.size());
  message(text);
  update_runs(true);
  return text;
}

}  // namespace weir::tango::detail
