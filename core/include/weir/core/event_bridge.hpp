#pragma once
// Turns signal-group pulses into readiness of one eventfd, so an epoll or Boost.Asio loop waits on
// any number of groups with one descriptor and one helper thread, not a thread per group.
#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>

#include "weir/core/signals.hpp"

namespace weir::core {

class EventBridge {
 public:
  /// Starts the helper thread for a watcher whose subscriptions are complete. The watcher is
  /// shared: the bridge thread only waits on it, the loop thread only drains it.
  /// Fails when eventfd() fails. Thread: control.
  [[nodiscard]] static Result<std::unique_ptr<EventBridge>> start(Watcher& watcher);

  EventBridge(const EventBridge&) = delete;
  EventBridge& operator=(const EventBridge&) = delete;
  /// Stops and joins the helper thread (within one poll interval) and closes the eventfd.
  ~EventBridge();

  /// Readable when at least one pulse arrived; read its 8-byte counter to re-arm it.
  [[nodiscard]] int fd() const noexcept { return fd_; }
  /// Reads (and so re-arms) the eventfd without blocking; returns pulses counted since the last read.
  std::uint64_t consume() noexcept;

 private:
  EventBridge(Watcher& watcher, int fd);
  void run() noexcept;

  Watcher& watcher_;
  int fd_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace weir::core
