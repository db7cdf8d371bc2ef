#pragma once
// Runs the built `weir` binary as a user would: arguments, stdin, captured stdout and stderr, and a
// bounded wait (a hung command is killed and reported, never waited on forever).
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace weir::test {

constexpr int kExitOk = 0;
constexpr int kExitError = 1;
constexpr int kExitUsage = 2;
constexpr int kExecFailed = 127;  // the child could not exec the binary
constexpr std::chrono::seconds kRunTimeout{60};  // no single weir command in a test may take longer

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

struct FileClose {
  void operator()(std::FILE* f) const noexcept { std::fclose(f); }
};
using TempFile = std::unique_ptr<std::FILE, FileClose>;

inline std::string read_all(std::FILE* f) {
  std::rewind(f);
  std::string text;
  char chunk[4096];
  std::size_t n = 0;
  while ((n = std::fread(chunk, 1, sizeof chunk, f)) > 0) text.append(chunk, n);
  return text;
}

// Runs weir with `args`, feeding `input` on stdin; stdout and stderr are captured separately.
inline RunResult run_weir(const std::vector<std::string>& args, std::string_view input = {}) {
  TempFile in(std::tmpfile());
  TempFile out(std::tmpfile());
  TempFile err(std::tmpfile());
  REQUIRE((in && out && err));
  if (!input.empty()) REQUIRE(std::fwrite(input.data(), 1, input.size(), in.get()) == input.size());
  std::fflush(in.get());
  std::rewind(in.get());

  std::vector<std::string> argv_text{WEIR_CLI_PATH};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);

  std::fflush(nullptr);  // nothing buffered may be written twice by the child
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (dup2(fileno(in.get()), STDIN_FILENO) < 0 || dup2(fileno(out.get()), STDOUT_FILENO) < 0 ||
        dup2(fileno(err.get()), STDERR_FILENO) < 0) {
      _exit(kExecFailed);
    }
    execv(argv[0], argv.data());
    _exit(kExecFailed);
  }
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + kRunTimeout;
  pid_t reaped = 0;
  while ((reaped = waitpid(pid, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (reaped == 0) {  // hung: kill it, reap it, and fail the check below
    kill(pid, SIGKILL);
    reaped = waitpid(pid, &status, 0);
  }
  REQUIRE(reaped == pid);
  RunResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = read_all(out.get());
  result.err = read_all(err.get());
  return result;
}

inline bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

}  // namespace weir::test
