// Runs under control, as a lab runs them: `weir run` with runs = "controlled" keeps its drivers,
// shards and recorders running while `weir runctl` (and the pipeline's schedule) start and stop runs.
// Real processes, real files: every run audited from its files, the run log read back (and with pandas),
// the blocks between runs accounted, a recorder and the supervisor killed with SIGKILL mid-run.
#include <doctest/doctest.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "background_weir.hpp"
#include "json.hpp"
#include "run_weir.hpp"
#include "scratch_dir.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/run_control.hpp"
#include "weir/ledger/run_log.hpp"
#include "weir/ledger/run_record.hpp"

using namespace weir::test;
using namespace std::chrono_literals;
namespace core = weir::core;
namespace ledger = weir::ledger;

namespace {

constexpr char kFourChannels[] = R"(
channel "adc0" { dtype = "i16", rate = 1e6, block = 4096, ring = 256 }
channel "adc1" { dtype = "i16", rate = 1e6, block = 4096, ring = 256 }
channel "adc2" { dtype = "i16", rate = 1e6, block = 4096, ring = 256 }
channel "adc3" { dtype = "i16", rate = 1e6, block = 4096, ring = 256 }
driver "sim" { channels = {"adc0", "adc1", "adc2", "adc3"}, signal = "noise" }
record "hdf5" { channels = {"adc*"}, out = "OUT" }
)";

// A controlled pipeline in a scratch directory; ARENA and OUT in its text are replaced.
struct Controlled {
  explicit Controlled(const std::string& text)
      : arena("rctl" + std::to_string(getpid()) + "_" + std::to_string(counter++)),
        path((dir.path() / "pipeline.lua").string()), out(dir.path() / "out") {
    std::string body = text;
    for (std::size_t at; (at = body.find("ARENA")) != std::string::npos;) body.replace(at, 5, arena);
    for (std::size_t at; (at = body.find("OUT")) != std::string::npos;) body.replace(at, 3, out.string());
    std::ofstream(path) << body;
  }
  ~Controlled() { (void)core::Arena::remove(arena); }
  [[nodiscard]] std::optional<core::Arena> open() const {
    auto a = core::Arena::open(arena, {.read_only = true});
    if (!a) return std::nullopt;
    return std::move(*a);
  }
  [[nodiscard]] core::RunStatus status() const {
    auto a = open();
    return a ? core::RunControl(*a).status() : core::RunStatus{};
  }
  [[nodiscard]] std::vector<core::RunRecorderSeen> recorders() const {
    auto a = open();
    return a ? core::RunControl(*a).recorders() : std::vector<core::RunRecorderSeen>{};
  }
  [[nodiscard]] bool joined() const {
    const auto rows = recorders();
    return !status().dir.empty() && std::any_of(rows.begin(), rows.end(), [](const auto& r) { return r.alive; });
  }
  // A live recorder has written run `n`'s first block.
  [[nodiscard]] bool recording(std::uint64_t n) const {
    const auto rows = recorders();
    return std::any_of(rows.begin(), rows.end(),
                       [&](const auto& r) { return r.alive && r.open_run == n && r.first_block_ns != 0; });
  }
  [[nodiscard]] std::vector<ledger::RunLogRow> log() const {
    auto rows = ledger::read_run_log(ledger::run_log_path(out, arena));
    REQUIRE_MESSAGE(rows, rows.error().what);
    return *rows;
  }
  inline static int counter = 0;
  ScratchDir dir{"runctl"};
  std::string arena, path;
  std::filesystem::path out;
};

std::uint64_t start_run(const Controlled& p, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args{"runctl", "start", p.arena};
  args.insert(args.end(), extra.begin(), extra.end());
  const RunResult r = run_weir(args);
  REQUIRE_MESSAGE(r.exit_code == 0, r.out, r.err);
  return std::stoull(r.out);
}

