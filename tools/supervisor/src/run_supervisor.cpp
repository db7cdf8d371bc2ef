#include "run_supervisor.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "weir/core/clock.hpp"
#include "weir/tools/exit_codes.hpp"

namespace weir::supervisor {

namespace {

double cpu_seconds(const rusage& ru) noexcept {
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

// What an exit status means, for the statuses weir commands give it.
std::string describe_exit(int code) {
  switch (code) {
    case tools::kExitUsage: return fmt::format("exit {} (configuration error)", code);
    case tools::kExitDiskFull: return fmt::format("exit {} (disk full)", code);
    case tools::kExitDiskFault: return fmt::format("exit {} (disk fault)", code);
    default: return fmt::format("exit {}", code);
  }
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return describe_exit(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const char* name = sigabbrev_np(WTERMSIG(status));
    return name != nullptr ? fmt::format("killed by SIG{}", name) : fmt::format("killed by {}", WTERMSIG(status));
  }
  return "ended";
}

// The calling thread's CPU time so far.
std::int64_t thread_cpu_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

cpu_set_t one_cpu(int cpu) noexcept {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(static_cast<std::size_t>(cpu), &set);
  return set;
}

}  // namespace

const char* part_status_name(PartStatus status) noexcept {
  switch (status) {
    case PartStatus::running: return "running";
    case PartStatus::backoff: return "restarting";
    case PartStatus::finished: return "finished";
    case PartStatus::given_up: return "given up";
    case PartStatus::stopped: return "stopped";
    case PartStatus::config_error: return "configuration error";
  }
  return "?";
}

Supervisor::~Supervisor() {
  kill_all();
  for (auto& p : parts_) {
    if (p->pid > 0) waitpid(p->pid, nullptr, 0);
    if (p->thread && p->thread->joinable()) {
      p->thread_stop->store(true);
      p->thread->join();
    }
    if (p->out_fd >= 0) close(p->out_fd);
  }
}

void Supervisor::add(PartPlan plan, ThreadMain thread_main) {
  auto part = std::make_unique<PartState>();
  part->plan = std::move(plan);
  part->thread_main = std::move(thread_main);
  PartState& ref = *part;
  parts_.push_back(std::move(part));
  start(ref);
}

void Supervisor::start(PartState& part) {
  part.started_ns = core::monotonic_ns();
  if (part.plan.thread) {
    part.thread_stop = std::make_unique<std::atomic<bool>>(false);
    part.thread_exit = std::make_unique<std::atomic<int>>(-1);
    part.thread_cpu_ns = std::make_unique<std::atomic<std::int64_t>>(0);
    part.thread = std::make_unique<std::thread>([main = part.thread_main, stop = part.thread_stop.get(),
                                                 exit_code = part.thread_exit.get(), cpu_ns = part.thread_cpu_ns.get()] {
      const int code = main(*stop);
      cpu_ns->store(thread_cpu_ns(), std::memory_order_relaxed);  // ordered by the release store below
      exit_code->store(code, std::memory_order_release);          // the supervisor joins after seeing it
    });
    part.status = PartStatus::running;
    std::string pinned;
    if (part.plan.cpu >= 0) {
      const cpu_set_t set = one_cpu(part.plan.cpu);
      const int rc = pthread_setaffinity_np(part.thread->native_handle(), sizeof set, &set);
      pinned = rc == 0 ? fmt::format(" on CPU {}", part.plan.cpu)
                       : fmt::format(" (cannot pin it to CPU {}: {})", part.plan.cpu, std::strerror(rc));
    }
    say(fmt::format("started {} as a thread{}", part.plan.title, pinned));
    changed(part);
    return;
  }
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    ended(part, fmt::format("cannot make a pipe: {}", std::strerror(errno)), -1);
    return;
  }
  std::vector<std::string> args = part.plan.args;
  if (part.restarts > 0)  // it ran before in this run
    for (std::string& a : part.plan.restart_args(part.last_exit_code)) args.push_back(std::move(a));
  std::vector<char*> argv;
  static char weir_name[] = "weir";
  std::string program_name = part.plan.program.empty() ? std::string() : std::filesystem::path(part.plan.program).filename().string();
  argv.push_back(part.plan.program.empty() ? weir_name : program_name.data());
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    // The child: its own process group (a terminal's SIGINT reaches the supervisor alone, which
    // stops the parts in order), dies with the supervisor, writes into the pipe.
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(127);
    dup2(fds[1], STDOUT_FILENO);
    dup2(fds[1], STDERR_FILENO);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    if (part.plan.cpu >= 0) {
      const cpu_set_t set = one_cpu(part.plan.cpu);
      if (sched_setaffinity(0, sizeof set, &set) != 0) {
        const std::string why = fmt::format("cannot pin to CPU {}: {}\n", part.plan.cpu, std::strerror(errno));
        (void)!write(STDERR_FILENO, why.data(), why.size());
      }
    }
    execv(part.plan.program.empty() ? weir_exe_.c_str() : part.plan.program.c_str(), argv.data());
    _exit(127);
  }
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    ended(part, fmt::format("cannot fork: {}", std::strerror(errno)), -1);
    return;
  }
  fcntl(fds[0], F_SETFL, O_NONBLOCK);
  part.pid = pid;
  part.out_fd = fds[0];
  part.status = PartStatus::running;
  say(fmt::format("started {} (pid {}{}): {} {}", part.plan.title, pid,
                  part.plan.cpu >= 0 ? fmt::format(", CPU {}", part.plan.cpu) : std::string{},
                  part.plan.program.empty() ? std::string("weir") : program_name, fmt::join(args, " ")));
  changed(part);
}

