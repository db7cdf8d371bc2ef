#pragma once
// Helpers for the shard host tests: paths of the test shards, `weir` (or any program) run as a
// background process with captured output and a bounded wait, polling with a deadline, and small
// arena lookups.
#include <doctest/doctest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "spawn.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/channel.hpp"

namespace weir::test {

using namespace std::chrono_literals;

inline constexpr auto kPoll = 5ms;           // between looks at the arena or a child
inline constexpr auto kStepTimeout = 10s;    // bound on any one wait in these tests

/// A test shard object built next to the tests: "abi", "size", "null_table", "null_process",
/// "no_entry", "faulty".
inline std::string test_shard(std::string_view name) {
  return std::string(WEIR_TEST_SHARD_DIR) + "/libweir_test_shard_" + std::string(name) + ".so";
}

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

/// A program in the background, stdout and stderr in temp files, core dumps off (a crash test must
/// not spend seconds writing one). Killed and reaped by the destructor if still running.
class Process : public CapturedProcess {
 public:
  /// Runs `program` with args; `env` entries ("NAME=value") are added to the environment.
  Process(const std::string& program, const std::vector<std::string>& args, const std::vector<std::string>& env = {})
      : CapturedProcess(command(program, args), Output::separate, options(env)) {
    REQUIRE(valid());
  }
  /// `weir` with args.
  static std::unique_ptr<Process> weir(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
    return std::make_unique<Process>(WEIR_CLI_PATH, args, env);
  }

  /// Reaps the process, waiting at most timeout (then SIGKILL).
  ExitStatus wait(std::chrono::milliseconds timeout = kStepTimeout) { return CapturedProcess::wait(timeout); }

 private:
  static SpawnOptions options(const std::vector<std::string>& env) {
    SpawnOptions o;
    o.env = env;
    o.core_dumps = false;
    return o;
  }
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
