// `weir check` and `weir run` as a user runs them: real pipeline files, real child processes,
// real signals.
#include <doctest/doctest.h>

#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "background_weir.hpp"
#include "json.hpp"
#include "run_weir.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/channel.hpp"

using namespace weir::test;
using namespace std::chrono_literals;

namespace {

struct PipelineFile {
  explicit PipelineFile(const std::string& text)
      : arena("runcli" + std::to_string(getpid()) + "_" + std::to_string(counter++)),
        path("/tmp/weir-run-test-" + arena + ".lua") {
    std::string body = text;
    for (std::size_t at; (at = body.find("ARENA")) != std::string::npos;) body.replace(at, 5, arena);
    std::ofstream(path) << body;
  }
  ~PipelineFile() {
    std::remove(path.c_str());
    (void)weir::core::Arena::remove(arena);
  }
  // The pid of the live writer of `channel`, 0 while there is none.
  std::uint32_t writer(const std::string& channel) const {
    auto a = weir::core::Arena::open(arena, {.read_only = true});
    if (!a) return 0;
    for (const auto& c : weir::core::list_channels(*a))
      if (c.name == channel && c.writer_alive) return c.writer_pid;
    return 0;
  }
  // The names of the live consumers of `channel`.
  std::vector<std::string> consumers(const std::string& channel) const {
    std::vector<std::string> out;
    auto a = weir::core::Arena::open(arena, {.read_only = true});
    if (!a) return out;
    for (const auto& c : weir::core::list_channels(*a))
      if (c.name == channel)
        for (const auto& k : c.consumers)
          if (k.alive) out.push_back(k.name);
    return out;
  }
  void rewrite(const std::string& text) const {
    std::string body = text;
    for (std::size_t at; (at = body.find("ARENA")) != std::string::npos;) body.replace(at, 5, arena);
    std::ofstream(path) << body;
  }
  static inline int counter = 0;
  std::string arena, path;
};

constexpr const char* kTwoSims = R"lua(
arena { name = "ARENA", channels = 4, channel_mb = 8 }
channel "a" { rate = 20000, block = 200, ring = 16 }
channel "b" { rate = 20000, block = 200, ring = 16 }
driver "sim" { channels = {"a"}, name = "good", restarts = 3 }
driver "sim" { channels = {"b"}, name = "bad", restarts = 0 }
)lua";

}  // namespace

