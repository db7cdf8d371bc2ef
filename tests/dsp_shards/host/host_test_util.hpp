#pragma once
// Helpers for the shard host tests: paths of the test shards, `weir` (or any program) run as a
// background process with captured output and a bounded wait, polling with a deadline, and small
// arena lookups.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "weir/core/arena.hpp"
#include "weir/core/channel.hpp"

namespace weir::test {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExecFailed = 127;
inline constexpr auto kPoll = 5ms;           // between looks at the arena or a child
inline constexpr auto kStepTimeout = 10s;    // bound on any one wait in these tests

/// A test shard object built next to the tests: "abi", "size", "null_table", "null_process",
/// "no_entry", "faulty".
inline std::string test_shard(std::string_view name) {
  return std::string(WEIR_TEST_SHARD_DIR) + "/libweir_test_shard_" + std::string(name) + ".so";
}

inline bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

/// Polls pred until it holds or timeout passes; returns its last value.
template <class Pred>
bool wait_until(Pred&& pred, std::chrono::milliseconds timeout = kStepTimeout) {
  const auto deadline = Clock::now() + timeout;
  while (!pred()) {
    if (Clock::now() >= deadline) return pred();
    std::this_thread::sleep_for(kPoll);
  }
  return true;
}

struct ExitStatus {
  bool exited = false;     // by exit(); code is valid
  int code = -1;
  int signal = 0;          // killed by this signal
  bool timed_out = false;  // still running at the deadline: killed with SIGKILL
};

struct FileClose {
  void operator()(std::FILE* f) const noexcept { std::fclose(f); }
};

/// A program in the background, stdout and stderr in temp files, core dumps off (a crash test must
/// not spend seconds writing one). Killed and reaped by the destructor if still running.
class Process {
 public:
  /// Runs `program` with args; `env` entries ("NAME=value") are added to the environment.
  Process(const std::string& program, const std::vector<std::string>& args, const std::vector<std::string>& env = {})
      : out_(std::tmpfile()), err_(std::tmpfile()) {
    REQUIRE((out_ && err_));
    std::vector<std::string> argv_text{program};
    argv_text.insert(argv_text.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : argv_text) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_text = env;
    std::fflush(nullptr);  // nothing buffered may be written twice by the child
    pid_ = fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      const rlimit no_core{0, 0};
      setrlimit(RLIMIT_CORE, &no_core);
      for (std::string& e : env_text) putenv(e.data());
      if (dup2(fileno(out_.get()), STDOUT_FILENO) < 0 || dup2(fileno(err_.get()), STDERR_FILENO) < 0)
        _exit(kExecFailed);
      execv(argv[0], argv.data());
      _exit(kExecFailed);
    }
  }
  /// `weir` with args.
  static std::unique_ptr<Process> weir(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
    return std::make_unique<Process>(WEIR_CLI_PATH, args, env);
  }
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  ~Process() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }

  [[nodiscard]] pid_t pid() const noexcept { return pid_; }
  [[nodiscard]] bool running() const noexcept { return pid_ > 0 && ::waitpid(pid_, nullptr, WNOHANG) == 0; }
  void signal(int sig) const noexcept {
    if (pid_ > 0) ::kill(pid_, sig);
  }

  /// Reaps the process, waiting at most timeout (then SIGKILL).
  ExitStatus wait(std::chrono::milliseconds timeout = kStepTimeout) {
    ExitStatus s;
    if (pid_ <= 0) return s;
    const auto deadline = Clock::now() + timeout;
    int status = 0;
    pid_t r = 0;
    while ((r = ::waitpid(pid_, &status, WNOHANG)) == 0 && Clock::now() < deadline) std::this_thread::sleep_for(1ms);
    if (r == 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
      s.timed_out = true;
    }
    pid_ = -1;
    if (WIFEXITED(status)) {
      s.exited = true;
      s.code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
      s.signal = WTERMSIG(status);
    }
    return s;
  }

  [[nodiscard]] std::string out() const { return read_all(out_.get()); }
  [[nodiscard]] std::string err() const { return read_all(err_.get()); }

 private:
  static std::string read_all(std::FILE* f) {
    std::fflush(f);
    std::string text;
    char chunk[4096];
    std::size_t n = 0;
    if (std::fseek(f, 0, SEEK_SET) != 0) return text;
    while ((n = std::fread(chunk, 1, sizeof chunk, f)) > 0) text.append(chunk, n);
    return text;
  }
  std::unique_ptr<std::FILE, FileClose> out_, err_;
  pid_t pid_ = -1;
};

/// Runs `weir` to completion (bounded) and returns its exit status and output.
struct WeirRun {
  ExitStatus status;
  std::string out, err;
};
inline WeirRun run_weir_once(const std::vector<std::string>& args) {
  Process p(WEIR_CLI_PATH, args);
  WeirRun r;
  r.status = p.wait(60s);
  r.out = p.out();
  r.err = p.err();
  return r;
}

/// A channel made by the test, so a host can attach to it before the simulator starts.
inline void make_channel(const core::Arena& arena, const std::string& name, core::Dtype dtype,
                         std::uint32_t samples_per_block, double rate_hz, std::uint32_t ring_blocks = 64,
                         std::vector<std::string> labels = {}) {
  core::ChannelSpec spec;
  spec.name = name;
  spec.dtype = dtype;
  spec.rate_hz = rate_hz;
  spec.samples_per_block = samples_per_block;
  spec.ring_blocks = ring_blocks;
  spec.labels = std::move(labels);
  spec.wait_timeout_ns = 10'000'000'000;  // a lossless host on a loaded machine must not cause drops
  REQUIRE(core::create_channel(arena, spec));
}

inline std::optional<core::ChannelInfo> channel_info(const core::Arena& arena, std::string_view name) {
  for (core::ChannelInfo& c : core::list_channels(arena))
    if (c.name == name) return std::move(c);
  return std::nullopt;
}

/// The consumer row called `consumer` on channel `channel`, if listed: a live one if there is one
/// (a dead process's row may still be listed under the same name).
inline std::optional<core::ConsumerInfo> consumer_info(const core::Arena& arena, std::string_view channel,
                                                       std::string_view consumer) {
  const auto c = channel_info(arena, channel);
  if (!c) return std::nullopt;
  std::optional<core::ConsumerInfo> found;
  for (const core::ConsumerInfo& k : c->consumers)
    if (k.name == consumer && (!found || (k.alive && !found->alive))) found = k;
  return found;
}

/// Every block of a channel still in its ring, oldest first, copied out with its metadata.
struct Block {
  std::uint64_t sequence = 0, realtime_ns = 0;
  std::vector<std::byte> bytes;
};
inline std::vector<Block> ring_blocks(const core::Arena& arena, const std::string& channel) {
  auto reader = core::ChannelReader::open(arena, channel, core::ConsumerPolicy::lossy, "test", core::StartAt::oldest);
  REQUIRE(reader);
  std::vector<Block> blocks;
  const std::uint32_t bytes = reader->desc().samples_per_block * reader->desc().sample_bytes;
  for (;;) {
    Block b;
    b.bytes.resize(bytes);
    core::BlockView meta;
    std::uint64_t lost = 0;
    const core::NextStatus st = reader->read_copy(b.bytes, meta, lost);
    if (st == core::NextStatus::empty) break;
    if (st != core::NextStatus::ok) continue;
    b.bytes.resize(std::size_t{meta.samples} * reader->desc().sample_bytes);
    b.sequence = meta.sequence;
    b.realtime_ns = meta.realtime_ns;
    blocks.push_back(std::move(b));
  }
  return blocks;
}

}  // namespace weir::test
