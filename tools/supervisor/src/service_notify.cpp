#include "service_notify.hpp"

#include <cstdlib>

#if WEIR_HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>
#endif

namespace weir::supervisor {

namespace {

std::string notify_line(std::string_view text) {
  std::string out(text);
  for (char& ch : out)
    if (ch == '\n' || ch == '\r') ch = ' ';
  return out;
}

}  // namespace

ServiceNotify::ServiceNotify() noexcept {
#if WEIR_HAVE_LIBSYSTEMD
  const char* socket = std::getenv("NOTIFY_SOCKET");
  enabled_ = socket != nullptr && socket[0] != '\0';
  std::uint64_t usec = 0;
  if (enabled_ && sd_watchdog_enabled(0, &usec) > 0 && usec > 0) watchdog_ns_ = static_cast<std::int64_t>(usec) * 1000;
#endif
}

void ServiceNotify::send(const std::string& state) noexcept {
#if WEIR_HAVE_LIBSYSTEMD
  // sd_notify: one datagram on a fresh socket; the manager's queue is drained by it, never by us.
  if (sd_notify(0, state.c_str()) <= 0) ++send_failures_;
#else
  (void)state;
#endif
}

void ServiceNotify::ready(std::string_view status_line) noexcept {
  if (!enabled_ || ready_sent_) return;
  ready_sent_ = true;
  try {
    send("READY=1\nSTATUS=" + notify_line(status_line));
  } catch (...) {  // std::bad_alloc building the text: this message is lost, the run goes on
    ++send_failures_;
  }
}

void ServiceNotify::status(std::string_view status_line) noexcept {
  if (!enabled_) return;
  try {
    send("STATUS=" + notify_line(status_line));
  } catch (...) {
    ++send_failures_;
  }
}

void ServiceNotify::healthy(std::int64_t now_ns) noexcept {
  if (!enabled_ || watchdog_ns_ <= 0 || now_ns < next_ping_ns_) return;
  next_ping_ns_ = now_ns + watchdog_ns_ / 2;  // systemd's advice: ping at half the interval
  send("WATCHDOG=1");
}

void ServiceNotify::stopping(std::string_view why) noexcept {
  if (!enabled_) return;
  try {
    send("STOPPING=1\nSTATUS=" + notify_line(why));
  } catch (...) {
    ++send_failures_;
  }
}

}  // namespace weir::supervisor