TEST_SUITE("tools.run") {

TEST_CASE("weir check prints the resolved pipeline, or the mistake with file and line") {
  PipelineFile good(R"lua(arena { name = "ARENA" }
channel "adc0" { rate = 1e6, block = 4096 }
driver "sim" { channels = {"adc0"}, signal = "pulses" }
)lua");
  const auto ok = run_weir({"check", good.path});
  CHECK(ok.exit_code == kExitOk);
  CHECK(contains(ok.out, "adc0"));
  CHECK(contains(ok.out, "driver \"sim\" (sim) process  writes adc0 signal=pulses"));
  CHECK(contains(ok.out, "ok: nothing started"));
  CHECK_FALSE(weir::core::Arena::open(good.arena));  // nothing was created

  PipelineFile bad("arena { name = \"ARENA\" }\nchannel \"adc0\" { rate = 1e6, blok = 4096 }\n");
  const auto refused = run_weir({"check", bad.path});
  CHECK(refused.exit_code == kExitError);
  CHECK(contains(refused.err, bad.path + ":2: channel \"adc0\": unknown key 'blok' (did you mean 'block'?)"));
}

TEST_CASE("weir run runs the parts for --duration, then stops them and removes its arena") {
  PipelineFile p(R"lua(arena { name = "ARENA", channels = 4, channel_mb = 8 }
channel "a" { rate = 20000, block = 200, ring = 16 }
driver "sim" { channels = {"a"} }
)lua");
  const auto r = run_weir({"run", p.path, "--duration", "1.5"});
  CHECK(r.exit_code == kExitOk);
  CHECK(contains(r.out, "started driver \"sim\""));
  CHECK(contains(r.out, "run summary"));
  CHECK(contains(r.out, "channel a"));
  CHECK_FALSE(weir::core::Arena::open(p.arena));
}

TEST_CASE("a part that dies is restarted, one that keeps dying is given up on, the rest go on and the run fails") {
  PipelineFile p(kTwoSims);
  BackgroundWeir run({"run", p.path, "--status-every", "0"});
  std::uint32_t first = 0, bad = 0;
  REQUIRE(eventually([&] { return (first = p.writer("a")) != 0; }, 10s));
  REQUIRE(eventually([&] { return (bad = p.writer("b")) != 0; }, 10s));
  REQUIRE(kill(static_cast<pid_t>(first), SIGKILL) == 0);
  REQUIRE(kill(static_cast<pid_t>(bad), SIGKILL) == 0);  // restarts = 0: given up at once
  std::uint32_t second = 0;
  CHECK(eventually([&] { return (second = p.writer("a")) != 0 && second != first; }, 10s));
  CHECK(eventually([&] { return contains(run.output(), "GIVING UP on driver \"bad\""); }, 10s));
  CHECK(p.writer("a") == second);  // the good driver runs on
  REQUIRE(run.signal(SIGINT));
  CHECK(run.wait_exit(20s) == kExitError);  // a part was given up: a service manager should know
  const std::string out = run.output();
  CHECK(contains(out, "driver \"good\" died (killed by SIGKILL); restart 1 of at most 3"));
  CHECK(contains(out, "restarts 1"));
  CHECK(contains(out, "given up"));
  CHECK(contains(out, "RUN FAILED: driver \"bad\" was given up"));
}

TEST_CASE("SIGTERM stops every part cleanly and prints the run summary") {
  PipelineFile p(R"lua(arena { name = "ARENA", channels = 4, channel_mb = 8 }
channel "a" { rate = 20000, block = 200, ring = 16 }
driver "sim" { channels = {"a"}, thread = true }
)lua");
  BackgroundWeir run({"run", p.path, "--status-every", "0"});
  REQUIRE(eventually([&] { return p.writer("a") != 0; }, 10s));
  CHECK(p.writer("a") == static_cast<std::uint32_t>(run.pid()));  // a thread part writes from the supervisor
  REQUIRE(run.signal(SIGTERM));
  CHECK(run.wait_exit(20s) == kExitOk);
  CHECK(contains(run.output(), "started driver \"sim\" as a thread"));
  CHECK(contains(run.output(), "driver \"sim\"                     stopped"));
  CHECK(p.writer("a") == 0);
}

TEST_CASE("weir reload adds, restarts and removes shards while acquisition goes on") {
  const std::string head = R"lua(arena { name = "ARENA", channels = 4, channel_mb = 8 }
channel "a" { rate = 20000, block = 200, ring = 16 }
driver "sim" { channels = {"a"} }
)lua";
  PipelineFile p(head + "shard \"null\" { input = \"a\" }\n");
  BackgroundWeir run({"run", p.path, "--status-every", "0"});
  const auto has = [&](const std::string& name) {
    const auto names = p.consumers("a");
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  REQUIRE(eventually([&] { return has("null:a"); }, 10s));
  REQUIRE(eventually([&] { return p.writer("a") != 0; }, 10s));  // shards may register before the driver attaches
  const std::uint32_t writer = p.writer("a");
  p.rewrite(head + "shard \"copy\" { input = \"a\", policy = \"lossless\" }\n");
  const auto reload = run_weir({"reload", p.arena});
  CHECK(reload.exit_code == kExitOk);
  CHECK(eventually([&] { return has("copy:a") && !has("null:a"); }, 10s));
  CHECK(p.writer("a") == writer);  // the driver was never restarted
  p.rewrite("arena { name = \"ARENA\" }\nchanel \"x\" {}\n");
  REQUIRE(run.signal(SIGHUP));
  CHECK(eventually([&] { return contains(run.output(), "reload refused, nothing changed"); }, 10s));
  CHECK(has("copy:a"));
  REQUIRE(run.signal(SIGINT));
  CHECK(run.wait_exit(20s) == kExitOk);
  const std::string out = run.output();
  CHECK(contains(out, "reload: removing shard \"null:a\""));
  CHECK(contains(out, "reload: adding shard \"copy:a\""));
  CHECK(contains(out, "unknown name 'chanel' (did you mean 'channel'?)"));
}

TEST_CASE("weir reload without a supervisor says so") {
  PipelineFile p("arena { name = \"ARENA\" }\n");
  REQUIRE(run_weir({"create", p.arena}).exit_code == kExitOk);
  const auto r = run_weir({"reload", p.arena});
  CHECK(r.exit_code == kExitError);
  CHECK(contains(r.err, "no `weir run` supervises it"));
}

}  // TEST_SUITE

