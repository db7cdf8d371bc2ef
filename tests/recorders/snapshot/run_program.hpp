#pragma once
// Runs a program (the snapshot checker under /usr/bin/python3, h5dump) with captured output and a
// bounded wait: a hung program is killed and reported, never waited on forever.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

namespace weir::test {

inline constexpr std::chrono::seconds kProgramTimeout{60};  // no checker run may take longer
inline constexpr int kProgramExecFailed = 127;

struct ProgramResult {
  int exit_code = -1;  // -1: killed, by a signal or the timeout
  std::string out;     // stdout and stderr together
};

inline ProgramResult run_program(const std::string& path, const std::vector<std::string>& args) {
  std::FILE* out = std::tmpfile();
  REQUIRE(out != nullptr);
  std::vector<std::string> text{path};
  text.insert(text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : text) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(nullptr);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (dup2(fileno(out), STDOUT_FILENO) < 0 || dup2(fileno(out), STDERR_FILENO) < 0) _exit(kProgramExecFailed);
    execv(argv[0], argv.data());
    _exit(kProgramExecFailed);
  }
  int status = 0;
  pid_t reaped = 0;
  const auto deadline = std::chrono::steady_clock::now() + kProgramTimeout;
  while ((reaped = waitpid(pid, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  if (reaped == 0) {
    kill(pid, SIGKILL);
    reaped = waitpid(pid, &status, 0);
  }
  ProgramResult result;
  result.exit_code = reaped == pid && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::rewind(out);
  char chunk[4096];
  std::size_t n = 0;
  while ((n = std::fread(chunk, 1, sizeof chunk, out)) > 0) result.out.append(chunk, n);
  std::fclose(out);
  return result;
}

/// Runs check_snapshot.py on a file with the given expectations; the test fails with its message.
inline void check_snapshot(const std::string& file, std::vector<std::string> expectations) {
  expectations.insert(expectations.begin(), {WEIR_SNAPSHOT_CHECKER, file});
  const ProgramResult r = run_program("/usr/bin/python3", expectations);
  INFO("check_snapshot.py " << file << ": " << r.out);
  CHECK(r.exit_code == 0);
}

}  // namespace weir::test
