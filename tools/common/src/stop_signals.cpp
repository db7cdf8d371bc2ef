#include "weir/tools/stop_signals.hpp"

namespace weir::tools {

namespace {

std::atomic<bool> stop_requested{false};
static_assert(std::atomic<bool>::is_always_lock_free);

void on_stop_signal(int) { stop_requested.store(true, std::memory_order_relaxed); }  // only a flag

}  // namespace

StopSignals::StopSignals(Sigpipe pipe) noexcept : pipe_ignored_(pipe == Sigpipe::ignore) {
  stop_requested.store(false, std::memory_order_relaxed);
  struct sigaction action {};
  action.sa_handler = &on_stop_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &old_int_);
  sigaction(SIGTERM, &action, &old_term_);
  if (pipe_ignored_) {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, &old_pipe_);
  }
}

StopSignals::~StopSignals() {
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
  if (pipe_ignored_) sigaction(SIGPIPE, &old_pipe_, nullptr);
}

const std::atomic<bool>& StopSignals::flag() noexcept { return stop_requested; }

}  // namespace weir::tools