void Supervisor::joined(PartState& part) {
  part.thread->join();
  part.thread.reset();
  part.cpu_s += static_cast<double>(part.thread_cpu_ns->load(std::memory_order_relaxed)) / 1e9;  // join orders it
}

void Supervisor::drain_output(PartState& part, bool all) {
  if (part.out_fd < 0) return;
  char buf[4096];
  for (;;) {
    const ssize_t n = read(part.out_fd, buf, sizeof(buf));
    if (n > 0) {
      part.partial.append(buf, static_cast<std::size_t>(n));
      for (std::size_t nl; (nl = part.partial.find('\n')) != std::string::npos;) {
        say(fmt::format("[{}] {}", part.plan.name, part.partial.substr(0, nl)));
        part.partial.erase(0, nl + 1);
      }
      continue;
    }
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {  // the child closed its end
      if (!part.partial.empty()) say(fmt::format("[{}] {}", part.plan.name, part.partial));
      part.partial.clear();
      close(part.out_fd);
      part.out_fd = -1;
      return;
    }
    if (!all || errno == EAGAIN) return;
  }
}

void Supervisor::ended(PartState& part, const std::string& how, int exit_code) {
  part.pid = 0;
  part.last_exit = how;
  part.last_exit_code = exit_code;
  if (stopping_) {
    part.status = PartStatus::stopped;
    changed(part);
    return;
  }
  if (exit_code == 0) {
    part.status = PartStatus::finished;
    say(fmt::format("{} finished ({})", part.plan.title, how));
    changed(part);
    return;
  }
  if (exit_code == tools::kExitUsage) {  // its settings are wrong: running it again cannot help
    part.status = PartStatus::config_error;
    say(fmt::format("configuration error: {} refused its settings ({}); not restarting it{}", part.plan.title, how,
                    part.plan.essential ? "; it is essential: stopping the run" : ""));
    if (part.plan.essential) essential_failed_ = true;
    changed(part);
    return;
  }
  const std::int64_t now = core::monotonic_ns();
  if (now - part.started_ns >= kHealthyRunNs) part.failures_in_row = 0;
  ++part.failures_in_row;
  if (!part.plan.essential && part.failures_in_row > part.plan.max_restarts) {
    part.status = PartStatus::given_up;
    say(fmt::format("GIVING UP on {}: it died {} times in a row (last: {}); the rest of the pipeline goes on",
                    part.plan.title, part.failures_in_row, how));
    changed(part);
    return;
  }
  const std::int64_t backoff =
      std::min(kMaxBackoffNs, kFirstBackoffNs << std::min(part.failures_in_row - 1, 20));
  part.status = PartStatus::backoff;
  part.next_start_ns = now + backoff;
  if (part.plan.essential)
    say(fmt::format("{} died ({}); essential: restart {} in a row in {:.1f} s", part.plan.title, how,
                    part.failures_in_row, static_cast<double>(backoff) / 1e9));
  else
    say(fmt::format("{} died ({}); restart {} of at most {} in a row in {:.1f} s", part.plan.title, how,
                    part.failures_in_row, part.plan.max_restarts, static_cast<double>(backoff) / 1e9));
  changed(part);
}

