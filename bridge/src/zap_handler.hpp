#pragma once
// The ZAP handler (ZeroMQ RFC 27): a thread answering inproc://zeromq.zap.01 in the receiver's
// context, accepting a CURVE client only if its public key is in the allowed set, and counting
// both answers. Private to the bridge.
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "weir/bridge/curve_keys.hpp"
#include "weir/core/error.hpp"
#include "zmq_socket.hpp"

namespace weir::bridge {

class ZapHandler {
 public:
  /// Binds inproc://zeromq.zap.01 in `context` and starts the thread. Must come before the server
  /// socket binds or connects, so no handshake goes unchecked. Thread: control.
  [[nodiscard]] static core::Result<std::unique_ptr<ZapHandler>> start(void* context, std::vector<CurveKey> allowed);
  ZapHandler(const ZapHandler&) = delete;
  ZapHandler& operator=(const ZapHandler&) = delete;
  /// Stops and joins the thread (within one poll interval). Thread: control.
  ~ZapHandler();

  [[nodiscard]] std::uint64_t accepted() const noexcept { return accepted_.load(std::memory_order_relaxed); }
  [[nodiscard]] std::uint64_t refused() const noexcept { return refused_.load(std::memory_order_relaxed); }

 private:
  ZapHandler(ZmqSocket socket, std::vector<CurveKey> allowed) noexcept;
  void run() noexcept;
  void answer() noexcept;

  ZmqSocket socket_;
  std::vector<CurveKey> allowed_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> accepted_{0};  // counters: nothing orders on them
  std::atomic<std::uint64_t> refused_{0};
  std::thread thread_;
};

}  // namespace weir::bridge