// The shards' consumer rows: (channel, row, pid), which a transition must leave as they are.
std::vector<std::tuple<std::string, std::uint32_t, std::uint32_t>> shard_rows(const Controlled& p) {
  std::vector<std::tuple<std::string, std::uint32_t, std::uint32_t>> rows;
  auto a = p.open();
  if (!a) return rows;
  for (const core::ChannelInfo& c : core::list_channels(*a))
    for (const core::ConsumerInfo& k : c.consumers)
      if (k.alive && k.kind.rfind("shard:", 0) == 0) rows.emplace_back(c.name, k.row, k.pid);
  return rows;
}

// Every channel's blocks from the first run's first to the last run's end are in exactly one run or
// between two runs: the run records' ranges tile the sequence space.
void check_tiling(const Controlled& p, std::uint64_t runs) {
  auto between = ledger::between_runs(p.out, p.arena);
  REQUIRE_MESSAGE(between, between.error().what);  // refuses a block in two runs
  std::map<std::string, std::uint64_t> inside, gaps, first, end;
  for (std::uint64_t n = 1; n <= runs; ++n) {
    auto record = ledger::read_run_record(ledger::run_record_path(p.out, p.arena, n));
    REQUIRE(record);
    REQUIRE(record->has_value());
    for (const ledger::ChannelMark& m : (*record)->channels) {
      CHECK_MESSAGE(m.final, "run ", n, " channel ", m.channel, ": its end was not final");
      inside[m.channel] += m.written - m.first_sequence;
      if (!first.count(m.channel)) first[m.channel] = m.first_sequence;
      end[m.channel] = m.written;
    }
  }
  for (const ledger::BetweenRuns& b : *between) gaps[b.channel] += b.blocks();
  CHECK(inside.size() == 4);
  for (const auto& [channel, blocks] : inside)
    CHECK_MESSAGE(blocks + gaps[channel] == end[channel] - first[channel], channel, ": ", blocks, " in runs + ",
                  gaps[channel], " between runs != ", end[channel] - first[channel]);
}

}  // namespace

