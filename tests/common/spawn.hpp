#pragma once
// Child processes for the tests: a program started with its argument vector and its standard
// streams on descriptors of the test's choosing (temp files, a pipe, /dev/null), with extra
// environment entries and core dumps off on request; bounded waits that tell an exit code, a signal
// or a child still running; kill-and-reap for destructors; and the exit codes the tests agree on.
// No doctest here: the callers decide what a failure to start means.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace weir::test {

using Clock = std::chrono::steady_clock;

inline constexpr int kExitOk = 0;            // the weir CLI: success
inline constexpr int kExitError = 1;         // the weir CLI: the command failed
inline constexpr int kExitUsage = 2;         // the weir CLI: a bad command line
inline constexpr int kExecFailed = 127;      // a child that could not redirect its streams or exec
inline constexpr int kKilledBySignal = -1;   // wait_exit: a signal ended the child
inline constexpr int kStillRunning = -2;     // wait_exit: the child outlived the timeout
inline constexpr int kInherit = -1;          // SpawnOptions: the child keeps the parent's stream
inline constexpr std::chrono::milliseconds kWaitPoll{1};  // between looks at a child that has not ended

inline bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

struct FileClose {
  void operator()(std::FILE* f) const noexcept { std::fclose(f); }
};
using TempFile = std::unique_ptr<std::FILE, FileClose>;

/// Everything in f from its start (flushed first, so what this process wrote is included).
inline std::string read_all(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string text;
  char chunk[4096];
  std::size_t n = 0;
  while ((n = std::fread(chunk, 1, sizeof chunk, f)) > 0) text.append(chunk, n);
  return text;
}

/// {program, args...}: an argument vector for spawn().
inline std::vector<std::string> command(std::string program, const std::vector<std::string>& args) {
  std::vector<std::string> argv{std::move(program)};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

struct SpawnOptions {
  std::string program;            // the file to exec; empty: argv[0]
  int in = kInherit;              // descriptor that becomes the child's stdin
  int out = kInherit;             // … its stdout
  int err = kInherit;             // … its stderr
  std::vector<std::string> env;   // "NAME=value" entries added to the inherited environment (replacing NAME)
  bool core_dumps = true;         // false: RLIMIT_CORE 0, so a crash does not spend seconds writing one
};

/// Forks and execs options.program (or argv[0]) with argv; returns the child's pid, or -1 if fork
/// failed. A child that cannot redirect its streams or exec exits with kExecFailed. Descriptors
/// without FD_CLOEXEC are inherited. Buffered stdio output is flushed first, so the child never
/// writes it a second time.
/// Requires: argv is not empty.
inline pid_t spawn(const std::vector<std::string>& argv, const SpawnOptions& options = {}) {
  const std::string program = options.program.empty() ? argv.at(0) : options.program;
  std::vector<std::string> argv_text = argv;
  std::vector<char*> args;
  for (std::string& a : argv_text) args.push_back(a.data());
  args.push_back(nullptr);
  // The environment is built here, not in the child: between fork and exec only system calls.
  std::vector<std::string> env_text = options.env;
  std::vector<char*> envp;
  if (!env_text.empty()) {
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string_view entry(*e);
      const std::string_view name = entry.substr(0, entry.find('=') + 1);  // "NAME="
      const bool replaced = std::any_of(env_text.begin(), env_text.end(),
                                        [&](const std::string& extra) { return extra.starts_with(name); });
      if (!replaced || name.empty()) envp.push_back(*e);
    }
    for (std::string& e : env_text) envp.push_back(e.data());
    envp.push_back(nullptr);
  }

  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid != 0) return pid;  // the parent, or fork failed

  if (!options.core_dumps) {
    const rlimit no_core{0, 0};
    (void)setrlimit(RLIMIT_CORE, &no_core);
  }
  const int from[3] = {options.in, options.out, options.err};
  for (int target = 0; target < 3; ++target) {
    if (from[target] == kInherit) continue;
    // dup2 onto itself keeps FD_CLOEXEC, so a descriptor already in place only has it cleared.
    const int done = from[target] == target ? fcntl(target, F_SETFD, 0) : dup2(from[target], target);
    if (done < 0) _exit(kExecFailed);
  }
  if (envp.empty()) {
    execv(program.c_str(), args.data());
  } else {
    execve(program.c_str(), args.data(), envp.data());
  }
  _exit(kExecFailed);
}

/// How a child ended, or that it had not by a wait's deadline.
struct ExitStatus {
  bool exited = false;     // by exit(); code is valid
  int code = -1;
  int signal = 0;          // ended by this signal
  bool timed_out = false;  // still running at the deadline (ChildProcess::wait then killed it)
};

inline ExitStatus exit_status(int wait_status) noexcept {
  ExitStatus s;
  if (WIFEXITED(wait_status)) {
    s.exited = true;
    s.code = WEXITSTATUS(wait_status);
  } else if (WIFSIGNALED(wait_status)) {
    s.signal = WTERMSIG(wait_status);
  }
  return s;
}

