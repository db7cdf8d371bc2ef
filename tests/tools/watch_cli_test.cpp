// Runs `weir watch` as a child process, writes keys from this process, and checks what it printed,
// how it exited, and what it left behind in the arena.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "live_arena.hpp"
#include "spawn.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/signals.hpp"

namespace {

using namespace std::chrono_literals;
using weir::test::Clock;
using weir::test::contains;
using weir::test::kExitError;
using weir::test::kExitOk;
using weir::test::kExitUsage;
using weir::test::kKilledBySignal;

constexpr auto kStepTimeout = 5s;  // bound on each wait for the child

// weir with stdout on a pipe (read line by line) and stderr in a temp file. Killed and reaped by the
// destructor if a failed check leaves it running.
class WeirChild {
 public:
  explicit WeirChild(const std::vector<std::string>& args) : err_(std::tmpfile()) {
    REQUIRE(err_ != nullptr);
    int fds[2];
    REQUIRE(pipe2(fds, O_CLOEXEC) == 0);
    out_fd_ = fds[0];
    weir::test::SpawnOptions options;
    options.out = fds[1];
    options.err = fileno(err_.get());
    process_ = weir::test::ChildProcess(weir::test::command(WEIR_CLI_PATH, args), options);
    ::close(fds[1]);
    REQUIRE(process_.valid());
  }
  WeirChild(const WeirChild&) = delete;
  WeirChild& operator=(const WeirChild&) = delete;
  ~WeirChild() {
    (void)process_.kill_and_reap();
    ::close(out_fd_);
  }

  [[nodiscard]] pid_t pid() const { return process_.pid(); }

  // The next line of stdout without its newline; empty optional on EOF or after `timeout`.
  std::optional<std::string> read_line(Clock::duration timeout = kStepTimeout) {
    const auto deadline = Clock::now() + timeout;
    for (;;) {
      if (const auto end = buffer_.find('\n'); end != std::string::npos) {
        std::string line = buffer_.substr(0, end);
        buffer_.erase(0, end + 1);
        return line;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0 || !fill(static_cast<int>(left))) return std::nullopt;
    }
  }

  // Everything left on stdout up to EOF (the child has exited, or will within `timeout`).
  std::string rest_of_stdout(Clock::duration timeout = kStepTimeout) {
    const auto deadline = Clock::now() + timeout;
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0 || !fill(static_cast<int>(left))) break;
    }
    return std::exchange(buffer_, {});
  }

  // The exit code, kKilledBySignal, or kStillRunning if it has not ended within `timeout`.
  int wait_exit(Clock::duration timeout = kStepTimeout) { return process_.wait_exit(timeout); }

  std::string stderr_text() { return weir::test::read_all(err_.get()); }

 private:
  // Appends what the pipe has within timeout_ms; false on timeout or EOF.
  bool fill(int timeout_ms) {
    pollfd p{out_fd_, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) return false;
    char chunk[4096];
    const ssize_t n = ::read(out_fd_, chunk, sizeof chunk);
    if (n <= 0) return false;
    buffer_.append(chunk, static_cast<std::size_t>(n));
    return true;
  }

  weir::test::ChildProcess process_;
  weir::test::TempFile err_;
  int out_fd_ = -1;
  std::string buffer_;
};

// Runs weir to completion (bounded) and returns its exit code, or kStillRunning.
int run_weir(const std::vector<std::string>& args, std::string* err = nullptr) {
  WeirChild child(args);
  const int code = child.wait_exit();
  if (err != nullptr) *err = child.stderr_text();
  return code;
}



bool group_exists(const weir::core::Arena& arena, std::string_view group_name) {
  for (const weir::core::GroupInfo& g : weir::core::GroupTable(arena).list()) {
    if (g.name == group_name) return true;
  }
  return false;
}

// The number after "field": in a one-line JSON object, if any.
std::optional<double> json_number(const std::string& line, std::string_view field) {
  const std::string tag = "\"" + std::string(field) + "\":";
  const auto at = line.find(tag);
  if (at == std::string::npos) return std::nullopt;
  const char* start = line.c_str() + at + tag.size();
  char* end = nullptr;
  const double value = std::strtod(start, &end);
  if (end == start) return std::nullopt;
  return value;
}

}  // namespace

