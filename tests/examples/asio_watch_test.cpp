// Runs the weir_asio_watch example as a child process and writes the keys it watches from here.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "live_arena.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/signals.hpp"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr int kKilledBySignal = -1;  // wait_exit: a signal ended the child
constexpr int kStillRunning = -2;    // wait_exit: the child outlived the timeout
constexpr int kExecFailed = 127;     // the child could not exec the binary
constexpr auto kStepTimeout = 5s;    // bound on each wait for the child
constexpr auto kPollInterval = 5ms;  // between checks of the group table or the child

bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

std::string read_all(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string text;
  char chunk[4096];
  std::size_t n = 0;
  while ((n = std::fread(chunk, 1, sizeof chunk, f)) > 0) text.append(chunk, n);
  return text;
}

// The example with stdout and stderr in temp files; killed and reaped by the destructor if a failed
// check leaves it running.
class ExampleChild {
 public:
  explicit ExampleChild(const std::vector<std::string>& args) : out_(std::tmpfile()), err_(std::tmpfile()) {
    REQUIRE((out_ != nullptr && err_ != nullptr));
    std::vector<std::string> argv_text{WEIR_ASIO_WATCH_PATH};
    argv_text.insert(argv_text.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : argv_text) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::fflush(nullptr);  // nothing buffered may be written twice by the child
    pid_ = fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      if (dup2(fileno(out_), STDOUT_FILENO) < 0 || dup2(fileno(err_), STDERR_FILENO) < 0) _exit(kExecFailed);
      execv(argv[0], argv.data());
      _exit(kExecFailed);
    }
  }
  ExampleChild(const ExampleChild&) = delete;
  ExampleChild& operator=(const ExampleChild&) = delete;
  ~ExampleChild() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    std::fclose(out_);
    std::fclose(err_);
  }

  [[nodiscard]] pid_t pid() const { return pid_; }

  // The exit code, kKilledBySignal, or kStillRunning if it has not ended within `timeout`.
  int wait_exit(Clock::duration timeout = kStepTimeout) {
    const auto deadline = Clock::now() + timeout;
    while (pid_ > 0) {
      int status = 0;
      const pid_t done = ::waitpid(pid_, &status, WNOHANG);
      if (done == pid_) {
        pid_ = 0;
        return WIFEXITED(status) ? WEXITSTATUS(status) : kKilledBySignal;
      }
      if (done < 0 || Clock::now() >= deadline) return kStillRunning;
      std::this_thread::sleep_for(kPollInterval);
    }
    return kStillRunning;
  }

  std::string out() { return read_all(out_); }
  std::string err() { return read_all(err_); }

 private:
  std::FILE* out_;
  std::FILE* err_;
  pid_t pid_ = -1;
};



}  // namespace

TEST_SUITE("examples.asio_watch") {

TEST_CASE("asio_watch prints each watched key's new value and exits 0 at --count") {
  weir::test::ScratchArena scratch("asiotest");
  weir::core::KvStore kv(scratch.arena());
  ExampleChild child({scratch.name(), "temp", "pressure", "--count", "3"});
  REQUIRE(weir::test::watcher_asleep(scratch.arena(), "pressure"));

  REQUIRE(kv.set_f64("temp", 1.5) == weir::core::KvStatus::ok);
  REQUIRE(kv.set_i64("other", 9) == weir::core::KvStatus::ok);  // not watched
  REQUIRE(kv.set_text("pressure", "high") == weir::core::KvStatus::ok);
  REQUIRE(kv.set_u64("pressure", 7) == weir::core::KvStatus::ok);

  CHECK(child.wait_exit() == 0);
  const std::string out = child.out();
  CHECK(contains(out, "temp = 1.5\n"));
  CHECK(contains(out, "pressure = "));
  CHECK_FALSE(contains(out, "other"));
  CHECK(child.err().empty());
}

TEST_CASE("asio_watch reports a deleted key") {
  weir::test::ScratchArena scratch("asiotest");
  weir::core::KvStore kv(scratch.arena());
  REQUIRE(kv.set_i64("temp", 1) == weir::core::KvStatus::ok);
  ExampleChild child({scratch.name(), "temp", "--count", "1"});
  REQUIRE(weir::test::watcher_asleep(scratch.arena(), "temp"));
  REQUIRE(kv.del("temp") == weir::core::KvStatus::ok);
  CHECK(child.wait_exit() == 0);
  CHECK(contains(child.out(), "temp = (not_found)\n"));
}

TEST_CASE("asio_watch exits 1 when its timer fires before --count changes") {
  weir::test::ScratchArena scratch("asiotest");
  ExampleChild child({scratch.name(), "temp", "--count", "1", "--seconds", "1"});
  CHECK(child.wait_exit() == 1);
  CHECK(contains(child.err(), "timed out after 1 s with 0 of 1 changes"));
}

TEST_CASE("asio_watch stops on SIGTERM and releases its subscription") {
  weir::test::ScratchArena scratch("asiotest");
  ExampleChild child({scratch.name(), "temp"});
  REQUIRE(weir::test::watcher_asleep(scratch.arena(), "temp"));
  REQUIRE(::kill(child.pid(), SIGTERM) == 0);
  CHECK(child.wait_exit() == 0);
  CHECK(weir::core::GroupTable(scratch.arena()).list().empty());
}

TEST_CASE("asio_watch refuses a bad command line and a missing arena") {
  ExampleChild usage({"only-a-name"});
  CHECK(usage.wait_exit() == 2);
  ExampleChild missing({"no-such-arena-asiotest", "temp"});
  CHECK(missing.wait_exit() == 1);
  CHECK(contains(missing.err(), "no-such-arena-asiotest"));
}

}  // TEST_SUITE
