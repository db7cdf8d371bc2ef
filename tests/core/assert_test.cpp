// WEIR_ASSERT as a debug build has it, whatever this build's NDEBUG (assert_ndebug_test.cpp has the
// other half). The failing paths run in forked children.
#undef NDEBUG
#include "weir/core/assert.hpp"

#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <string>

#include "proc_util.hpp"

namespace {

// Runs fn in a child with stderr on a pipe; returns what it printed, and whether it died of SIGABRT.
template <class Fn>
std::string run_child(Fn fn, bool& aborted) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], STDERR_FILENO);
    std::signal(SIGABRT, SIG_DFL);  // the abort ends the child, not doctest's crash report in it
    fn();
    _exit(0);
  }
  close(fds[1]);
  std::string out;
  char buf[256];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
  close(fds[0]);
  const weir::test::ExitStatus status = weir::test::ChildProcess::adopt(pid).wait(weir::test::kChildTimeout);
  REQUIRE_FALSE(status.timed_out);
  aborted = status.signal == SIGABRT;
  return out;
}

}  // namespace

TEST_SUITE("core.assert") {

TEST_CASE("a check that holds does nothing and evaluates its condition once") {
  int calls = 0;
  WEIR_ENFORCE(++calls == 1, "not reached");
  WEIR_ASSERT(++calls == 2, "not reached");
  CHECK(calls == 2);
}

TEST_CASE("a failed WEIR_ENFORCE prints file, line, condition and message, then aborts") {
  bool aborted = false;
  const std::string text = run_child([] { WEIR_ENFORCE(1 + 1 == 3, "arithmetic is broken"); }, aborted);
  CHECK(aborted);
  CHECK(text.find("assert_test.cpp:") != std::string::npos);
  CHECK(text.find("1 + 1 == 3") != std::string::npos);
  CHECK(text.find("arithmetic is broken") != std::string::npos);
}

TEST_CASE("a failed WEIR_ASSERT aborts in a debug build") {
  bool aborted = false;
  const std::string text = run_child([] { WEIR_ASSERT(false, "debug check"); }, aborted);
  CHECK(aborted);
  CHECK(text.find("debug check") != std::string::npos);
}

}  // TEST_SUITE