TEST_SUITE("tools.runctl") {

TEST_CASE("50 runs back to back under weir run, four 1 MS/s channels and shards attached: every run exact, shards never restarted") {
  Controlled p(std::string(R"(arena { name = "ARENA", channels = 8, pool_mib = 64, runs = "controlled" })") +
               kFourChannels + R"(
shard "stats" { input = "adc1", window = 65536, thread = false }
shard "stats" { input = "adc2", window = 65536 }
)");
  BackgroundWeir run({"run", p.path});
  REQUIRE_MESSAGE(eventually([&] { return p.joined(); }, 30s), run.output());
  REQUIRE(eventually([&] { return shard_rows(p).size() == 2; }, 10s));
  const auto shards = shard_rows(p);
  constexpr std::uint64_t kRuns = 50;
  for (std::uint64_t i = 1; i <= kRuns; ++i) {
    const std::vector<std::string> meta =
        i == 1 ? std::vector<std::string>{"--title", "calibration, Co-60", "--operator", "A. Physicist", "--sample",
                                          "Co-60 button", "--comment", "gain 2"}
               : std::vector<std::string>{"--title", "data " + std::to_string(i)};
    const std::uint64_t n = start_run(p, meta);
    CHECK(n == i);  // numbers strictly increasing, from 1
    REQUIRE_MESSAGE(eventually([&] { return p.recording(n); }, 10s), "run ", n, " was never recorded\n", run.output());
    const RunResult stop = run_weir({"runctl", "stop", p.arena});
    CHECK_MESSAGE(stop.exit_code == 0, stop.out, stop.err);
    CHECK_MESSAGE(stop.out.find("run " + std::to_string(n) + " stopped:") == 0, stop.out);
    CHECK_MESSAGE(stop.out.find("0 lost (exact)") != std::string::npos, stop.out);
  }
  CHECK(shard_rows(p) == shards);  // the same rows of the same processes: no transition restarted a shard
  const RunResult idle_stop = run_weir({"runctl", "stop", p.arena});
  CHECK(idle_stop.exit_code == 1);
  CHECK_MESSAGE(idle_stop.err.find("no run is running (run 50 was stopped by cli)") != std::string::npos, idle_stop.err);
  REQUIRE(run.signal(SIGINT));
  CHECK_MESSAGE(run.wait_exit(60s) == 0, run.output());

  const auto rows = p.log();
  REQUIRE(rows.size() == kRuns);
  for (std::uint64_t i = 0; i < kRuns; ++i) {
    CHECK(rows[i].run == i + 1);
    CHECK(rows[i].ended == "stopped");
    CHECK(rows[i].exact);
    CHECK(rows[i].blocks_lost == 0);
    CHECK(rows[i].blocks_recorded == rows[i].blocks_written);
    CHECK(rows[i].blocks_written > 0);
  }
  check_tiling(p, kRuns);
  const RunResult audit = run_weir({"audit", p.out.string(), "--all-runs"});
  CHECK_MESSAGE(audit.exit_code == 0, audit.out, audit.err);
  CHECK(audit.out.find("NOT exact") == std::string::npos);
  CHECK_MESSAGE(audit.out.find("between runs 1 and 2") != std::string::npos, audit.out);

  // The first run's files and the run log, as a physicist reads them.
  CapturedProcess py(command(WEIR_PYTHON, {WEIR_RUN_FILES_CHECK, p.out.string(), p.arena, "1"}),
                     CapturedProcess::Output::separate);
  REQUIRE(py.valid());
  const ExitStatus done = py.wait(kRunTimeout);
  REQUIRE_MESSAGE((done.exited && done.code == 0), py.out(), py.err());
  const nlohmann::json j = parse_json(py.out());
  REQUIRE(j.is_object());
  REQUIRE(j["files"].get<int>() >= 1);
  const auto& e = j["entries"][0];
  CHECK(e["title"] == "calibration, Co-60");
  CHECK(e["entry_identifier"] == "1");
  CHECK(e["user"] == "A. Physicist");
  CHECK(e["user_class"] == "NXuser");
  CHECK(e["sample"] == "Co-60 button");
  CHECK(e["sample_class"] == "NXsample");
  CHECK(e["notes"] == "gain 2");
  CHECK(e["pipeline_at_start"].get<std::string>().find("runs = \"controlled\"") != std::string::npos);
  CHECK(e["keys_at_start"].contains("weir.run.pid"));
  CHECK(j["log"]["runs"].size() == kRuns);
  CHECK(j["log"]["titles"][0] == "calibration, Co-60");
  CHECK(j["log"]["ended"][49] == "stopped");
  CHECK(j["log"]["seconds"][0].get<double>() > 0);
}

TEST_CASE("a recorder killed with SIGKILL mid-run is restarted and the run goes on; its ledger stays exact") {
  Controlled p(std::string(R"(arena { name = "ARENA", channels = 8, pool_mib = 64, runs = "controlled" })") + kFourChannels);
  BackgroundWeir run({"run", p.path});
  REQUIRE_MESSAGE(eventually([&] { return p.joined(); }, 30s), run.output());
  const std::uint64_t n = start_run(p);
  REQUIRE(eventually([&] { return p.recording(n); }, 10s));
  const std::uint32_t victim = p.recorders().front().pid;
  REQUIRE(kill(static_cast<pid_t>(victim), SIGKILL) == 0);
  REQUIRE_MESSAGE(eventually(
                      [&] {
                        const auto rows = p.recorders();
                        return std::any_of(rows.begin(), rows.end(), [&](const auto& r) {
                          return r.alive && r.pid != victim && r.open_run == n && r.first_block_ns != 0;
                        });
                      },
                      30s),
                  run.output());
  CHECK(p.status().number == n);  // the same run, still running
  const RunResult stop = run_weir({"runctl", "stop", p.arena});
  CHECK_MESSAGE(stop.exit_code == 0, stop.out, stop.err);
  CHECK_MESSAGE(stop.out.find("(exact)") != std::string::npos, stop.out);
  REQUIRE(run.signal(SIGINT));
  CHECK_MESSAGE(run.wait_exit(60s) == 0, run.output());
  const auto rows = p.log();
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].files >= 2);  // the killed recorder's file and the restarted one's
  CHECK(rows[0].exact);
}

