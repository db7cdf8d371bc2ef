// `weir check` and `weir run` as a user runs them: real pipeline files, real child processes,
// real signals.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "background_weir.hpp"
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
driver "sim" { channels = {"b"}, name = "bad", signal = "bogus", restarts = 1 }
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

TEST_CASE("a part that dies is restarted; one that keeps dying is given up on while the rest go on") {
  PipelineFile p(kTwoSims);
  BackgroundWeir run({"run", p.path, "--status-every", "0"});
  std::uint32_t first = 0;
  REQUIRE(eventually([&] { return (first = p.writer("a")) != 0; }, 10s));
  REQUIRE(kill(static_cast<pid_t>(first), SIGKILL) == 0);
  std::uint32_t second = 0;
  CHECK(eventually([&] { return (second = p.writer("a")) != 0 && second != first; }, 10s));
  CHECK(eventually([&] { return contains(run.output(), "GIVING UP on driver \"bad\""); }, 10s));
  CHECK(p.writer("a") == second);  // the good driver runs on
  REQUIRE(run.signal(SIGINT));
  CHECK(run.wait_exit(20s) == kExitOk);
  const std::string out = run.output();
  CHECK(contains(out, "driver \"good\" died (killed by SIGKILL); restart 1 of at most 3"));
  CHECK(contains(out, "driver \"bad\" died (exit 2)"));
  CHECK(contains(out, "restarts 1"));
  CHECK(contains(out, "given up"));
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
