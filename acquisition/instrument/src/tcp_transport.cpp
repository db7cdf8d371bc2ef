// TcpTransport: resolve, then a non-blocking connect to each address in turn within one deadline.
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>

#include "weir/core/clock.hpp"
#include "weir/instrument/line_transport.hpp"

namespace weir::acq {

namespace {

using core::kNsPerMs;

struct AddrInfoFree {
  void operator()(addrinfo* a) const noexcept { freeaddrinfo(a); }
};

// One address: connect without blocking, wait for it until the deadline. Returns the fd or -errno.
int connect_one(const addrinfo& a, std::int64_t deadline_ns) {
  const int fd = ::socket(a.ai_family, a.ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a.ai_protocol);
  if (fd < 0) return -errno;
  if (::connect(fd, a.ai_addr, a.ai_addrlen) == 0) return fd;
  if (errno != EINPROGRESS) {
    const int err = errno;
    ::close(fd);
    return -err;
  }
  for (;;) {
    const std::int64_t remaining = deadline_ns - core::monotonic_ns();
    if (remaining <= 0) {
      ::close(fd);
      return -ETIMEDOUT;
    }
    pollfd p{fd, POLLOUT, 0};
    const int ready = ::poll(&p, 1, static_cast<int>((remaining + kNsPerMs - 1) / kNsPerMs));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;  // the deadline check above ends it
    int err = 0;
    socklen_t len = sizeof err;
    if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    if (err == 0) return fd;
    ::close(fd);
    return -err;
  }
}

}  // namespace

TcpTransport::TcpTransport(std::string host, std::uint16_t port, const LineFraming& framing)
    : LineTransport(framing), host_(std::move(host)), port_(port) {}

std::string TcpTransport::describe() const {
  const bool v6 = host_.find(':') != std::string::npos;
  return "tcp " + (v6 ? "[" + host_ + "]" : host_) + ":" + std::to_string(port_);
}

core::Result<void> TcpTransport::open(std::int64_t timeout_ns) {
  close();
  const std::int64_t deadline = core::monotonic_ns() + timeout_ns;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_ADDRCONFIG;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port_);
  // Name lookup is the one wait without our own timeout: the resolver's (resolv.conf) bounds it.
  const int rc = ::getaddrinfo(host_.c_str(), service.c_str(), &hints, &found);
  if (rc != 0)
    return core::fail(core::Errc::not_found, describe() + ": cannot resolve '" + host_ + "': " + gai_strerror(rc));
  const std::unique_ptr<addrinfo, AddrInfoFree> list(found);
  int last = ETIMEDOUT;
  for (const addrinfo* a = list.get(); a != nullptr; a = a->ai_next) {
    const int fd = connect_one(*a, deadline);
    if (fd >= 0) {
      const int one = 1;
      (void)::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // short commands go out at once
      adopt(fd, true);
      return {};
    }
    last = -fd;
    if (core::monotonic_ns() >= deadline) break;
  }
  return core::fail(core::Errc::io_error, describe() + ": connect: " + std::strerror(last));
}

}  // namespace weir::acq
