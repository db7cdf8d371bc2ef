// The example pipelines in examples/pipelines/ run for real: `weir run` starts every part, nothing
// is given up on, nothing is lost, and what the recorders wrote opens in h5py with the channels
// the file declares.
#include <doctest/doctest.h>

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "background_weir.hpp"
#include "run_weir.hpp"
#include "scratch_dir.hpp"

using weir::test::contains;
using weir::test::read_file;
using weir::test::run_weir;

namespace {

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (std::size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size()) text.replace(at, from.size(), to);
}

// The example with its arena renamed and its recordings sent to a scratch directory.
struct ScratchPipeline {
  ScratchPipeline(const std::string& example, const std::string& arena, const std::string& out) {
    dir = "/tmp/weir-example-" + std::to_string(::getpid()) + "-" + arena;
    std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str());
    std::string text = read_file(WEIR_SOURCE_DIR "/examples/pipelines/" + example);
    REQUIRE(contains(text, "name = \"" + arena + "\""));
    unique = arena + std::to_string(::getpid());
    replace_all(text, "name = \"" + arena + "\"", "name = \"" + unique + "\"");
    replace_all(text, "out = \"" + out + "\"", "out = \"" + dir + "/" + out + "\"");
    path = dir + "/" + example;
    std::ofstream(path) << text;
  }
  ~ScratchPipeline() { std::system(("rm -rf " + dir).c_str()); }
  std::string dir, path, unique;
};

// Runs the checker over every .h5 file in `dir`; returns its output (it exits non-zero on a problem).
weir::test::RunResult inspect(const std::string& dir, const std::string& channels) {
  const std::string out = dir + "/check_recordings.txt";
  const std::string script = std::string("import glob, h5py, sys\n"
                                         "files = sorted(glob.glob(sys.argv[1] + '/**/*.h5', recursive=True))\n"
                                         "assert files, 'no HDF5 file'\n"
                                         "rows = {ch: 0 for ch in sys.argv[2].split(',')}\n"
                                         "for name in files:\n"
                                         "    f = h5py.File(name, 'r')\n"
                                         "    assert f.attrs['stop_time'], name + ': no stop_time'\n"
                                         "    for ch in rows:\n"
                                         "        rows[ch] += f['entry/' + ch + '/data'].shape[0]\n"
                                         "        assert len(f['entry/' + ch + '/gaps']) == 0, ch + ': gaps'\n"
                                         "    print(name, 'ok')\n"
                                         "for ch, n in rows.items():\n"  // a file rotated early (a key appeared) may hold none
                                         "    assert n > 0, ch + ': empty in every file'\n");
  std::ofstream(dir + "/check_recordings.py") << script;
  weir::test::RunResult r;
  r.exit_code = WEXITSTATUS(std::system(("/usr/bin/python3 " + dir + "/check_recordings.py " + dir + " " + channels + " >" + out +
                                         " 2>&1").c_str()));
  r.out = read_file(out);
  return r;
}

void check_clean_run(const weir::test::RunResult& r) {
  CHECK(r.exit_code == 0);
  CHECK_FALSE(contains(r.out, "GIVING UP"));
  CHECK_FALSE(contains(r.out, " died "));
  CHECK((contains(r.out, "lost 0 block(s) of ") && contains(r.out, "disk errors 0, unaccounted 0, duplicated 0), dropped at source 0, errors 0")));
  if (r.exit_code != 0 || !contains(r.out, "lost 0 block(s)")) MESSAGE(std::string(r.out + r.err));
}

// A fake SCPI instrument (tests/acquisition/instrument/fake_scpi.py) on a free loopback port.
struct FakeInstrument {
  FakeInstrument(const std::string& dir, const std::string& kind) {
    const std::string port_file = dir + "/" + kind + ".port";
    process = weir::test::ChildProcess({"/usr/bin/python3", WEIR_FAKE_SCPI, "--kind", kind, "--port-file", port_file});
    REQUIRE(weir::test::eventually([&] { return !read_file(port_file).empty(); }, std::chrono::seconds(20)));
    port = read_file(port_file);
    port.erase(port.find_last_not_of("\n") + 1);
  }
  weir::test::ChildProcess process;
  std::string port;
};

double number(const weir::test::RunResult& r) { return r.exit_code == 0 ? std::strtod(r.out.c_str(), nullptr) : -1; }

}  // namespace

