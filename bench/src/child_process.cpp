#include "child_process.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>

#include "harness.hpp"

namespace weir::bench {

namespace {

constexpr long kWaitSliceNs = 1'000'000;  // sleep between waitpid polls
constexpr int kPollSliceMs = 1;           // longest single poll() while reading the pipe

bool pin(int cpu) noexcept {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  return ::sched_setaffinity(0, sizeof one, &one) == 0;
}

}  // namespace

ChildProcess::~ChildProcess() {
  if (pid_ > 0) {
    (void)::kill(pid_, SIGKILL);
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  if (fd_ >= 0) (void)::close(fd_);
}

bool ChildProcess::running(int& status) noexcept {
  if (pid_ <= 0) return false;
  pid_t done = 0;
  do {
    done = ::waitpid(pid_, &status, WNOHANG);
  } while (done < 0 && errno == EINTR);
  if (done == 0) return true;
  if (done < 0) status = 0;  // not our child any more: nothing to tell
  pid_ = -1;
  return false;
}

bool ChildProcess::wait_exit(std::int64_t timeout_ns, int& status) noexcept {
  const std::int64_t deadline_ns = core::monotonic_ns() + timeout_ns;
  while (running(status)) {
    if (core::monotonic_ns() > deadline_ns) return false;
    const timespec slice{0, kWaitSliceNs};
    (void)::nanosleep(&slice, nullptr);
  }
  return true;
}

bool ChildProcess::read_exact(void* out, std::size_t n, std::int64_t timeout_ns) noexcept {
  auto* bytes = static_cast<char*>(out);
  std::size_t got = 0;
  const std::int64_t deadline_ns = core::monotonic_ns() + timeout_ns;
  while (got < n) {
    if (core::monotonic_ns() > deadline_ns) return false;
    pollfd p{fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, kPollSliceMs);
    if (ready < 0 && errno != EINTR) return false;
    if (ready <= 0) continue;
    const ssize_t r = ::read(fd_, bytes + got, n - got);
    if (r == 0 || (r < 0 && errno != EINTR)) return false;  // EOF: the child is gone
    if (r > 0) got += static_cast<std::size_t>(r);
  }
  return true;
}

std::string exit_text(int status, const char* who) {
  if (WIFEXITED(status)) return std::string(who) + " exited with " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string(who) + " killed by signal " + std::to_string(WTERMSIG(status));
  return std::string(who) + " stopped";
}

CpuPair::CpuPair(Placement placement) noexcept {
  CPU_ZERO(&original_);
  if (::sched_getaffinity(0, sizeof original_, &original_) != 0) return;
  for (int cpu = 0; cpu < CPU_SETSIZE && second_ < 0; ++cpu) {
    if (!CPU_ISSET(cpu, &original_)) continue;
    (first_ < 0 ? first_ : second_) = cpu;
  }
  if (placement == Placement::one_cpu) second_ = first_;
  if (second_ >= 0) pinned_ = pin(first_);
}

CpuPair::~CpuPair() {
  if (pinned_) (void)::sched_setaffinity(0, sizeof original_, &original_);
}

void CpuPair::pin_child() const noexcept {
  if (pinned_) (void)pin(second_);
}

}  // namespace weir::bench
