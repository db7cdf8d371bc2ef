// `weir demo`: the main job on embedded defaults. Creates an arena, runs a writer in a second
// process, watches its keys change from this one (woken by signal groups), lists them, follows a
// simulated detector channel losslessly, and ends in a short benchmark (weir_bench, when built).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "cmd_bench.hpp"
#include "command.hpp"
#include "weir/acq/sim_driver.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/signals.hpp"
#include "weir/tools/arena_access.hpp"
#include "weir/tools/output.hpp"
#include "weir/tools/value_codec.hpp"

namespace weir::tools {

namespace {

struct DemoOptions {
  std::string where = "weir-demo";
  int rounds = 10;
  int interval_ms = 50;
  bool bench = true;
};

constexpr const char* kWatched[] = {"sensor.temp", "events", "status"};
constexpr std::int64_t kWaitSliceNs = 100'000'000;  // a watcher wait, bounded so the writer's exit is noticed
constexpr double kDemoRateHz = 200'000;             // the simulated detector's sample rate
constexpr std::uint32_t kDemoBlock = 2000;          // samples per block
constexpr double kDemoSeconds = 0.5;                // how long the detector runs
constexpr int kOpenTries = 400;                     // 5 ms apart: the driver has two seconds to create det0

// The writer process: opens the arena by name, as any other process would, and updates three keys.
[[noreturn]] void run_writer(const DemoOptions& o) {
  auto arena = core::Arena::open(o.where);
  if (!arena) _exit(1);
  core::KvStore kv(*arena);
  for (int round = 1; round <= o.rounds; ++round) {
    std::uint64_t events = 0;
    const bool ok = kv.set_f64("sensor.temp", 21.0 + std::sin(round * 0.6)) == core::KvStatus::ok &&
                    kv.atomic("events", core::AtomicOp::add, 3, events) == core::KvStatus::ok &&
                    kv.set_text("status", fmt::format("round {} of {}", round, o.rounds)) == core::KvStatus::ok;
    if (!ok) _exit(2);
    std::this_thread::sleep_for(std::chrono::milliseconds(o.interval_ms));
  }
  _exit(0);
}

// Sleeps on the watched keys' signal groups (no polling) and prints each change as it arrives.
// Returns the number of changes seen.
int watch_until_exit(const core::Arena& arena, const core::KvStore& kv, pid_t writer) {
  auto watcher = core::Watcher::create(arena);
  if (!watcher) return 0;
  for (const char* key : kWatched)
    if (!watcher->subscribe_key(key)) return 0;
  std::vector<std::byte> buf(kv.value_bytes());
  std::array<char, core::kMaxKeyBytes> name{};
  int changes = 0;
  for (bool writer_done = false; !writer_done;) {
    writer_done = waitpid(writer, nullptr, WNOHANG) == writer;
    if (watcher->wait(kWaitSliceNs) != core::WaitStatus::pulsed && !writer_done) continue;
    watcher->drain([&](const core::Change& c) {
      std::uint32_t length = 0;
      core::ValueInfo info;
      if (kv.key_at(c.slot, std::span<char>(name.data(), kv.key_bytes()), length, info) != core::KvStatus::ok) return;
      const std::string_view key(name.data(), length);
      if (kv.get(key, buf, info) != core::KvStatus::ok) return;
      ++changes;
      fmt::print("  {:<12} version {:>3}  {}\n", key, info.version(),
                 value_to_text(info.type, std::span<const std::byte>(buf.data(), info.length)));
    });
  }
  return changes;
}

// A simulated detector channel for half a second, followed losslessly by this process.
void follow_channel(const core::Arena& arena) {
  acq::SimOptions sim;
  sim.channels = {"det0"};
  sim.rate_hz = kDemoRateHz;
  sim.block_samples = kDemoBlock;
  sim.duration_s = kDemoSeconds;
  sim.signal.kind = acq::SignalKind::pulses;
  const pid_t driver = fork();
  if (driver == 0) {
    std::atomic<bool> stop{false};
    _exit(acq::run_sim(arena, sim, stop) ? 0 : 1);
  }
  std::optional<core::ChannelReader> reader;
  for (int i = 0; i < kOpenTries && !reader; ++i) {  // the driver creates the channel
    auto opened = core::ChannelReader::open(arena, "det0", core::ConsumerPolicy::lossless, "demo", core::StartAt::oldest);
    if (opened) {
      reader.emplace(std::move(*opened));
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  std::uint64_t blocks = 0, lost_total = 0;
  float peak = 0;
  for (bool done = false; reader && !done;) {
    done = waitpid(driver, nullptr, WNOHANG) == driver;
    for (;;) {
      core::BlockView b;
      std::uint64_t lost = 0;
      const core::NextStatus st = reader->next(b, lost);
      if (st == core::NextStatus::empty) break;
      lost_total += lost;
      if (st != core::NextStatus::ok) continue;
      for (std::uint32_t i = 0; i < b.samples; ++i) {
        float v;
        std::memcpy(&v, b.data + std::size_t{i} * sizeof(float), sizeof(v));
        peak = std::max(peak, v);
      }
      if (reader->done(b)) ++blocks;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  fmt::print("\nchannel det0: simulated detector pulses at {} Hz, followed losslessly from pid {}:\n", kDemoRateHz,
             getpid());
  fmt::print("  {} blocks of {} samples read in place, {} lost, highest pulse {:.3f} V\n", blocks, kDemoBlock,
             lost_total, peak);
}

int run_demo(const DemoOptions& o) {
  core::ArenaOptions options;
  options.replace_stale = true;
  auto arena = core::Arena::create(o.where, options);
  if (!arena) return report_error("demo", arena.error());
  fmt::print("created {} at {} ({} slots of {} bytes, {})\n", arena->location().describe(), arena->location().path,
             arena->geometry().slot_count, arena->geometry().value_bytes, human_bytes(arena->bytes()));
  core::KvStore kv(*arena);
  if (kv.set_text("run.title", "weir demo") != core::KvStatus::ok) return kExitError;

  const pid_t writer = fork();
  if (writer < 0) return report_usage("demo: fork failed");
  if (writer == 0) run_writer(o);
  fmt::print("writer pid {} updates {} keys {} times; watching from pid {}:\n", writer, std::size(kWatched),
             o.rounds, getpid());
  const int changes = watch_until_exit(*arena, kv, writer);

  fmt::print("\n{} changes seen. Keys now in the arena:\n", changes);
  std::vector<std::byte> buf(kv.value_bytes());
  kv.for_each_key([&](std::string_view key, const core::ValueInfo&) {
    core::ValueInfo info;
    if (kv.get(key, buf, info) == core::KvStatus::ok)
      fmt::print("  {:<12} {:<5} {}\n", key, core::value_type_name(info.type),
                 value_to_text(info.type, std::span<const std::byte>(buf.data(), info.length)));
  });
  follow_channel(*arena);
  arena->close();
  (void)core::Arena::remove(o.where);

  if (!o.bench) return kExitOk;
  if (const auto bench = find_weir_bench(); !bench) {  // the suites are not part of weir
    fmt::print("\nshort benchmark skipped: {}\n", bench.error().what);
    return kExitOk;
  }
  fmt::print("\nshort benchmark (weir bench kv --quick; full run: weir bench kv):\n");
  return exec_weir_bench({"kv", "--quick", "--reps", "3"});  // the demo's last step: weir_bench takes over
}

}  // namespace

void add_demo_command(CLI::App& app, Action& action) {
  auto options = std::make_shared<DemoOptions>();
  CLI::App* sub = app.add_subcommand("demo", "Create an arena, write, read and watch keys, print a short benchmark");
  sub->add_option("--arena", options->where, "arena to create (replaced if stale)")->capture_default_str();
  sub->add_option("--rounds", options->rounds, "writer updates")->capture_default_str()->check(CLI::Range(1, 100000));
  sub->add_option("--interval-ms", options->interval_ms, "pause between updates")
      ->capture_default_str()
      ->check(CLI::Range(0, 10000));
  sub->add_flag("!--no-bench", options->bench, "skip the benchmark");
  bind_action(*sub, action, options, &run_demo);
}

}  // namespace weir::tools
