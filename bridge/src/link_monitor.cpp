// Monitor events into link state.
#include "link_monitor.hpp"

#include <cstring>

namespace weir::bridge {

core::Result<LinkMonitor> LinkMonitor::start(void* context, void* socket, const std::string& tag) {
  const std::string endpoint = "inproc://weir-monitor-" + tag;
  const int events = ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH |
                     ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                     ZMQ_EVENT_DISCONNECTED;
  if (zmq_socket_monitor(socket, endpoint.c_str(), events) != 0)
    return core::fail(core::Errc::io_error, zmq_error("zmq_socket_monitor " + endpoint));
  auto pair = make_socket(context, ZMQ_PAIR, "monitor");
  if (!pair) return tl::make_unexpected(pair.error());
  if (auto ok = attach_endpoint(pair->get(), endpoint, false); !ok) return tl::make_unexpected(ok.error());
  return LinkMonitor(std::move(*pair));
}

std::uint32_t LinkMonitor::poll() noexcept {
  std::uint32_t n = 0;
  for (;;) {
    ZmqMessage event;
    if (zmq_msg_recv(event.get(), pair_.get(), ZMQ_DONTWAIT) < 0) return n;
    std::uint16_t id = 0;
    if (event.size() >= sizeof id) std::memcpy(&id, event.data(), sizeof id);
    (void)drain_more(pair_.get());  // the endpoint frame
    ++n;
    switch (id) {
      case ZMQ_EVENT_HANDSHAKE_SUCCEEDED:
        ++handshakes_;
        ++connections_;
        break;
      case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH:
      case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:
        ++auth_failures_;
        ++failed_open_;
        break;
      case ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL:
        ++failed_open_;
        break;
      case ZMQ_EVENT_DISCONNECTED:
        ++disconnects_;
        if (failed_open_ > 0) {
          --failed_open_;  // the end of a connection that never came up
        } else if (connections_ > 0) {
          --connections_;
        }
        break;
      default:
        break;
    }
  }
}

}  // namespace weir::bridge
