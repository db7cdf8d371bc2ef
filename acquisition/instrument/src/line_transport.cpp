// LineTransport: poll()-bounded writes and reads of terminated lines over one non-blocking fd.
#include "weir/instrument/line_transport.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "weir/core/clock.hpp"

namespace weir::acq {

namespace {

using core::kNsPerMs;
constexpr int kMaxDiscardReads = 64;  // discard_input() reads at most this many buffers

// poll() takes milliseconds: round up, so a short timeout still waits instead of spinning.
int poll_ms(std::int64_t remaining_ns) noexcept {
  if (remaining_ns <= 0) return 0;
  const std::int64_t ms = (remaining_ns + kNsPerMs - 1) / kNsPerMs;
  return static_cast<int>(std::min<std::int64_t>(ms, 1'000'000));
}

bool gone(int err) noexcept {
  // The peer reset or left, or the serial device vanished (EIO from a pty or unplugged USB).
  return err == ECONNRESET || err == EPIPE || err == ENOTCONN || err == EIO || err == ENODEV || err == ENXIO ||
         err == ETIMEDOUT || err == EHOSTUNREACH || err == ENETUNREACH;
}

}  // namespace

const char* io_status_name(IoStatus status) noexcept {
  switch (status) {
    case IoStatus::ok: return "ok";
    case IoStatus::timeout: return "timeout";
    case IoStatus::closed: return "closed";
    case IoStatus::too_long: return "too_long";
    case IoStatus::failed: return "failed";
  }
  return "?";
}

LineTransport::LineTransport(const LineFraming& framing) : framing_(framing), input_(framing) {}

LineTransport::~LineTransport() { close(); }

void LineTransport::close() noexcept {
  if (fd_ >= 0) (void)::close(fd_);
  fd_ = -1;
  input_.clear();
}

void LineTransport::adopt(int fd, bool socket) noexcept {
  close();
  fd_ = fd;
  socket_ = socket;
  errno_ = 0;
}

IoStatus LineTransport::write_line(std::string_view text, std::int64_t timeout_ns) noexcept {
  if (fd_ < 0) return IoStatus::closed;
  output_.assign(text);  // grows to the longest command once; commands are short
  output_ += framing_.out_terminator;
  const std::int64_t deadline = core::monotonic_ns() + timeout_ns;
  std::size_t sent = 0;
  while (sent < output_.size()) {
    const ssize_t n = socket_ ? ::send(fd_, output_.data() + sent, output_.size() - sent, MSG_NOSIGNAL)
                              : ::write(fd_, output_.data() + sent, output_.size() - sent);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
      errno_ = errno;
      return gone(errno_) ? IoStatus::closed : IoStatus::failed;
    }
    pollfd p{fd_, POLLOUT, 0};
    const int ready = ::poll(&p, 1, poll_ms(deadline - core::monotonic_ns()));
    if (ready < 0 && errno != EINTR) {
      errno_ = errno;
      return IoStatus::failed;
    }
    if (ready == 0 && core::monotonic_ns() >= deadline) return IoStatus::timeout;
    if (ready > 0 && (p.revents & (POLLERR | POLLHUP | POLLNVAL)) != 0 && (p.revents & POLLOUT) == 0) {
      errno_ = EPIPE;
      return IoStatus::closed;
    }
  }
  return IoStatus::ok;
}

IoStatus LineTransport::fill(std::int64_t timeout_ns) noexcept {
  pollfd p{fd_, POLLIN, 0};
  const int ready = ::poll(&p, 1, poll_ms(timeout_ns));
  if (ready < 0) {
    if (errno == EINTR) return IoStatus::timeout;  // the caller's deadline decides
    errno_ = errno;
    return IoStatus::failed;
  }
  if (ready == 0) return IoStatus::timeout;
  if ((p.revents & POLLNVAL) != 0) {
    errno_ = EBADF;
    return IoStatus::failed;
  }
  // POLLHUP or POLLERR with POLLIN: read what is left first; read() then says 0 or the error.
  const ssize_t n = ::read(fd_, input_.room(), input_.room_bytes());
  if (n > 0) {
    input_.commit(static_cast<std::size_t>(n));
    return IoStatus::ok;
  }
  if (n == 0) {
    errno_ = ECONNRESET;
    return IoStatus::closed;  // end of file: the peer closed
  }
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return IoStatus::timeout;
  errno_ = errno;
  return gone(errno_) ? IoStatus::closed : IoStatus::failed;
}

IoStatus LineTransport::read_line(std::string_view& line, std::int64_t reply_timeout_ns,
                                  std::int64_t read_timeout_ns) noexcept {
  if (fd_ < 0) return IoStatus::closed;
  std::int64_t deadline = core::monotonic_ns() + reply_timeout_ns;
  bool started = input_.buffered() > 0;
  if (started) deadline = core::monotonic_ns() + read_timeout_ns;
  for (;;) {
    switch (input_.next(line)) {
      case LineStatus::line: return IoStatus::ok;
      case LineStatus::too_long: return IoStatus::too_long;
      case LineStatus::partial:
        if (!started) {
          started = true;
          deadline = core::monotonic_ns() + read_timeout_ns;
        }
        break;
      case LineStatus::empty: break;
    }
    const std::int64_t remaining = deadline - core::monotonic_ns();
    if (remaining <= 0) return IoStatus::timeout;
    const std::size_t before = input_.buffered();
    const IoStatus got = fill(remaining);
    if (got == IoStatus::closed || got == IoStatus::failed) return got;
    if (got == IoStatus::ok && started && input_.buffered() > before)
      deadline = core::monotonic_ns() + read_timeout_ns;  // bytes keep coming: the gap restarts
  }
}

IoStatus LineTransport::discard_input() noexcept {
  if (fd_ < 0) return IoStatus::closed;
  input_.clear();
  for (int i = 0; i < kMaxDiscardReads; ++i) {  // bounded: a peer that never stops talking
    const IoStatus got = fill(0);
    if (got == IoStatus::timeout) return IoStatus::ok;
    if (got != IoStatus::ok) return got;
    input_.clear();
  }
  return IoStatus::ok;
}

}  // namespace weir::acq