TEST_SUITE("examples.pipelines") {

TEST_CASE("the detector bench records its detector and spectra losslessly") {
  ScratchPipeline p("detector_bench.lua", "detector", "runs/");
  const auto r = run_weir({"run", p.path, "--duration", "3", "--status-every", "0"});
  check_clean_run(r);
  const auto h5 = inspect(p.dir, "det0,det0.psd");
  CHECK_MESSAGE(h5.exit_code == 0, h5.out);

  // The recording replays into a fresh arena, where a shard runs on it unchanged.
  const std::string file = p.dir + "/runs/" + p.unique + "_run000001_0000.h5";
  const std::string again = p.unique + "r";
  REQUIRE(run_weir({"create", again, "--channels", "8"}).exit_code == 0);
  weir::test::BackgroundWeir replay({"replay", file, again, "--speed", "1", "--channels", "det0"});
  REQUIRE(weir::test::eventually([&] { return run_weir({"ls", again, "--json"}).out.find("\"det0\"") != std::string::npos; },
                                 std::chrono::seconds(10)));
  const auto shard = run_weir({"shard", again, "stats", "--input", "det0", "-p", "window=262144", "--duration", "2"});
  CHECK(shard.exit_code == 0);
  CHECK(contains(shard.out, "errors 0"));
  CHECK_FALSE(contains(shard.out, "blocks in 0,"));
  CHECK(replay.wait_exit(std::chrono::seconds(30)) == 0);
  const auto rms = run_weir({"get", again, "det0.rms"});
  CHECK(rms.exit_code == 0);
  CHECK(std::strtod(rms.out.c_str(), nullptr) > 0);
  CHECK(run_weir({"rm", again, "--force"}).exit_code == 0);
}

TEST_CASE("the pulse similarity pipeline embeds every captured pulse and answers the 10 nearest through its ann service") {
  if (!std::filesystem::exists(WEIR_EMBED_PLUGIN)) {
    MESSAGE("SKIPPED: the embed shard was not built (needs libtorch-dev and python3-torch): " WEIR_EMBED_PLUGIN);
    return;
  }
  ScratchPipeline p("pulse_similarity.lua", "pulses", "runs/");
  weir::test::BackgroundWeir run({"run", p.path, "--duration", "12", "--status-every", "0"});
  // Pulses arrive at 2000/s: once the ring's first keys exist and the service says it is serving,
  // the question goes through the service (not the exact fallback) and comes back with 10 pulses,
  // the pulse itself among them. (The ring rewrites key 3 every few seconds: a question asked just
  // after, before the index has taken the new vector, may miss it, so the test asks again.)
  weir::test::RunResult answer;
  bool served = false;
  const bool answered = weir::test::eventually(
      [&] {
        answer = run_weir({"vector", "search", p.unique, "pulses", "--like", "pulses/det0.events/3", "-k", "10", "--json"});
        served = answer.exit_code == 0 && contains(answer.out, "\"path\":\"ann\"") && contains(answer.out, "\"indexed\":");
        return served && contains(answer.out, "\"key\":\"pulses/det0.events/3\"");
      },
      std::chrono::seconds(30));
  const std::string said = answer.out + answer.err;
  CHECK_MESSAGE(served, "never answered through the ann service: " << said);
  CHECK_MESSAGE(answered, "the pulse was never among its own 10 nearest: " << said);
  const auto exact = run_weir({"vector", "search", p.unique, "pulses", "--like", "pulses/det0.events/3", "-k", "10", "--exact"});
  CHECK(exact.exit_code == 0);
  const auto embedded = run_weir({"get", p.unique, "det0.events.embedded"});
  CHECK(embedded.exit_code == 0);
  CHECK(std::strtod(embedded.out.c_str(), nullptr) > 10);
  CHECK(run.wait_exit(std::chrono::seconds(60)) == 0);
  const std::string out = run.output();
  CHECK(contains(out, "started ann \"ann:pulses\""));
  CHECK_FALSE(contains(out, "GIVING UP"));
  CHECK_FALSE(contains(out, " died "));
  if (!contains(out, "started ann")) MESSAGE(out);
}

TEST_CASE("the beamtime pipeline's schedule takes five runs of exactly 250 blocks while everything keeps running") {
  ScratchPipeline p("beamtime_runs.lua", "beamtime", "runs/");
  weir::test::BackgroundWeir run({"run", p.path, "--status-every", "0"});
  const std::string out = p.dir + "/runs";
  const auto log = [&] { return run_weir({"runs", "ls", out, "--json"}).out; };
  const auto count = [](const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = 0; (at = text.find(what, at)) != std::string::npos; at += what.size()) ++n;
    return n;
  };
  REQUIRE_MESSAGE(weir::test::eventually([&] { return count(log(), "\"ended\":\"stopped\"") == 5; },
                                         std::chrono::seconds(90)),
                  log(), run.output());
  REQUIRE(run.signal(SIGINT));
  CHECK_MESSAGE(run.wait_exit(std::chrono::seconds(60)) == 0, run.output());
  const std::string rows = log();
  CHECK_MESSAGE(count(rows, "\"blocks_written\":250,\"blocks_recorded\":250,\"blocks_lost\":0,\"exact\":true") == 5, rows);
  CHECK(count(rows, "\"door\":\"schedule\"") == 5);
  CHECK(count(rows, "\"run\":") == 5);  // the schedule's limit: no sixth run
  const auto audit = run_weir({"audit", out, "--all-runs"});
  CHECK_MESSAGE(audit.exit_code == 0, audit.out, audit.err);
}

