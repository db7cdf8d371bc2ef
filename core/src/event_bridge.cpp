#include "weir/core/event_bridge.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>

#include "backing.hpp"

namespace weir::core {

namespace {
constexpr std::int64_t kBridgePollNs = 100'000'000;  // the helper re-checks for stop this often
}  // namespace

Result<std::unique_ptr<EventBridge>> EventBridge::start(Watcher& watcher) {
  const int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd < 0) return fail(Errc::io_error, detail::errno_text("eventfd", errno));
  return std::unique_ptr<EventBridge>(new EventBridge(watcher, fd));
}

EventBridge::EventBridge(Watcher& watcher, int fd) : watcher_(watcher), fd_(fd), thread_([this] { run(); }) {}

EventBridge::~EventBridge() {
  stop_.store(true, std::memory_order_relaxed);  // the helper sees it within one poll interval
  if (thread_.joinable()) thread_.join();
  ::close(fd_);
}

void EventBridge::run() noexcept {
  while (!stop_.load(std::memory_order_relaxed)) {
    if (watcher_.wait(kBridgePollNs) != WaitStatus::pulsed) continue;
    const std::uint64_t one = 1;
    (void)::write(fd_, &one, sizeof(one));  // only fails when the counter would overflow: still readable
  }
}

std::uint64_t EventBridge::consume() noexcept {
  std::uint64_t count = 0;
  if (::read(fd_, &count, sizeof(count)) != static_cast<ssize_t>(sizeof(count))) return 0;
  return count;
}

}  // namespace weir::core
