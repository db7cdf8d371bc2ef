#pragma once
// systemd's notify protocol for `weir run` (sd_notify(3), through Debian's libsystemd): READY=1 once
// every part runs, STATUS= with the status line, WATCHDOG=1 from the supervisor's loop while it is
// healthy, STOPPING=1 as the stop begins. Off (every call a no-op) when weir was built without
// libsystemd or when NOTIFY_SOCKET is unset: a `weir run` from a shell sends nothing.
#include <cstdint>
#include <string>
#include <string_view>

namespace weir::supervisor {

class ServiceNotify {
 public:
  /// Reads NOTIFY_SOCKET and the watchdog's interval (sd_watchdog_enabled: WATCHDOG_USEC, and
  /// WATCHDOG_PID when set must be this process). The environment is left as it is. Thread: control only.
  ServiceNotify() noexcept;

  /// True when weir speaks the protocol (built with libsystemd) and a service manager listens.
  [[nodiscard]] bool enabled() const noexcept { return enabled_; }
  /// The watchdog's interval as the service manager set it; 0 when it is off.
  [[nodiscard]] std::int64_t watchdog_ns() const noexcept { return watchdog_ns_; }
  /// True once ready() was sent.
  [[nodiscard]] bool ready_sent() const noexcept { return ready_sent_; }
  /// Datagrams that could not be sent (no listener, a full queue): counted, never logged one by one.
  [[nodiscard]] std::uint64_t send_failures() const noexcept { return send_failures_; }

  /// READY=1 with the status line. Sent once; later calls do nothing. Thread: control only.
  void ready(std::string_view status_line) noexcept;
  /// STATUS=<line> (newlines become spaces). Thread: control only.
  void status(std::string_view status_line) noexcept;
  /// WATCHDOG=1 when half the watchdog interval has passed since the last ping. Call it from the
  /// supervisor's loop on every pass that found the supervisor healthy, never from another thread:
  /// a loop that stops turning (hung, SIGSTOP) stops the pings. One datagram, no waiting for a reply.
  /// Thread: control only.
  void healthy(std::int64_t now_ns) noexcept;
  /// STOPPING=1 with the reason as the status. Thread: control only.
  void stopping(std::string_view why) noexcept;

 private:
  void send(const std::string& state) noexcept;

  bool enabled_ = false;
  bool ready_sent_ = false;
  std::int64_t watchdog_ns_ = 0;
  std::int64_t next_ping_ns_ = 0;
  std::uint64_t send_failures_ = 0;  // counted, never logged per datagram
};

}  // namespace weir::supervisor