TEST_CASE("a reload while a run runs is a configuration event in the run's record; the pipeline at the stop is kept") {
  Controlled p(std::string(R"(arena { name = "ARENA", channels = 8, pool_mib = 64, runs = "controlled" })") + kFourChannels);
  BackgroundWeir run({"run", p.path});
  REQUIRE_MESSAGE(eventually([&] { return p.joined(); }, 30s), run.output());
  const std::uint64_t n = start_run(p);
  REQUIRE(eventually([&] { return p.recording(n); }, 10s));
  std::ofstream(p.path, std::ios::app) << "-- gain changed to 4\n";
  const RunResult reload = run_weir({"reload", p.arena});
  REQUIRE_MESSAGE(reload.exit_code == 0, reload.err);
  REQUIRE_MESSAGE(eventually([&] { return run.output().find("is a configuration event") != std::string::npos; }, 20s),
                  run.output());
  const RunResult stop = run_weir({"runctl", "stop", p.arena});
  CHECK_MESSAGE(stop.exit_code == 0, stop.out, stop.err);
  auto record = ledger::read_run_record(ledger::run_record_path(p.out, p.arena, n));
  REQUIRE(record);
  REQUIRE(record->has_value());
  REQUIRE((*record)->config_events.size() == 1);
  CHECK((*record)->config_events[0].what == "reload");
  CHECK((*record)->config_events[0].pipeline.find("gain changed to 4") != std::string::npos);
  CHECK((*record)->pipeline_at_end.find("gain changed to 4") != std::string::npos);
  REQUIRE(run.signal(SIGINT));
  CHECK_MESSAGE(run.wait_exit(60s) == 0, run.output());
}

TEST_CASE("weir run killed with SIGKILL mid-run: the restart closes the run as interrupted and numbers the next above it") {
  Controlled p(std::string(R"(arena { name = "ARENA", channels = 8, pool_mib = 64, runs = "controlled", replace = true })") +
               kFourChannels);
  std::map<std::string, std::uintmax_t> sizes;
  {
    BackgroundWeir run({"run", p.path});
    REQUIRE_MESSAGE(eventually([&] { return p.joined(); }, 30s), run.output());
    const std::uint64_t n = start_run(p, {"--title", "cut short"});
    CHECK(n == 1);
    REQUIRE(eventually([&] { return p.recording(n); }, 10s));
    REQUIRE(run.signal(SIGKILL));
    CHECK(run.wait_exit(10s) == kKilledBySignal);
    // Its parts follow it (they are told when their parent dies): the recorder closes its files.
    REQUIRE(eventually(
        [&] {
          const auto rows = p.recorders();
          return std::none_of(rows.begin(), rows.end(), [](const auto& r) { return r.alive; });
        },
        30s));
    for (const auto& f : std::filesystem::directory_iterator(p.out))
      if (f.path().extension() == ".h5") sizes[f.path().string()] = f.file_size();
    REQUIRE_FALSE(sizes.empty());
    CHECK(p.log().at(0).ended == "running");
  }
  BackgroundWeir again({"run", p.path});
  REQUIRE_MESSAGE(eventually([&] { return p.joined(); }, 30s), again.output());
  const auto rows = p.log();
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].ended == "interrupted");
  CHECK(rows[0].door == "restart");
  CHECK_MESSAGE(rows[0].note.find("killed") != std::string::npos, rows[0].note);
  CHECK(rows[0].title == "cut short");
  const std::uint64_t next = start_run(p);
  CHECK(next == 2);
  REQUIRE(eventually([&] { return p.recording(next); }, 10s));
  const RunResult stop = run_weir({"runctl", "stop", p.arena});
  CHECK_MESSAGE(stop.exit_code == 0, stop.out, stop.err);
  REQUIRE(again.signal(SIGINT));
  CHECK_MESSAGE(again.wait_exit(60s) == 0, again.output());
  for (const auto& [file, size] : sizes) CHECK_MESSAGE(std::filesystem::file_size(file) == size, file, " was rewritten");
  CHECK(p.log().size() == 2);
}