void Supervisor::tick(int timeout_ms) {
  std::vector<pollfd> fds;
  std::vector<PartState*> owners;
  for (auto& p : parts_)
    if (p->out_fd >= 0) {
      fds.push_back({p->out_fd, POLLIN, 0});
      owners.push_back(p.get());
    }
  if (poll(fds.data(), fds.size(), timeout_ms) > 0)
    for (std::size_t i = 0; i < fds.size(); ++i)
      if (fds[i].revents != 0) drain_output(*owners[i], false);
  for (auto& p : parts_) {
    PartState& part = *p;
    if (part.pid > 0) {
      int status = 0;
      rusage ru{};
      if (wait4(part.pid, &status, WNOHANG, &ru) == part.pid) {
        part.cpu_s += cpu_seconds(ru);
        drain_output(part, true);
        ended(part, describe_status(status), WIFEXITED(status) ? WEXITSTATUS(status) : -1);
      }
    } else if (part.thread && part.thread_exit->load(std::memory_order_acquire) >= 0) {
      joined(part);
      ended(part, describe_exit(part.thread_exit->load()), part.thread_exit->load());
    }
    if (part.status == PartStatus::backoff && !stopping_ && core::monotonic_ns() >= part.next_start_ns) {
      ++part.restarts;
      start(part);
    }
  }
}

void Supervisor::stop_part(PartState& part, std::int64_t grace_ns) {
  if (part.pid > 0) {
    kill(part.pid, SIGTERM);
    const std::int64_t deadline = core::monotonic_ns() + grace_ns;
    int status = 0;
    pid_t got = 0;
    rusage ru{};
    while ((got = wait4(part.pid, &status, WNOHANG, &ru)) == 0 && core::monotonic_ns() < deadline) {
      drain_output(part, false);
      const timespec pause{0, 10'000'000};
      nanosleep(&pause, nullptr);
    }
    if (got == 0) {
      say(fmt::format("{} did not stop within {:.1f} s: killing it", part.plan.title, static_cast<double>(grace_ns) / 1e9));
      kill(part.pid, SIGKILL);
      wait4(part.pid, &status, 0, &ru);
    }
    part.cpu_s += cpu_seconds(ru);
    drain_output(part, true);
    part.pid = 0;
    part.last_exit = describe_status(status);
  }
  if (part.thread) {
    part.thread_stop->store(true);
    joined(part);
    part.last_exit = describe_exit(part.thread_exit->load());
  }
  part.status = PartStatus::stopped;
  changed(part);
}

void Supervisor::remove(const std::string& name, std::int64_t grace_ns) {
  const auto it = std::find_if(parts_.begin(), parts_.end(), [&](const auto& p) { return p->plan.name == name; });
  if (it == parts_.end()) return;
  stop_part(**it, grace_ns);
  if ((*it)->out_fd >= 0) close((*it)->out_fd);
  say(fmt::format("stopped {}", (*it)->plan.title));
  parts_.erase(it);
}

void Supervisor::stop_all(std::int64_t grace_ns, const std::function<void()>& drained) {
  stopping_ = true;
  for (PartRole role :
       {PartRole::driver, PartRole::shard, PartRole::record, PartRole::bridge, PartRole::kafka, PartRole::ann,
        PartRole::epics, PartRole::tango}) {
    for (auto& p : parts_)
      if (p->plan.role == role && (p->status == PartStatus::running || p->status == PartStatus::backoff))
        stop_part(*p, grace_ns);
    if (role == PartRole::driver && drained) drained();
  }
}

void Supervisor::kill_all() noexcept {
  stopping_ = true;
  for (auto& p : parts_)
    if (p->pid > 0) kill(p->pid, SIGKILL);
}

bool Supervisor::any_active() const noexcept {
  return std::any_of(parts_.begin(), parts_.end(), [](const auto& p) {
    return p->status == PartStatus::running || p->status == PartStatus::backoff;
  });
}

}  // namespace weir::supervisor
