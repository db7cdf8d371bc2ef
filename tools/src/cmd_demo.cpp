// `weir demo`: the main job on embedded defaults. Creates an arena, runs a writer in a second
// process, watches its keys change from this one, lists them, and prints a short benchmark.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "arena_access.hpp"
#include "bench_cmd.hpp"
#include "command.hpp"
#include "output.hpp"
#include "value_codec.hpp"
#include "weir/core/kv_store.hpp"

namespace weir::tools {

namespace {

struct DemoOptions {
  std::string where = "weir-demo";
  int rounds = 10;
  int interval_ms = 50;
  bool bench = true;
};

constexpr const char* kWatched[] = {"sensor.temp", "events", "status"};

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

// Prints each watched key whenever its epoch moves. Returns the number of changes seen.
int watch_until_exit(const core::KvStore& kv, pid_t writer) {
  std::vector<std::uint64_t> last(std::size(kWatched), 0);
  std::vector<std::byte> buf(kv.value_bytes());
  int changes = 0;
  for (bool writer_done = false; !writer_done;) {
    writer_done = waitpid(writer, nullptr, WNOHANG) == writer;
    for (std::size_t k = 0; k < std::size(kWatched); ++k) {
      core::ValueInfo info;
      if (kv.get(kWatched[k], buf, info) != core::KvStatus::ok || info.epoch == last[k]) continue;
      last[k] = info.epoch;
      ++changes;
      fmt::print("  {:<12} version {:>3}  {}\n", kWatched[k], info.version(),
                 value_to_text(info.type, std::span<const std::byte>(buf.data(), info.length)));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return changes;
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
  const int changes = watch_until_exit(kv, writer);

  fmt::print("\n{} changes seen. Keys now in the arena:\n", changes);
  std::vector<std::byte> buf(kv.value_bytes());
  kv.for_each_key([&](std::string_view key, const core::ValueInfo&) {
    core::ValueInfo info;
    if (kv.get(key, buf, info) == core::KvStatus::ok)
      fmt::print("  {:<12} {:<5} {}\n", key, core::value_type_name(info.type),
                 value_to_text(info.type, std::span<const std::byte>(buf.data(), info.length)));
  });
  arena->close();
  (void)core::Arena::remove(o.where);

  if (!o.bench) return kExitOk;
  fmt::print("\nshort benchmark (weir bench kv --quick; full run: weir bench kv):\n");
  std::fflush(stdout);
  BenchOptions bench;
  bench.quick = true;
  bench.reps = 3;
  return run_bench_kv(bench);
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
