#pragma once
// Owned ZeroMQ handles and checked calls: every failure becomes an Error naming the call and the
// endpoint. Private to the bridge.
#include <zmq.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "weir/core/error.hpp"

namespace weir::bridge {

struct ContextClose {
  void operator()(void* context) const noexcept { (void)zmq_ctx_term(context); }  // waits for every socket's linger
};
struct SocketClose {
  void operator()(void* socket) const noexcept { (void)zmq_close(socket); }
};
using ZmqContext = std::unique_ptr<void, ContextClose>;
using ZmqSocket = std::unique_ptr<void, SocketClose>;

/// One message, closed on destruction. Thread: one.
class ZmqMessage {
 public:
  ZmqMessage() noexcept { (void)zmq_msg_init(&msg_); }
  ~ZmqMessage() { (void)zmq_msg_close(&msg_); }
  ZmqMessage(const ZmqMessage&) = delete;
  ZmqMessage& operator=(const ZmqMessage&) = delete;
  [[nodiscard]] zmq_msg_t* get() noexcept { return &msg_; }
  [[nodiscard]] const void* data() noexcept { return zmq_msg_data(&msg_); }
  [[nodiscard]] std::size_t size() noexcept { return zmq_msg_size(&msg_); }
  [[nodiscard]] bool more() noexcept { return zmq_msg_more(&msg_) != 0; }
  /// Re-initialises to `bytes` bytes (libzmq allocates them). False when it could not.
  bool reset(std::size_t bytes) noexcept {
    (void)zmq_msg_close(&msg_);
    return zmq_msg_init_size(&msg_, bytes) == 0;
  }

 private:
  zmq_msg_t msg_;
};

/// "call: reason" with zmq_strerror of the current errno.
[[nodiscard]] std::string zmq_error(std::string_view call);

[[nodiscard]] core::Result<ZmqContext> make_context();
/// A socket of `type` with linger, heartbeats and reconnect intervals set (limits in this file).
[[nodiscard]] core::Result<ZmqSocket> make_socket(void* context, int type, std::string_view what);
[[nodiscard]] core::Result<void> set_int(void* socket, int option, int value, std::string_view name);
[[nodiscard]] core::Result<void> set_bytes(void* socket, int option, const void* value, std::size_t bytes,
                                           std::string_view name);
/// zmq_bind or zmq_connect, naming the endpoint in the error.
[[nodiscard]] core::Result<void> attach_endpoint(void* socket, const std::string& endpoint, bool bind);
/// Drains the remaining frames of a multipart message. Returns how many it dropped.
std::uint32_t drain_more(void* socket) noexcept;

inline constexpr int kHeartbeatIvlMs = 500;       // ZMQ_HEARTBEAT_IVL: a PING this often on an idle link
inline constexpr int kHeartbeatTimeoutMs = 2000;  // ZMQ_HEARTBEAT_TIMEOUT: no traffic this long: link down
inline constexpr int kReconnectIvlMs = 100;       // ZMQ_RECONNECT_IVL: first retry after a loss
inline constexpr int kReconnectIvlMaxMs = 2000;   // ZMQ_RECONNECT_IVL_MAX: retries back off up to this
inline constexpr int kLingerMs = 2000;            // ZMQ_LINGER: what is queued at close goes out for this long
inline constexpr int kHandshakeIvlMs = 5000;      // ZMQ_HANDSHAKE_IVL: a handshake (CURVE) must end within

}  // namespace weir::bridge
