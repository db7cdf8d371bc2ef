// The ZAP handler thread.
#include "zap_handler.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <string_view>

namespace weir::bridge {

namespace {

constexpr int kZapPollMs = 100;         // how soon the thread sees stop
constexpr std::size_t kZapFrames = 7;   // version, request id, domain, address, identity, mechanism, credentials

}  // namespace

core::Result<std::unique_ptr<ZapHandler>> ZapHandler::start(void* context, std::vector<CurveKey> allowed) {
  auto socket = make_socket(context, ZMQ_REP, "ZAP handler");
  if (!socket) return tl::make_unexpected(socket.error());
  if (auto ok = attach_endpoint(socket->get(), "inproc://zeromq.zap.01", true); !ok)
    return tl::make_unexpected(ok.error());
  std::unique_ptr<ZapHandler> handler(new ZapHandler(std::move(*socket), std::move(allowed)));
  handler->thread_ = std::thread([h = handler.get()] { h->run(); });
  return handler;
}

ZapHandler::ZapHandler(ZmqSocket socket, std::vector<CurveKey> allowed) noexcept
    : socket_(std::move(socket)), allowed_(std::move(allowed)) {}

ZapHandler::~ZapHandler() {
  stop_.store(true, std::memory_order_relaxed);  // a flag: the thread only reads it
  if (thread_.joinable()) thread_.join();
}

void ZapHandler::run() noexcept {
  while (!stop_.load(std::memory_order_relaxed)) {
    zmq_pollitem_t item{socket_.get(), 0, ZMQ_POLLIN, 0};
    if (zmq_poll(&item, 1, kZapPollMs) > 0 && (item.revents & ZMQ_POLLIN) != 0) answer();
  }
}

void ZapHandler::answer() noexcept {
  std::array<ZmqMessage, kZapFrames> frames;
  std::size_t n = 0;
  bool more = true;
  while (more) {
    ZmqMessage part;
    if (zmq_msg_recv(part.get(), socket_.get(), 0) < 0) return;
    more = part.more();
    if (n < kZapFrames) (void)zmq_msg_move(frames[n].get(), part.get());
    ++n;
  }
  const auto text = [&](std::size_t i) {
    return std::string_view(static_cast<const char*>(frames[i].data()), frames[i].size());
  };
  bool ok = false;
  const char* why = "malformed ZAP request";
  if (n == kZapFrames && text(0) == "1.0" && text(5) == "CURVE" && frames[6].size() == kCurveKeyBytes) {
    CurveKey client{};
    std::memcpy(client.data(), frames[6].data(), client.size());
    ok = std::find(allowed_.begin(), allowed_.end(), client) != allowed_.end();
    why = ok ? "OK" : "client key not in the allowed-keys folder";
  }
  (ok ? accepted_ : refused_).fetch_add(1, std::memory_order_relaxed);
  const std::string_view request_id = n > 1 ? text(1) : std::string_view();
  const std::string_view reply[] = {"1.0", request_id, ok ? "200" : "400", why, ok ? "weir" : "", ""};
  for (std::size_t i = 0; i < std::size(reply); ++i)
    (void)zmq_send(socket_.get(), reply[i].data(), reply[i].size(), i + 1 < std::size(reply) ? ZMQ_SNDMORE : 0);
}

}  // namespace weir::bridge