namespace {

// The pid of the live consumer `name` of `channel`, 0 while there is none.
std::uint32_t consumer_pid(const PipelineFile& p, const std::string& channel, const std::string& name) {
  auto a = weir::core::Arena::open(p.arena, {.read_only = true});
  if (!a) return 0;
  for (const auto& c : weir::core::list_channels(*a))
    if (c.name == channel)
      for (const auto& k : c.consumers)
        if (k.alive && k.name == name) return k.pid;
  return 0;
}

// The CPUs a task may run on, as /proc writes them ("0", "0-1"); empty when it cannot be read.
std::string cpus_allowed(const std::string& task_dir) {
  std::ifstream status(task_dir + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("Cpus_allowed_list:", 0) == 0) return line.substr(line.find_first_not_of(" \t", 18));
  return {};
}

}  // namespace

TEST_SUITE("tools.run.placement") {

TEST_CASE("built-in shards run as threads of weir run unless the file says thread = false") {
  PipelineFile p(R"lua(arena { name = "ARENA", channels = 4, channel_mb = 8 }
channel "a" { rate = 20000, block = 200, ring = 16 }
driver "sim" { channels = {"a"} }
shard "null" { input = "a" }
shard "copy" { input = "a", thread = false }
)lua");
  const auto check = run_weir({"check", p.path});
  CHECK(contains(check.out, "shard \"null:a\" (null) thread"));
  CHECK(contains(check.out, "shard \"copy:a\" (copy) process"));
  BackgroundWeir run({"run", p.path, "--status-every", "0"});
  std::uint32_t null_pid = 0, copy_pid = 0;
  REQUIRE(eventually([&] { return (null_pid = consumer_pid(p, "a", "null:a")) != 0; }, 10s));
  REQUIRE(eventually([&] { return (copy_pid = consumer_pid(p, "a", "copy:a")) != 0; }, 10s));
  CHECK(null_pid == static_cast<std::uint32_t>(run.pid()));  // read from inside the supervisor
  CHECK(copy_pid != static_cast<std::uint32_t>(run.pid()));  // a process of its own
  REQUIRE(run.signal(SIGINT));
  CHECK(run.wait_exit(20s) == kExitOk);
  const std::string out = run.output();
  CHECK(contains(out, "started shard \"null:a\" as a thread"));
  CHECK(contains(out, "started shard \"copy:a\" (pid"));
  CHECK(contains(out, "CPU budget"));              // the per-stage budget of the summary
  CHECK(contains(out, "shard null"));
  CHECK(contains(out, "ns/sample"));
}

TEST_CASE("cpu = N pins a process part and a thread part to that CPU") {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  REQUIRE(sched_getaffinity(0, sizeof allowed, &allowed) == 0);
  if (CPU_COUNT(&allowed) < 2 || !CPU_ISSET(0, &allowed)) {
    MESSAGE("skipped: pinning is only visible with CPU 0 and another CPU allowed; this process has " << CPU_COUNT(&allowed));
    return;
  }
  PipelineFile p(R"lua(arena { name = "ARENA", channels = 4, channel_mb = 8 }
channel "a" { rate = 20000, block = 200, ring = 16 }
driver "sim" { channels = {"a"}, cpu = 0 }
shard "null" { input = "a", cpu = 0 }
)lua");
  BackgroundWeir run({"run", p.path, "--status-every", "0"});
  std::uint32_t sim = 0;
  REQUIRE(eventually([&] { return (sim = p.writer("a")) != 0; }, 10s));
  REQUIRE(eventually([&] { return consumer_pid(p, "a", "null:a") != 0; }, 10s));
  CHECK(cpus_allowed("/proc/" + std::to_string(sim)) == "0");
  // The supervisor's own thread is not pinned; the shard's thread (and its watchdog, which it
  // started) are.
  const std::string self = "/proc/" + std::to_string(run.pid());
  CHECK(cpus_allowed(self) != "0");
  int pinned = 0;
  for (const auto& task : std::filesystem::directory_iterator(self + "/task"))
    pinned += cpus_allowed(task.path().string()) == "0" ? 1 : 0;
  CHECK(pinned >= 1);
  REQUIRE(run.signal(SIGINT));
  CHECK(run.wait_exit(20s) == kExitOk);
  const std::string out = run.output();
  CHECK(contains(out, "started shard \"null:a\" as a thread on CPU 0"));
  CHECK(contains(out, ", CPU 0): weir sim"));
}

TEST_CASE("a cpu this machine does not offer is refused with the file and line before anything starts") {
  PipelineFile p(R"lua(arena { name = "ARENA", channels = 4, channel_mb = 8 }
channel "a" { rate = 20000, block = 200, ring = 16 }
driver "sim" { channels = {"a"}, cpu = 1023 }
)lua");
  const auto r = run_weir({"run", p.path, "--duration", "1"});
  CHECK(r.exit_code == kExitError);
  CHECK(contains(r.err, p.path + ":3: driver \"sim\": cpu = 1023, but this machine lets weir run only on CPU(s) "));
  PipelineFile bad(R"lua(arena { name = "ARENA" }
channel "a" { rate = 20000, block = 200 }
driver "sim" { channels = {"a"}, cpu = -3 }
)lua");
  const auto refused = run_weir({"check", bad.path});
  CHECK(refused.exit_code == kExitError);
  CHECK(contains(refused.err, bad.path + ":3: driver \"sim\": "));
  CHECK(contains(refused.err, "cpu"));
}

TEST_CASE("weir bench pipeline reports every stage in the pipeline next to its kernel alone") {
  const auto r = run_weir({"bench", "pipeline", "--rate", "2", "--duration", "1", "--reps", "1", "--quick", "--json"});
  REQUIRE(r.exit_code == kExitOk);
  const auto j = parse_json(r.out);
  REQUIRE(j.is_object());
  CHECK(j["suite"] == "pipeline");
  CHECK(j["channels"] == 4);
  CHECK(j["lost"].is_number_unsigned());
  std::vector<std::string> names;
  for (const auto& s : j["stages"]) {
    names.push_back(s["stage"].get<std::string>());
    CHECK(s["pipeline_ns_per_sample"].get<double>() > 0);
    CHECK(s["alone_ns_per_sample"].get<double>() > 0);
    CHECK(s["ratio"].get<double>() > 0);
  }
  for (const char* stage : {"driver sim", "shard fft", "shard stats", "record hdf5"})
    CHECK(std::find(names.begin(), names.end(), stage) != names.end());
  for (const auto& s : j["stages"])
    if (s["stage"] == "record hdf5") CHECK(s["floor_write_ns_per_sample"].get<double>() > 0);

  const auto misuse = run_weir({"bench", "kv", "--channels", "2"});
  CHECK(misuse.exit_code == kExitUsage);
  CHECK(contains(misuse.err, "options of the pipeline suite only"));
}

}  // TEST_SUITE