TEST_SUITE("tools.watch") {

TEST_CASE("watch --json prints one line per write with key, value and latency, then exits at --count") {
  weir::test::ScratchArena scratch("watchtest");
  weir::core::KvStore kv(scratch.arena());
  WeirChild child({"watch", scratch.name(), "key:temp", "--count", "2", "--json", "--timeout", "10"});
  REQUIRE(weir::test::watcher_asleep(scratch.arena(), "temp"));

  REQUIRE(kv.set_i64("temp", 41) == weir::core::KvStatus::ok);
  const std::optional<std::string> first = child.read_line();
  REQUIRE(first);
  REQUIRE(kv.set_text("temp", "hello") == weir::core::KvStatus::ok);
  const std::optional<std::string> second = child.read_line();
  REQUIRE(second);

  CHECK(child.wait_exit() == kExitOk);
  CHECK(child.rest_of_stdout().empty());
  CHECK(child.stderr_text().empty());
  for (const std::string& line : {*first, *second}) {
    CHECK(line.front() == '{');
    CHECK(line.back() == '}');
    CHECK(contains(line, R"("key":"temp")"));
    CHECK(contains(line, R"("time":")"));
    const std::optional<double> latency_us = json_number(line, "latency_us");
    REQUIRE(latency_us);
    CHECK(*latency_us >= 0.0);
  }
  CHECK(contains(*first, R"("type":"i64")"));
  CHECK(contains(*first, R"("value":41)"));
  CHECK(contains(*second, R"("type":"text")"));
  CHECK(contains(*second, R"("value":"hello")"));
  CHECK(json_number(*second, "version") > json_number(*first, "version"));
}

TEST_CASE("watch prints a deleted key as deleted") {
  weir::test::ScratchArena scratch("watchtest");
  weir::core::KvStore kv(scratch.arena());
  REQUIRE(kv.set_i64("temp", 1) == weir::core::KvStatus::ok);
  WeirChild child({"watch", scratch.name(), "--key", "temp", "--count", "1", "--json", "--timeout", "10"});
  REQUIRE(weir::test::watcher_asleep(scratch.arena(), "temp"));
  REQUIRE(kv.del("temp") == weir::core::KvStatus::ok);
  const std::optional<std::string> line = child.read_line();
  REQUIRE(line);
  CHECK(contains(*line, R"("key":"temp")"));
  CHECK(contains(*line, R"("deleted":true)"));
  CHECK(child.wait_exit() == kExitOk);
}

TEST_CASE("a label watch hears writes to a labelled key and not to an unlabelled one") {
  weir::test::ScratchArena scratch("watchtest");
  weir::core::KvStore kv(scratch.arena());
  REQUIRE(run_weir({"label", scratch.name(), "sensor.a", "adc", "fast"}) == kExitOk);
  weir::core::ValueInfo info;
  std::vector<std::byte> buffer(kv.value_bytes());
  REQUIRE(kv.get("sensor.a", buffer, info) == weir::core::KvStatus::ok);  // label created the key, empty
  CHECK(info.type == weir::core::ValueType::none);

  WeirChild child({"watch", scratch.name(), "adc", "--count", "1", "--timeout", "10"});
  REQUIRE(weir::test::watcher_asleep(scratch.arena(), "adc"));
  REQUIRE(kv.set_i64("sensor.b", 5) == weir::core::KvStatus::ok);  // unlabelled: must not count
  REQUIRE(kv.set_i64("sensor.a", 7) == weir::core::KvStatus::ok);

  CHECK(child.wait_exit() == kExitOk);
  const std::string out = child.rest_of_stdout();
  CHECK(contains(out, "watching label 'adc'"));
  CHECK(contains(out, "sensor.a v"));
  CHECK(contains(out, "= 7"));
  CHECK_FALSE(contains(out, "sensor.b"));
}

TEST_CASE("a key followed by both its name and a label prints once per write") {
  weir::test::ScratchArena scratch("watchtest");
  weir::core::KvStore kv(scratch.arena());
  REQUIRE(run_weir({"label", scratch.name(), "temp", "adc"}) == kExitOk);
  WeirChild child({"watch", scratch.name(), "key:temp", "adc", "--json", "--count", "2", "--timeout", "10"});
  REQUIRE(weir::test::watcher_asleep(scratch.arena(), "adc"));

  REQUIRE(kv.set_i64("temp", 1) == weir::core::KvStatus::ok);
  const std::optional<std::string> first = child.read_line();
  REQUIRE(first);
  REQUIRE(kv.set_i64("temp", 2) == weir::core::KvStatus::ok);
  const std::optional<std::string> second = child.read_line();
  REQUIRE(second);

  CHECK(child.wait_exit() == kExitOk);
  CHECK(contains(*first, R"("value":1,"writes":1)"));
  CHECK(contains(*second, R"("value":2,"writes":1)"));
  CHECK(child.rest_of_stdout().empty());
}

TEST_CASE("watch --timeout with nothing written stops within a second") {
  weir::test::ScratchArena scratch("watchtest");
  SUBCASE("without --count it exits 0") {
    const auto start = Clock::now();
    WeirChild child({"watch", scratch.name(), "key:nothing", "--timeout", "0.2"});
    CHECK(child.wait_exit(2s) == kExitOk);
    CHECK(Clock::now() - start < 1s);
  }
  SUBCASE("with --count not reached it exits 1 and says so") {
    WeirChild child({"watch", scratch.name(), "key:nothing", "--count", "1", "--timeout", "0.2"});
    CHECK(child.wait_exit(2s) == kExitError);
    CHECK(contains(child.stderr_text(), "timed out after 0.2 s with 0 of 1 changes"));
  }
}

TEST_CASE("watch stops on SIGTERM and releases its subscription") {
  weir::test::ScratchArena scratch("watchtest");
  WeirChild child({"watch", scratch.name(), "key:temp", "--timeout", "10"});
  REQUIRE(weir::test::watcher_asleep(scratch.arena(), "temp"));
  REQUIRE(::kill(child.pid(), SIGTERM) == 0);
  CHECK(child.wait_exit(2s) == kExitOk);
  CHECK_FALSE(group_exists(scratch.arena(), "temp"));  // the last subscriber left, so the group is free
}

TEST_CASE("a watcher killed while waiting does not leave writers making wake syscalls") {
  weir::test::ScratchArena scratch("watchtest");
  weir::core::KvStore kv(scratch.arena());
  WeirChild child({"watch", scratch.name(), "key:temp", "--timeout", "10"});
  REQUIRE(weir::test::watcher_asleep(scratch.arena(), "temp"));
  REQUIRE(::kill(child.pid(), SIGKILL) == 0);
  REQUIRE(child.wait_exit() == kKilledBySignal);  // reaped: a zombie would still count as alive

  const auto& syscalls = scratch.arena().header().wake_syscalls;
  const std::uint64_t before = syscalls.load();
  for (std::int64_t i = 0; i < 100; ++i) REQUIRE(kv.set_i64("temp", i) == weir::core::KvStatus::ok);
  CHECK(syscalls.load() - before <= 1);
}

TEST_CASE("watch on a missing arena exits 1 naming it") {
  std::string err;
  CHECK(run_weir({"watch", "no-such-arena-watchtest", "key:temp", "--timeout", "1"}, &err) == kExitError);
  CHECK(contains(err, "no-such-arena-watchtest"));
  CHECK(run_weir({"label", "no-such-arena-watchtest", "temp", "adc"}, &err) == kExitError);
  CHECK(contains(err, "no-such-arena-watchtest"));
}

TEST_CASE("watch without a key or label is a usage error") {
  weir::test::ScratchArena scratch("watchtest");
  std::string err;
  CHECK(run_weir({"watch", scratch.name()}, &err) == kExitUsage);
  CHECK(contains(err, "needs a LABEL"));
  CHECK(run_weir({"watch", scratch.name(), "key:"}, &err) == kExitUsage);
}

TEST_CASE("watch of a label that does not fit the label dictionary fails naming the label") {
  weir::test::ScratchArena scratch("watchtest");
  const std::string long_label(100, 'x');
  std::string err;
  CHECK(run_weir({"watch", scratch.name(), long_label, "--timeout", "1"}, &err) == kExitError);
  CHECK(contains(err, "label '" + long_label + "'"));
}

}  // TEST_SUITE
