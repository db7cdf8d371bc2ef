#include "run_command.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "weir/core/clock.hpp"

extern char** environ;

namespace weir::alerts {

namespace {

std::string status_text(int status) {
  if (WIFEXITED(status)) return "exit " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("killed by ") + strsignal(WTERMSIG(status));
  return "ended";
}

}  // namespace

core::Result<void> run_command(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));  // posix_spawn's signature
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawnattr_init(&attr);
  posix_spawnattr_setpgroup(&attr, 0);  // a group of its own: a timeout kills what it started too
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  sigset_t defaults;  // weir run's handlers for SIGINT, SIGTERM and SIGHUP are not the command's
  sigemptyset(&defaults);
  for (const int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return core::fail(core::Errc::io_error, "run " + argv[0] + ": " + std::strerror(rc));

  const std::int64_t deadline = core::monotonic_ns() + std::chrono::nanoseconds(timeout).count();
  int status = 0;
  pid_t got = 0;
  while ((got = waitpid(pid, &status, WNOHANG)) == 0 && core::monotonic_ns() < deadline) {
    const timespec pause{0, 10'000'000};
    nanosleep(&pause, nullptr);
  }
  if (got == 0) {
    kill(-pid, SIGKILL);
    (void)waitpid(pid, &status, 0);  // SIGKILL: it ends now
    return core::fail(core::Errc::busy, "run " + argv[0] + ": still running after the timeout; killed");
  }
  if (got < 0) return core::fail(core::Errc::io_error, "run " + argv[0] + ": waitpid: " + std::strerror(errno));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return core::fail(core::Errc::io_error, "run " + argv[0] + ": " + status_text(status));
  return {};
}

}  // namespace weir::alerts
