// `weir run` and the ledger of its recorders, as a user runs it: one run per pipeline start across
// recorder restarts, recorders registered before the first block, the run record beside the files,
// the supervision policy (essential parts, configuration errors) and its exit status, the parts'
// keys. Real processes killed by pid, real files read back with h5py (inspect_recording.py).
#include <doctest/doctest.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "background_weir.hpp"
#include "json.hpp"
#include "run_weir.hpp"
#include "scratch_dir.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/kv_store.hpp"

using namespace weir::test;
using namespace std::chrono_literals;

namespace {

// A pipeline file in a scratch directory; OUT in its text is the recorders' directory there.
struct Pipeline {
  explicit Pipeline(const std::string& text)
      : arena("runledger" + std::to_string(getpid()) + "_" + std::to_string(counter++)),
        path((dir.path() / "pipeline.lua").string()), out((dir.path() / "out").string()) {
    write(text);
  }
  ~Pipeline() { (void)weir::core::Arena::remove(arena); }
  void write(const std::string& text) const {
    std::string body = text;
    for (std::size_t at; (at = body.find("ARENA")) != std::string::npos;) body.replace(at, 5, arena);
    for (std::size_t at; (at = body.find("OUT")) != std::string::npos;) body.replace(at, 3, out);
    std::ofstream(path) << body;
  }
  // The pid of the live "recorder" consumer of `channel` once it has read `blocks` blocks, else 0.
  std::uint32_t recorder(const std::string& channel, std::uint64_t blocks = 0) const {
    auto a = weir::core::Arena::open(arena, {.read_only = true});
    if (!a) return 0;
    for (const auto& c : weir::core::list_channels(*a))
      if (c.name == channel)
        for (const auto& k : c.consumers)
          if (k.alive && k.name == "recorder" && k.blocks_read >= blocks) return k.pid;
    return 0;
  }
  std::string text_key(const std::string& key) const {
    auto a = weir::core::Arena::open(arena, {.read_only = true});
    if (!a) return {};
    weir::core::KvStore kv(*a);
    char buf[256] = {};
    weir::core::ValueInfo info;
    if (kv.get(key, std::as_writable_bytes(std::span{buf}), info) != weir::core::KvStatus::ok) return {};
    return std::string(buf, std::min<std::size_t>(info.length, sizeof buf));
  }
  std::uint64_t u64_key(const std::string& key) const {
    auto a = weir::core::Arena::open(arena, {.read_only = true});
    if (!a) return 0;
    weir::core::KvStore kv(*a);
    std::uint64_t v = 0;
    weir::core::ValueInfo info;
    if (kv.get(key, std::as_writable_bytes(std::span{&v, 1}), info) != weir::core::KvStatus::ok) return 0;
    return v;
  }
  std::vector<std::string> files() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(out))
      if (e.path().extension() == ".h5") names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  static inline int counter = 0;
  ScratchDir dir{"run-ledger"};
  std::string arena, path, out;
};

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// inspect_recording.py's lines for one file.
std::string inspect(const std::string& file) {
  CapturedProcess py(command(WEIR_PYTHON, {WEIR_INSPECT_RECORDING, file, "--swmr"}));
  REQUIRE(py.valid());
  (void)py.wait(60s);
  return py.out();
}

constexpr const char* kRecorded = R"lua(
arena { name = "ARENA", channels = 4, channel_mb = 8 }
channel "a" { rate = 20000, block = 200, ring = 8 }
driver "sim" { channels = {"a"}, signal = "sine", frequency = 50 }
record "hdf5" { channels = {"a"}, out = "OUT", restarts = 1 }
)lua";

}  // namespace

