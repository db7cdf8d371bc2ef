// The floors of the channels suite: a minimal shared-memory SPSC ring, a Unix stream socket pair
// and ZeroMQ ipc PUSH/PULL, each moving the same blocks to a forked reader that touches them alike;
// and a bare broadcast ring for the writer's cost with lossy readers.
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <utility>

#include "channel_bench.hpp"
#include "broadcast_ring.hpp"
#include "spsc_ring.hpp"
#include "weir/core/unique_fd.hpp"

#include <zmq.h>

namespace weir::bench {

namespace {

constexpr long kReadyPollNs = 100'000;  // parent's sleep between looks at control.ready

using Fd = core::UniqueFd;

bool set_timeouts(int fd) noexcept {
  const timeval limit{kStallTimeoutNs / 1'000'000'000, 0};
  return ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit) == 0 &&
         ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit) == 0;
}

// Full blocks over a stream socket: loops over short writes and reads; false on error, timeout or EOF.
bool send_all(int fd, const std::byte* p, std::size_t n) noexcept {
  while (n > 0) {
    const ssize_t sent = ::send(fd, p, n, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return false;
    p += sent;
    n -= static_cast<std::size_t>(sent);
  }
  return true;
}

bool recv_all(int fd, std::byte* p, std::size_t n) noexcept {
  while (n > 0) {
    const ssize_t got = ::recv(fd, p, n, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got;
    n -= static_cast<std::size_t>(got);
  }
  return true;
}

}  // namespace

std::string wait_ready(const Control& control, std::uint32_t count,
                       std::vector<std::unique_ptr<ChildProcess>>& children) {
  const std::int64_t deadline_ns = core::monotonic_ns() + kChildReadyTimeoutNs;
  while (control.ready.load(std::memory_order_relaxed) < count) {
    for (auto& child : children) {
      int status = 0;
      if (!child->running(status)) return exit_text(status);
    }
    if (core::monotonic_ns() > deadline_ns) return "reader child never got ready; killed";
    const timespec pause{0, kReadyPollNs};
    (void)::nanosleep(&pause, nullptr);
  }
  return {};
}

std::string collect(ChildProcess& child, ReaderReport& report) {
  int status = 0;
  if (!child.read_exact(&report, sizeof report, kStallTimeoutNs + kChildExitTimeoutNs)) {
    if (!child.running(status)) return exit_text(status);
    return "reader child sent no report; killed";
  }
  if (!child.wait_exit(kChildExitTimeoutNs, status)) return "reader child did not exit; killed";
  if (!WIFEXITED(status) || WEXITSTATUS(status) != kChildOk) return exit_text(status);
  return {};
}

TransferResult transfer_ring(const TransferSpec& spec, const CpuPlan& cpus, const std::vector<std::byte>& source,
                             std::string& error) {
  SpscRing ring(spec.ring_blocks, spec.block_bytes);
  if (!ring.valid()) {
    error = "mmap of the ring failed";
    return std::nullopt;
  }
  auto child_body = [&](Control& control, int fd) {
    ReaderReport r;
    Patience patience;
    control.ready.fetch_add(1, std::memory_order_relaxed);
    for (std::uint64_t n = 0; n < spec.blocks; ++n) {
      const std::byte* block = nullptr;
      while ((block = ring.peek()) == nullptr)
        if (!patience.wait()) return kChildStalled;
      patience.reset();
      r.bad += block_sequence(block) == n ? 0U : 1U;
      r.sum += touch_block(block, spec.block_bytes);
      ring.release();
      ++r.blocks;
    }
    r.end_ns = core::monotonic_ns();
    return send_report(fd, r);
  };
  auto write_all = [&](std::string& err) {
    Patience patience;
    for (std::uint64_t n = 0; n < spec.blocks; ++n) {
      std::byte* block = nullptr;
      while ((block = ring.claim()) == nullptr) {
        if (!patience.wait()) {
          err = "ring full past the stall timeout: the reader stopped";
          return false;
        }
      }
      patience.reset();
      fill_block(block, source.data(), spec.block_bytes, n);
      ring.publish();
    }
    return true;
  };
  return run_transfer(spec, cpus, child_body, write_all, error);
}

std::optional<CostOutcome> ring_writer_cost(const CpuPlan& cpus, std::uint32_t readers, std::int64_t run_ns,
                                            std::uint32_t ring_blocks, const std::vector<std::byte>& source,
                                            std::string& error) {
  BroadcastRing ring(ring_blocks, source.size());
  if (!ring.valid()) {
    error = "mmap of the ring failed";
    return std::nullopt;
  }
  auto reader_body = [&](Control& control, int fd) {
    ReaderReport r;
    Patience patience;
    control.ready.fetch_add(1, std::memory_order_relaxed);
    for (;;) {
      std::uint64_t lost = 0;
      if (const std::byte* block = ring.next(lost); block != nullptr) {
        patience.reset();
        r.sum += touch_block(block, source.size());
        if (ring.done())
          ++r.blocks;
        else
          ++r.lost;
      } else if (lost != 0) {
        patience.reset();
        r.lost += lost;
      } else if (control.stop.load(std::memory_order_relaxed) != 0) {
        break;
      } else if (!patience.wait()) {
        return kChildStalled;
      }
    }
    r.end_ns = core::monotonic_ns();
    return send_report(fd, r);
  };
  std::uint64_t n = 0;
  auto write_one = [&](std::string&) {
    fill_block(ring.claim(), source.data(), source.size(), n++);
    ring.publish();
    return true;
  };
  return run_cost(cpus, readers, run_ns, reader_body, write_one, error);
}

TransferResult transfer_unix(const TransferSpec& spec, const CpuPlan& cpus, const std::vector<std::byte>& source,
                             std::string& error) {
  int fds[2] = {-1, -1};
  if (::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) {
    error = std::string("socketpair: ") + std::strerror(errno);
    return std::nullopt;
  }
  Fd writer_end(fds[0]);
  Fd reader_end(fds[1]);
  if (!set_timeouts(fds[0]) || !set_timeouts(fds[1])) {
    error = std::string("setsockopt: ") + std::strerror(errno);
    return std::nullopt;
  }
  auto child_body = [&](Control& control, int fd) {
    writer_end.reset();
    std::vector<std::byte> buffer(spec.block_bytes);
    ReaderReport r;
    control.ready.fetch_add(1, std::memory_order_relaxed);
    for (std::uint64_t n = 0; n < spec.blocks; ++n) {
      if (!recv_all(reader_end.get(), buffer.data(), spec.block_bytes)) return kChildStalled;
      r.bad += block_sequence(buffer.data()) == n ? 0U : 1U;
      r.sum += touch_block(buffer.data(), spec.block_bytes);
      ++r.blocks;
    }
    r.end_ns = core::monotonic_ns();
    return send_report(fd, r);
  };
  auto write_all = [&](std::string& err) {
    reader_end.reset();  // a reader that dies now makes send() fail at once (EPIPE)
    std::vector<std::byte> block(source);
    for (std::uint64_t n = 0; n < spec.blocks; ++n) {
      std::memcpy(block.data(), &n, sizeof n);  // the stamp; the socket copies the block
      if (!send_all(writer_end.get(), block.data(), spec.block_bytes)) {
        err = errno == EAGAIN || errno == EWOULDBLOCK ? std::string("send timed out: the reader stopped reading")
                                                      : std::string("send: ") + std::strerror(errno);
        return false;
      }
    }
    return true;
  };
  return run_transfer(spec, cpus, child_body, write_all, error);
}

namespace {

constexpr int kZmqTimeoutMs = static_cast<int>(kStallTimeoutNs / 1'000'000);  // send, receive and linger limit

struct ZmqClose {
  void operator()(void* socket) const noexcept { (void)zmq_close(socket); }
};
struct ZmqTerm {
  void operator()(void* context) const noexcept { (void)zmq_ctx_term(context); }  // waits up to the linger
};
using ZmqContext = std::unique_ptr<void, ZmqTerm>;
using ZmqSocket = std::unique_ptr<void, ZmqClose>;

bool set_option(void* socket, int option, int value) noexcept {
  return zmq_setsockopt(socket, option, &value, sizeof value) == 0;
}

std::string zmq_error(const char* call) { return std::string(call) + ": " + zmq_strerror(zmq_errno()); }

/// A received message, closed when destroyed.
class ZmqMessage {
 public:
  ZmqMessage() noexcept { (void)zmq_msg_init(&msg_); }
  ZmqMessage(const ZmqMessage&) = delete;
  ZmqMessage& operator=(const ZmqMessage&) = delete;
  ~ZmqMessage() { (void)zmq_msg_close(&msg_); }
  [[nodiscard]] zmq_msg_t* get() noexcept { return &msg_; }

 private:
  zmq_msg_t msg_;
};

}  // namespace


TransferResult transfer_zmq(const TransferSpec& spec, const CpuPlan& cpus, const std::vector<std::byte>& source,
                            std::string& error) {
  const std::string path = "/tmp/weir-bench-zmq." + std::to_string(::getpid()) + ".ipc";
  const std::string endpoint = "ipc://" + path;
  // The reader binds (a fresh context after fork: a context never crosses fork), the writer connects.
  auto child_body = [&](Control& control, int fd) {
    ZmqContext context(zmq_ctx_new());
    ZmqSocket socket(context ? zmq_socket(context.get(), ZMQ_PULL) : nullptr);
    if (!socket || !set_option(socket.get(), ZMQ_RCVTIMEO, kZmqTimeoutMs) || !set_option(socket.get(), ZMQ_LINGER, 0) ||
        zmq_bind(socket.get(), endpoint.c_str()) != 0) {
      std::fprintf(stderr, "weir bench: zmq reader child: %s\n", zmq_error("bind").c_str());
      return kChildSetupFailed;
    }
    ReaderReport r;
    control.ready.fetch_add(1, std::memory_order_relaxed);
    for (std::uint64_t n = 0; n < spec.blocks; ++n) {
      ZmqMessage msg;
      if (zmq_msg_recv(msg.get(), socket.get(), 0) < 0) return kChildStalled;
      const auto* block = static_cast<const std::byte*>(zmq_msg_data(msg.get()));
      if (zmq_msg_size(msg.get()) != spec.block_bytes || block_sequence(block) != n) {
        ++r.bad;
        continue;
      }
      r.sum += touch_block(block, spec.block_bytes);
      ++r.blocks;
    }
    r.end_ns = core::monotonic_ns();
    return send_report(fd, r);
  };
  auto write_all = [&](std::string& err) {
    ZmqContext context(zmq_ctx_new());
    ZmqSocket socket(context ? zmq_socket(context.get(), ZMQ_PUSH) : nullptr);
    // Linger: closing waits (bounded) until the queued blocks are handed over, not dropped.
    if (!socket || !set_option(socket.get(), ZMQ_SNDTIMEO, kZmqTimeoutMs) ||
        !set_option(socket.get(), ZMQ_LINGER, kZmqTimeoutMs) || zmq_connect(socket.get(), endpoint.c_str()) != 0) {
      err = zmq_error("connect");
      return false;
    }
    std::vector<std::byte> block(source);
    for (std::uint64_t n = 0; n < spec.blocks; ++n) {
      std::memcpy(block.data(), &n, sizeof n);  // the stamp; zmq_send copies the block
      if (zmq_send(socket.get(), block.data(), spec.block_bytes, 0) != static_cast<int>(spec.block_bytes)) {
        err = zmq_errno() == EAGAIN ? std::string("zmq_send timed out: the reader stopped reading")
                                    : zmq_error("zmq_send");
        return false;
      }
    }
    return true;
  };
  TransferResult result = run_transfer(spec, cpus, child_body, write_all, error);
  (void)::unlink(path.c_str());  // the binding child is gone; its socket file may remain
  return result;
}


}  // namespace weir::bench
