#pragma once
// Link state from a socket's monitor events: connections that finished their handshake, handshakes
// refused (authentication or protocol: a wrong key), disconnects. Private to the bridge.
#include <cstdint>
#include <string>

#include "weir/core/error.hpp"
#include "zmq_socket.hpp"

namespace weir::bridge {

class LinkMonitor {
 public:
  /// Starts monitoring `socket` on an inproc PAIR named after `tag`. Thread: control.
  [[nodiscard]] static core::Result<LinkMonitor> start(void* context, void* socket, const std::string& tag);

  /// Reads every pending event without waiting; returns how many. Thread: the socket's thread.
  std::uint32_t poll() noexcept;
  /// The monitor's PAIR socket, for zmq_poll.
  [[nodiscard]] void* socket() const noexcept { return pair_.get(); }

  [[nodiscard]] std::uint32_t connections() const noexcept { return connections_; }
  [[nodiscard]] std::uint64_t auth_failures() const noexcept { return auth_failures_; }
  [[nodiscard]] std::uint64_t handshakes() const noexcept { return handshakes_; }
  [[nodiscard]] std::uint64_t disconnects() const noexcept { return disconnects_; }

 private:
  explicit LinkMonitor(ZmqSocket pair) noexcept : pair_(std::move(pair)) {}
  ZmqSocket pair_;
  std::uint32_t connections_ = 0;   // handshakes succeeded, less their disconnects
  std::uint32_t failed_open_ = 0;   // failed handshakes whose disconnect has not come yet
  std::uint64_t auth_failures_ = 0;
  std::uint64_t handshakes_ = 0;
  std::uint64_t disconnects_ = 0;
};

}  // namespace weir::bridge