TEST_SUITE("tools.run.ledger") {

TEST_CASE("a restarted recorder gets the run's number again: one run in its files, recorded from block 0") {
  Pipeline p(kRecorded);
  BackgroundWeir run({"run", p.path, "--status-every", "0"});
  std::uint32_t first = 0;
  REQUIRE(eventually([&] { return (first = p.recorder("a", 10)) != 0; }, 10s));
  CHECK(p.u64_key("weir.run.number") == 1);
  CHECK(eventually([&] { return p.text_key("weir.part.record.state") == "running"; }, 5s));
  std::this_thread::sleep_for(300ms);
  REQUIRE(kill(static_cast<pid_t>(first), SIGKILL) == 0);
  std::uint32_t second = 0;
  REQUIRE(eventually([&] { return (second = p.recorder("a", 10)) != 0 && second != first; }, 10s));
  CHECK(eventually([&] { return p.u64_key("weir.part.record.restarts") == 1; }, 5s));
  CHECK(p.text_key("weir.part.record.last_exit") == "killed by SIGKILL");
  std::this_thread::sleep_for(300ms);
  REQUIRE(run.signal(SIGINT));
  const int code = run.wait_exit(30s);
  const std::string out = run.output();
  // The run fails only when the ledger of the recorder's files does not balance (what a killed
  // recorder had read but not flushed is for the recorder to account for), never for a part.
  CHECK_MESSAGE((code == kExitOk) == !contains(out, "RUN FAILED"), out);
  CHECK_FALSE(contains(out, "RUN FAILED: record \"record\" was given up"));
  CHECK(contains(out, "ledger of record \"record\" run 1"));
  CHECK(count(out, "weir record") == 2);
  CHECK(count(out, "--run 1") == 2);  // the first start and the restart
  // The restart says why blocks no file holds are missing: the recorder ran before and was killed.
  CHECK(count(out, "--missing-before recorder_down") == 1);
  CHECK(contains(out, "record \"record\" died (killed by SIGKILL); essential: restart 1 in a row"));
  const std::vector<std::string> files = p.files();
  REQUIRE_FALSE(files.empty());
  for (const std::string& f : files) CHECK(contains(f, p.arena + "_run000001_"));
  // The run record beside the files, as `weir run` left it at the stop.
  const auto record = parse_json(read_file(p.out + "/" + p.arena + "_run000001.ledger.json"));
  REQUIRE(record.is_object());
  CHECK(record["writer"] == "weir run");
  CHECK(record["run"] == 1);
  CHECK(record["arena"] == p.arena);
  CHECK(record["pipeline"] == p.path);
  CHECK(record["stopped_ns"].get<std::uint64_t>() >= record["started_ns"].get<std::uint64_t>());
  const auto& channels = record["channels"];
  REQUIRE(channels.size() == 1);
  CHECK(channels[0]["channel"] == "a");
  CHECK(channels[0]["first_sequence"] == 0);
  CHECK(channels[0]["final"] == true);
  CHECK(channels[0]["written"].get<std::uint64_t>() > 10);
  bool found = false;
  for (const auto& part : record["parts"])
    if (part["name"] == "record") {
      found = true;
      CHECK(part["role"] == "record");
      CHECK(part["essential"] == true);
      CHECK(part["restarts"] == 1);
      CHECK(part["state"] == "stopped");
    }
  CHECK(found);

  // The next start of the pipeline is the next run; its recorder registered before the sim wrote
  // its first block (the ring holds 8 blocks): its file begins at sequence 0, no before_start row.
  const auto again = run_weir({"run", p.path, "--duration", "1"});
  CHECK_MESSAGE(again.exit_code == kExitOk, again.out);
  CHECK(contains(again.out, "--run 2"));
  CHECK(contains(again.out, "run 2 ok"));
  CHECK(std::filesystem::exists(p.out + "/" + p.arena + "_run000002.ledger.json"));
  const std::string facts = inspect(p.out + "/" + p.arena + "_run000002_0000.h5");
  CHECK_MESSAGE(contains(facts, "seqs a 0-"), facts);
  CHECK_FALSE(contains(facts, "before_start"));
}

TEST_CASE("an essential recorder is restarted beyond its restarts and never given up") {
  Pipeline p(kRecorded);  // restarts = 1
  BackgroundWeir run({"run", p.path, "--status-every", "0"});
  std::uint32_t pid = 0;
  for (int kill_round = 0; kill_round < 3; ++kill_round) {
    std::uint32_t next = 0;
    REQUIRE(eventually([&] { return (next = p.recorder("a", 10)) != 0 && next != pid; }, 15s));
    pid = next;
    REQUIRE(kill(static_cast<pid_t>(pid), SIGKILL) == 0);
  }
  REQUIRE(eventually([&] { return p.recorder("a") != 0 && p.recorder("a") != pid; }, 15s));
  // The new recorder registers on its own; `weir run` counts the restart in its key a moment apart.
  CHECK(eventually([&] { return p.u64_key("weir.part.record.restarts") == 3; }, 15s));
  REQUIRE(run.signal(SIGINT));
  const int code = run.wait_exit(30s);
  const std::string out = run.output();
  CHECK(contains(out, "essential: restart 3 in a row"));
  CHECK_FALSE(contains(out, "GIVING UP"));
  CHECK_FALSE(contains(out, "was given up"));
  CHECK_FALSE(contains(out, "was not running at the stop"));
  CHECK_MESSAGE((code == kExitOk) == !contains(out, "RUN FAILED"), out);  // only an unbalanced ledger fails it
}

TEST_CASE("a configuration error (exit 2) is not retried, and in an essential part it stops the run, which fails") {
  Pipeline p(kRecorded);
  BackgroundWeir run({"run", p.path, "--status-every", "0"});
  std::uint32_t pid = 0;
  REQUIRE(eventually([&] { return (pid = p.recorder("a")) != 0; }, 10s));
  // The recorder reads the pipeline file (--pipeline) as it starts: gone, its restart is refused.
  const std::string moved = p.path + ".moved";
  std::filesystem::rename(p.path, moved);
  REQUIRE(kill(static_cast<pid_t>(pid), SIGKILL) == 0);
  CHECK(run.wait_exit(30s) == kExitError);
  const std::string out = run.output();
  CHECK(contains(out, "configuration error: record \"record\" refused its settings (exit 2 (configuration error))"));
  CHECK(contains(out, "it is essential: stopping the run"));
  CHECK(count(out, "weir record") == 2);  // started, restarted once, never again
  CHECK(contains(out, "RUN FAILED: configuration error: record \"record\""));
  std::filesystem::rename(moved, p.path);
}

TEST_CASE("a configuration error in a part that is not essential leaves the run going; it fails at the stop") {
  Pipeline p(R"lua(
arena { name = "ARENA", channels = 4, channel_mb = 8 }
channel "a" { rate = 20000, block = 200, ring = 64 }
driver "sim" { channels = {"a"}, signal = "sine", frequency = 50 }
record "hdf5" { channels = {"a"}, out = "OUT", essential = false }
)lua");
  BackgroundWeir run({"run", p.path, "--status-every", "0"});
  std::uint32_t pid = 0;
  REQUIRE(eventually([&] { return (pid = p.recorder("a", 10)) != 0; }, 10s));
  const std::string moved = p.path + ".moved";
  std::filesystem::rename(p.path, moved);
  REQUIRE(kill(static_cast<pid_t>(pid), SIGKILL) == 0);
  REQUIRE(eventually([&] { return p.text_key("weir.part.record.state") == "configuration error"; }, 10s));
  CHECK(p.text_key("weir.part.record.last_exit") == "exit 2 (configuration error)");
  // The run record says so while the run goes on.
  const std::string record_file = p.out + "/" + p.arena + "_run000001.ledger.json";
  CHECK(eventually([&] { return contains(read_file(record_file), "configuration error"); }, 5s));
  std::this_thread::sleep_for(500ms);
  CHECK(run.running());  // the driver goes on
  REQUIRE(run.signal(SIGINT));
  CHECK(run.wait_exit(30s) == kExitError);
  const std::string out = run.output();
  CHECK(count(out, "weir record") == 2);
  CHECK(contains(out, "RUN FAILED: configuration error: record \"record\""));
  CHECK_FALSE(contains(out, "stopping the run"));
  std::filesystem::rename(moved, p.path);
}

TEST_CASE("weir check and weir run refuse, with file and line, what a part would refuse when it starts") {
  const auto refused = [](const std::string& body, const std::string& what, int line = 3) {
    Pipeline p("arena { name = \"ARENA\", channels = 4, channel_mb = 8 }\n"
               "channel \"a\" { rate = 200000, block = 200 }\n" + body);
    const auto check = run_weir({"check", p.path});
    CHECK(check.exit_code == kExitError);
    CHECK_MESSAGE(contains(check.err, p.path + ":" + std::to_string(line) + ": "), check.err);
    CHECK_MESSAGE(contains(check.err, what), check.err);
    CHECK_FALSE(contains(check.out, "ok: nothing started"));
    const auto started = run_weir({"run", p.path, "--duration", "1"});
    CHECK(started.exit_code == kExitError);
    CHECK_MESSAGE(contains(started.err, p.path + ":" + std::to_string(line) + ": "), started.err);
    CHECK_FALSE(contains(started.out, "started"));
    CHECK_FALSE(weir::core::Arena::open(p.arena));  // nothing was created
    CHECK_FALSE(std::filesystem::exists(p.out));
  };
  refused("record \"hdf5\" { channels = {\"a\"}, out = \"OUT\", snapshot_every = 5 }\n", "unknown key 'snapshot_every'");
  refused("record \"hdf5\" { channels = {\"a\"}, out = \"OUT\", compress = 12 }\n", "'compress' = 12");
  refused("record \"hdf5\" { channels = {\"a\"}, out = \"OUT\", codec = \"lz5\" }\n", "'codec': --codec lz5");
  refused("record \"hdf5\" { channels = {\"a\"}, out = \"OUT\", codec = {\"lz4\", \"a*=zstd:99\"} }\n", "zstd:99");
  refused("record \"hdf5\" { channels = {\"a\"}, out = \"OUT\", encode_threads = 0.5 }\n", "'encode_threads' = 0.5");
  refused("driver \"sim\" { channels = {\"a\"}, signal = \"sine\", frequency = 1e6 }\n", "above the Nyquist frequency");
  refused("driver \"sim\" { channels = {\"a\"}, signal = \"bogus\" }\n", "driver \"sim\"");
  refused("driver \"replay\" { file = \"/nonexistent/run.h5\" }\n", "'file' = \"/nonexistent/run.h5\": cannot be read");
  refused("record \"hdf5\" { channels = {\"a\"}, out = \"OUT\", name = \"one\" }\n"
          "record \"hdf5\" { channels = {\"a\"}, out = \"OUT\", name = \"two\" }\n",
          "record \"two\": would write the run weir run picks to", 4);
}

TEST_CASE("weir check accepts recorder settings the recorder has, essential and restarts included") {
  Pipeline p(R"lua(arena { name = "ARENA", channels = 4, channel_mb = 8 }
channel "a" { rate = 200000, block = 200 }
driver "sim" { channels = {"a"}, signal = "sine", frequency = 1000, essential = true }
record "hdf5" { channels = {"a"}, out = "OUT", compress = 3, flush_ms = 500, rotate_s = 60, essential = false }
record "hdf5" { channels = {"a"}, out = "OUT2", codec = {"shuffle+lz4", "a*=bitshuffle+lz4"}, encode_threads = 2, name = "fast" }
)lua");
  const auto check = run_weir({"check", p.path});
  CHECK_MESSAGE(check.exit_code == kExitOk, check.err);
  CHECK(contains(check.out, "ok: nothing started"));
  CHECK_FALSE(std::filesystem::exists(p.out));  // checked where it would be made, made nothing
}

TEST_CASE("each part's state and restarts are in weir serve's /metrics beside the run") {
  Pipeline p(kRecorded);
  const std::string port = std::to_string(20000 + getpid() % 20000);
  BackgroundWeir run({"run", p.path, "--status-every", "0", "--serve", "127.0.0.1:" + port});
  std::uint32_t sim = 0;
  REQUIRE(eventually([&] {
    auto a = weir::core::Arena::open(p.arena, {.read_only = true});
    if (!a) return false;
    for (const auto& c : weir::core::list_channels(*a))
      if (c.name == "a" && c.writer_alive) sim = c.writer_pid;
    return sim != 0;
  }, 10s));
  REQUIRE(kill(static_cast<pid_t>(sim), SIGKILL) == 0);
  REQUIRE(eventually([&] { return p.u64_key("weir.part.sim.restarts") == 1 && p.text_key("weir.part.sim.state") == "running"; }, 10s));
  std::string metrics;
  const auto scrape = [&] {
    CapturedProcess py(command(WEIR_PYTHON, {"-c", "import urllib.request,sys; sys.stdout.write(urllib.request.urlopen("
                                                   "'http://127.0.0.1:" + port + "/metrics', timeout=5).read().decode())"}));
    (void)py.wait(20s);
    metrics = py.out();
    return contains(metrics, "weir_part_restarts_total{part=\"sim\"} 1");
  };
  CHECK_MESSAGE(eventually(scrape, 15s), metrics);
  CHECK(contains(metrics, "weir_part_state{part=\"sim\",state=\"running\"} 1"));
  CHECK(contains(metrics, "weir_part_state{part=\"sim\",state=\"given up\"} 0"));
  CHECK(contains(metrics, "weir_part_state{part=\"record\",state=\"running\"} 1"));
  CHECK(contains(metrics, "weir_part_last_exit_info{part=\"sim\",last_exit=\"killed by SIGKILL\"} 1"));
  REQUIRE(run.signal(SIGINT));
  (void)run.wait_exit(30s);
}

}  // TEST_SUITE