TEST_CASE("the slow-control logger runs its sensors, stats and rotating recorder") {
  ScratchPipeline p("slow_control.lua", "logger", "logs/");
  // The thermometers give one block a second: long enough for a few of them.
  const auto r = run_weir({"run", p.path, "--duration", "4", "--status-every", "0"});
  check_clean_run(r);
  CHECK(contains(r.out, "started shard \"stats:vac3\""));
  CHECK(contains(r.out, "channel temp0 "));
  // The 10 Hz thermometers may not have filled a block yet on a loaded machine; the gauges have.
  const auto h5 = inspect(p.dir, "vac0,vac3");
  CHECK_MESSAGE(h5.exit_code == 0, h5.out);
}

TEST_CASE("the lab instruments pipeline polls a multimeter, forwards a setpoint to a supply and records both") {
  ScratchPipeline p("lab_instruments.lua", "lab", "logs/");
  FakeInstrument dmm(p.dir, "dmm");
  FakeInstrument psu(p.dir, "psu");
  std::string text = read_file(p.path);  // the example's ports are the fake instruments' here
  REQUIRE(contains(text, "port = 5025"));
  REQUIRE(contains(text, "port = 5026"));
  replace_all(text, "port = 5025", "port = " + dmm.port);
  replace_all(text, "port = 5026", "port = " + psu.port);
  std::ofstream(p.path) << text;
  // Stopped by SIGINT once everything was seen, however slowly a loaded machine got there.
  weir::test::BackgroundWeir run({"run", p.path, "--duration", "300", "--status-every", "0", "--keep"});
  REQUIRE_MESSAGE(weir::test::eventually([&] { return number(run_weir({"get", p.unique, "dmm.volt"})) == 1.2345; },
                                         std::chrono::seconds(30)),
                  run.output());
  REQUIRE(weir::test::eventually([&] { return run_weir({"get", p.unique, "psu.idn"}).out == "WEIR,FAKE-PSU,0,1.0\n"; },
                                 std::chrono::seconds(30)));
  CHECK(run_weir({"set", p.unique, "psu.setpoint", "1.5"}).exit_code == 0);
  CHECK(weir::test::eventually([&] { return number(run_weir({"get", p.unique, "psu.volt"})) == 1.5; },
                               std::chrono::seconds(30)));
  CHECK(weir::test::eventually([&] { return run_weir({"get", p.unique, "dmm.scan"}).out == "1.2345 2.469 3.7035 4.938\n"; },
                               std::chrono::seconds(30)));
  CHECK(run.signal(SIGINT));
  CHECK(run.wait_exit(std::chrono::seconds(60)) == 0);
  weir::test::RunResult r;
  r.out = run.output();
  r.exit_code = 0;
  check_clean_run(r);
  CHECK(contains(r.out, "scpi 'psu': "));
  CHECK(contains(r.out, "1 writes, 0 write failures"));
  CHECK(number(run_weir({"get", p.unique, "dmm.timeouts"})) == 0);
  const auto h5 = inspect(p.dir, "dmm.volt");
  CHECK_MESSAGE(h5.exit_code == 0, h5.out);
  CHECK(run_weir({"rm", p.unique, "--force"}).exit_code == 0);
}

TEST_CASE("the 8-channel scope pipeline feeds every channel and its decimated copy") {
  ScratchPipeline p("scope8.lua", "scope8", "");
  const auto r = run_weir({"run", p.path, "--duration", "3", "--status-every", "0", "--keep"});
  CHECK(r.exit_code == 0);
  CHECK_FALSE(contains(r.out, "GIVING UP"));
  for (int i = 0; i < 8; ++i) {
    CHECK(contains(r.out, "channel ch" + std::to_string(i) + " "));
    CHECK(contains(r.out, "channel ch" + std::to_string(i) + ".filt"));
  }
  const auto ls = run_weir({"ls", p.unique, "--json"});
  CHECK(ls.exit_code == 0);
  CHECK(contains(ls.out, "\"name\":\"ch7.filt\""));
  CHECK(run_weir({"rm", p.unique, "--force"}).exit_code == 0);
}

}  // TEST_SUITE