/// A started program, owned: the destructor kills and reaps it if it is still running, so a failed
/// check never leaves a child behind. Every wait is bounded. Movable, not copyable.
/// Thread: the thread that started it.
class ChildProcess {
 public:
  ChildProcess() = default;
  /// Starts argv (see spawn()); valid() is false if fork failed.
  explicit ChildProcess(const std::vector<std::string>& argv, const SpawnOptions& options = {})
      : pid_(spawn(argv, options)) {}
  /// Takes over a child this process forked itself.
  static ChildProcess adopt(pid_t pid) noexcept {
    ChildProcess child;
    child.pid_ = pid;
    return child;
  }
  ChildProcess(ChildProcess&& other) noexcept
      : pid_(std::exchange(other.pid_, -1)), reaped_(std::exchange(other.reaped_, false)), status_(other.status_) {}
  ChildProcess& operator=(ChildProcess&& other) noexcept {
    if (this != &other) {
      (void)kill_and_reap();
      pid_ = std::exchange(other.pid_, -1);
      reaped_ = std::exchange(other.reaped_, false);
      status_ = other.status_;
    }
    return *this;
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess() { (void)kill_and_reap(); }

  /// Whether it was started (fork succeeded); stays true after it ends.
  [[nodiscard]] bool valid() const noexcept { return pid_ > 0; }
  /// Its pid, also after it was reaped (for looking it up in what it left behind); -1 if not valid.
  [[nodiscard]] pid_t pid() const noexcept { return pid_; }

  /// Whether it is still running; one that ended is reaped, and later waits report how.
  [[nodiscard]] bool running() const noexcept { return pid_ > 0 && !reaped_ && !poll(); }

  /// Sends sig; false if it has been reaped or kill() failed.
  bool signal(int sig) const noexcept { return pid_ > 0 && !reaped_ && ::kill(pid_, sig) == 0; }

  /// Reaps it, waiting at most timeout; past it the child is killed with SIGKILL and reaped, and
  /// the status says timed_out.
  ExitStatus wait(Clock::duration timeout) noexcept {
    if (!wait_until(Clock::now() + timeout)) {
      (void)kill_and_reap();
      status_.timed_out = true;
    }
    return status_;
  }

  /// Its exit code, kKilledBySignal, or kStillRunning if it has not ended within timeout (it is
  /// left running: wait again, signal it, or let the destructor kill it).
  int wait_exit(Clock::duration timeout) noexcept {
    if (!wait_until(Clock::now() + timeout)) return kStillRunning;
    if (status_.exited) return status_.code;
    return status_.signal != 0 ? kKilledBySignal : kStillRunning;
  }

  /// SIGKILL, then reap: afterwards the pid is dead to kill(pid, 0). Returns how it ended (a
  /// child reaped before keeps its status).
  ExitStatus kill_and_reap() noexcept {
    if (pid_ <= 0 || reaped_) return status_;
    (void)::kill(pid_, SIGKILL);
    int status = 0;
    pid_t r = 0;
    while ((r = ::waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
    }
    reaped_ = true;
    status_ = r == pid_ ? exit_status(status) : ExitStatus{};
    return status_;
  }

 private:
  /// One look without blocking; true once it has been reaped (or waitpid failed: nothing to wait for).
  bool poll() const noexcept {
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == 0 || (r < 0 && errno == EINTR)) return false;
    reaped_ = true;
    status_ = r == pid_ ? exit_status(status) : ExitStatus{};
    return true;
  }
  /// Looks every kWaitPoll until it has been reaped (true) or the deadline passed (false).
  bool wait_until(Clock::time_point deadline) noexcept {
    if (pid_ <= 0) return true;
    while (!reaped_ && !poll()) {
      if (Clock::now() >= deadline) return false;
      std::this_thread::sleep_for(kWaitPoll);
    }
    return true;
  }

  pid_t pid_ = -1;
  mutable bool reaped_ = false;  // set by the first look that finds it ended, running() included
  mutable ExitStatus status_;
};

/// A program with its stdout and stderr in temp files (one for both when merged), readable while it
/// runs and after. The files are opened for appending, so reading them back never moves where the
/// child writes.
class CapturedProcess : public ChildProcess {
 public:
  enum class Output : std::uint8_t { separate, merged };

  /// Starts argv; options.out and options.err are replaced by the temp files. valid() is false if
  /// a temp file could not be made or fork failed.
  explicit CapturedProcess(const std::vector<std::string>& argv, Output output = Output::separate,
                           SpawnOptions options = {})
      : out_(append_file()), err_(output == Output::separate ? append_file() : nullptr) {
    if (!out_ || (output == Output::separate && !err_)) return;
    options.out = fileno(out_.get());
    options.err = err_ ? fileno(err_.get()) : options.out;
    ChildProcess::operator=(ChildProcess(argv, options));
  }

  /// What it wrote to stdout so far (with stderr, when merged).
  [[nodiscard]] std::string out() const { return out_ ? read_all(out_.get()) : std::string(); }
  /// What it wrote to stderr so far; empty when merged.
  [[nodiscard]] std::string err() const { return err_ ? read_all(err_.get()) : std::string(); }

 private:
  static TempFile append_file() {
    TempFile f(std::tmpfile());
    if (f && fcntl(fileno(f.get()), F_SETFL, O_APPEND) != 0) f.reset();
    return f;
  }
  TempFile out_;
  TempFile err_;
};

}  // namespace weir::test