TEST_CASE("doors racing for 200 transitions: two command lines and the schedule; one run at a time, every refusal names a run") {
  Controlled p(std::string(R"(arena { name = "ARENA", channels = 8, pool_mib = 64, runs = "controlled",
                                      schedule = { start = true, stop_after_s = 0.05, restart = true } })") +
               kFourChannels);
  BackgroundWeir run({"run", p.path});
  REQUIRE_MESSAGE(eventually([&] { return p.joined(); }, 30s), run.output());
  constexpr std::uint64_t kTransitions = 200;
  std::atomic<bool> done{false};
  std::atomic<int> refusals{0}, unnamed{0};
  std::vector<std::string> odd;
  std::mutex odd_lock;
  const auto door = [&](int k) {
    for (int i = 0; !done.load(); ++i) {
      const bool start = (i + k) % 2 == 0;
      const RunResult r = run_weir(start ? std::vector<std::string>{"runctl", "start", p.arena, "--title", "door " + std::to_string(k)}
                                         : std::vector<std::string>{"runctl", "stop", p.arena, "--wait-s", "20"});
      if (r.exit_code == 0) continue;
      ++refusals;
      // Each refusal says which run holds the state: "run N (started by D) is running", or the last run.
      const bool named = r.err.find("refused: run ") != std::string::npos ||
                         r.err.find("refused: no run is running (run ") != std::string::npos ||
                         r.err.find("refused: no run is running (none has run in this arena)") != std::string::npos;
      if (!named) {
        ++unnamed;
        const std::lock_guard lock(odd_lock);
        odd.push_back(r.err);
      }
    }
  };
  std::thread a(door, 0), b(door, 1);
  const bool reached = eventually([&] { return p.status().transitions >= kTransitions; }, 240s);
  done.store(true);
  a.join();
  b.join();
  CHECK_MESSAGE(reached, "transitions: ", p.status().transitions);
  const std::string first_odd = odd.empty() ? std::string() : odd.front();
  CHECK_MESSAGE(unnamed.load() == 0, first_odd);
  MESSAGE("refusals: ", refusals.load(), ", transitions: ", p.status().transitions);
  REQUIRE(run.signal(SIGINT));
  CHECK_MESSAGE(run.wait_exit(60s) == 0, run.output());
  const auto rows = p.log();
  REQUIRE(rows.size() >= kTransitions / 2 - 1);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    CHECK(rows[i].run == i + 1);  // every number once, strictly increasing
    // Each row closed, as the run ended: a door that stops a run closes that run even when another
    // door starts the next one at once.
    CHECK_MESSAGE(rows[i].ended == "stopped", "run ", rows[i].run, " by ", rows[i].door, ": ", rows[i].ended, " ",
                  rows[i].note);
    CHECK_MESSAGE(rows[i].exact, "run ", rows[i].run, ": ", rows[i].note);
  }
  auto between = ledger::between_runs(p.out, p.arena);
  const std::string why = between ? std::string() : between.error().what;
  CHECK_MESSAGE(between.has_value(), why);  // no block in two runs
}

}  // TEST_SUITE
