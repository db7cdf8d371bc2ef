// Checked ZeroMQ calls.
#include "zmq_socket.hpp"

#include <fmt/format.h>

namespace weir::bridge {

std::string zmq_error(std::string_view call) { return fmt::format("{}: {}", call, zmq_strerror(zmq_errno())); }

core::Result<ZmqContext> make_context() {
  ZmqContext context(zmq_ctx_new());
  if (!context) return core::fail(core::Errc::io_error, zmq_error("zmq_ctx_new"));
  return context;
}

core::Result<void> set_int(void* socket, int option, int value, std::string_view name) {
  if (zmq_setsockopt(socket, option, &value, sizeof value) != 0)
    return core::fail(core::Errc::invalid_argument, zmq_error(fmt::format("zmq_setsockopt {}={}", name, value)));
  return {};
}

core::Result<void> set_bytes(void* socket, int option, const void* value, std::size_t bytes, std::string_view name) {
  if (zmq_setsockopt(socket, option, value, bytes) != 0)
    return core::fail(core::Errc::invalid_argument, zmq_error(fmt::format("zmq_setsockopt {}", name)));
  return {};
}

core::Result<ZmqSocket> make_socket(void* context, int type, std::string_view what) {
  ZmqSocket socket(zmq_socket(context, type));
  if (!socket) return core::fail(core::Errc::io_error, zmq_error(fmt::format("zmq_socket ({})", what)));
  struct Option {
    int option;
    int value;
    const char* name;
  };
  for (const Option& o : {Option{ZMQ_LINGER, kLingerMs, "ZMQ_LINGER"},
                          Option{ZMQ_HEARTBEAT_IVL, kHeartbeatIvlMs, "ZMQ_HEARTBEAT_IVL"},
                          Option{ZMQ_HEARTBEAT_TIMEOUT, kHeartbeatTimeoutMs, "ZMQ_HEARTBEAT_TIMEOUT"},
                          Option{ZMQ_HEARTBEAT_TTL, kHeartbeatTimeoutMs, "ZMQ_HEARTBEAT_TTL"},
                          Option{ZMQ_RECONNECT_IVL, kReconnectIvlMs, "ZMQ_RECONNECT_IVL"},
                          Option{ZMQ_RECONNECT_IVL_MAX, kReconnectIvlMaxMs, "ZMQ_RECONNECT_IVL_MAX"},
                          Option{ZMQ_HANDSHAKE_IVL, kHandshakeIvlMs, "ZMQ_HANDSHAKE_IVL"}})
    if (auto ok = set_int(socket.get(), o.option, o.value, o.name); !ok) return tl::make_unexpected(ok.error());
  return socket;
}

core::Result<void> attach_endpoint(void* socket, const std::string& endpoint, bool bind) {
  const int rc = bind ? zmq_bind(socket, endpoint.c_str()) : zmq_connect(socket, endpoint.c_str());
  if (rc != 0)
    return core::fail(core::Errc::invalid_argument,
                      zmq_error(fmt::format("{} {}", bind ? "zmq_bind" : "zmq_connect", endpoint)));
  return {};
}

std::uint32_t drain_more(void* socket) noexcept {
  std::uint32_t dropped = 0;
  int more = 0;
  std::size_t size = sizeof more;
  while (zmq_getsockopt(socket, ZMQ_RCVMORE, &more, &size) == 0 && more != 0) {
    ZmqMessage part;
    if (zmq_msg_recv(part.get(), socket, ZMQ_DONTWAIT) < 0) break;
    ++dropped;
  }
  return dropped;
}

}  // namespace weir::bridge
