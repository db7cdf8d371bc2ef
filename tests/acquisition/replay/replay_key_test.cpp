// Replay of logged keys: read_keys reads the logs back (numbers, text, arrays with dtype and
// shape), --keys writes the chosen keys' values into the arena at their recorded time as their
// type, and without --keys no key is written.
#include <doctest/doctest.h>

#include <cstring>

#include "json.hpp"
#include "live_arena.hpp"
#include "proc_util.hpp"
#include "replay_fixture.hpp"
#include "scratch_dir.hpp"
#ifdef WEIR_CLI_PATH
#include "run_weir.hpp"
#endif

using namespace weir;
using namespace weir::test;

namespace {

constexpr std::uint64_t kNsPerSecond = 1'000'000'000;

// adc0: 10 blocks of 1 ms from kRealtime0; the file starts 1 s before them. Keys: a number set
// before the first block and changed 4 ms into it, text, a 4-element u32 array (shape [4]) and a
// 2x2 one, and a number logged half a second after the last block.
RecFileOptions keyed_file() {
  RecFileOptions o;
  o.start_ns = kRealtime0 - kNsPerSecond;
  o.keys = {
      RecKey{"gain", {0.5, 1.004}, {2.0, 4.5}, {}, {}, {}},
      RecKey{"mode", {0.5, 1.002}, {}, {"idle", "running"}, {}, {}},
      RecKey{"mca.spectrum", {0.5, 1.006}, {}, {}, {{1, 2, 3, 4}, {5, 6, 7, 8}}, {4}},
      RecKey{"grid/2x2", {0.9}, {}, {}, {{9, 8, 7, 6}}, {2, 2}},
      RecKey{"late", {1.51}, {42.0}, {}, {}, {}},
  };
  return o;
}

double get_f64(const core::Arena& arena, const std::string& key) {
  core::KvStore kv(arena);
  std::byte buffer[64];
  core::ValueInfo info;
  REQUIRE(kv.get(key, buffer, info) == core::KvStatus::ok);
  REQUIRE(info.type == core::ValueType::f64);
  double value = 0;
  std::memcpy(&value, buffer, sizeof value);
  return value;
}

}  // namespace

TEST_SUITE("acquisition.replay") {

TEST_CASE("read_keys reads each key's log: type, times, array dtype and shape, values") {
  ScratchDir dir("replay-keys-read");
  write_recording(dir.file("run.h5"), {u32_channel("adc0", {{0, 10}}, 0)}, keyed_file());
  auto recording = acq::open_recording(std::vector<std::string>{dir.file("run.h5")});
  REQUIRE(recording);
  auto keys = acq::read_keys(*recording);
  REQUIRE_MESSAGE(keys, (keys ? "" : keys.error().what));
  REQUIRE(keys->size() == 6);  // with the writer's fixed "temperature" log
  const auto find = [&](const std::string& name) -> const acq::RecordedKey& {
    for (const acq::RecordedKey& k : *keys)
      if (k.name == name) return k;
    FAIL("no key " << name);
    return keys->front();
  };
  const acq::RecordedKey& spectrum = find("mca.spectrum");
  REQUIRE(spectrum.logs.size() == 1);
  CHECK(spectrum.logs[0].type == core::ValueType::array);
  CHECK(spectrum.logs[0].array == core::ArrayShape{core::Dtype::u32, 1, {4, 0}});
  REQUIRE(spectrum.changes.size() == 2);
  CHECK(spectrum.changes[1].realtime_ns == kRealtime0 + 6'000'000);
  acq::KeyReader reader(*recording, spectrum);
  auto value = reader.value(1);
  REQUIRE(value);
  REQUIRE(value->data.size() == 16);
  std::uint32_t elements[4];
  std::memcpy(elements, value->data.data(), 16);
  CHECK(elements[0] == 5);
  CHECK(elements[3] == 8);

  const acq::RecordedKey& grid = find("grid/2x2");  // its group's name is escaped
  CHECK(grid.logs[0].link == "grid%2F2x2");
  CHECK(grid.logs[0].array == core::ArrayShape{core::Dtype::u32, 2, {2, 2}});
  CHECK(find("mode").logs[0].type == core::ValueType::text);
  acq::KeyReader text(*recording, find("mode"));
  auto running = text.value(1);
  REQUIRE(running);
  CHECK(std::string(reinterpret_cast<const char*>(running->data.data()), running->data.size()) == "running");
  CHECK(find("gain").logs[0].type == core::ValueType::f64);
}

TEST_CASE("replay with keys writes the last logged values as their types; without keys none") {
  ScratchDir dir("replay-keys");
  write_recording(dir.file("run.h5"), {u32_channel("adc0", {{0, 10}}, 0)}, keyed_file());
  ArenaGuard guard(unique_name("replay-keys"));
  auto arena = core::Arena::create(guard.where(), replay_arena());
  REQUIRE(arena);
  core::KvStore kv(*arena);
  std::byte buffer[64];
  core::ValueInfo info;

  acq::ReplayOptions plain;
  plain.speed = 0;
  const acq::ReplayReport without = replay(*arena, {dir.file("run.h5")}, plain);
  CHECK(without.keys.empty());
  CHECK(without.keys_written == 0);
  CHECK(kv.get("gain", buffer, info) == core::KvStatus::not_found);
  CHECK(kv.get("temperature", buffer, info) == core::KvStatus::not_found);

  acq::ReplayOptions keyed = plain;
  keyed.keys = {"gain", "mode", "mca.*", "grid/*"};
  const acq::ReplayReport with = replay(*arena, {dir.file("run.h5")}, keyed);
  CHECK(with.keys.size() == 4);
  CHECK(with.keys_written == 7);
  CHECK(with.keys_failed == 0);
  CHECK(with.blocks_published == 10);
  CHECK(get_f64(*arena, "gain") == 4.5);
  REQUIRE(kv.get("mode", buffer, info) == core::KvStatus::ok);
  CHECK(info.type == core::ValueType::text);
  CHECK(std::string(reinterpret_cast<const char*>(buffer), info.length) == "running");
  REQUIRE(kv.get("mca.spectrum", buffer, info) == core::KvStatus::ok);
  CHECK(info.type == core::ValueType::array);
  CHECK(info.array == core::ArrayShape{core::Dtype::u32, 1, {4, 0}});
  std::uint32_t elements[4];
  std::memcpy(elements, buffer, sizeof elements);
  CHECK(elements[0] == 5);
  CHECK(elements[1] == 6);
  CHECK(elements[2] == 7);
  CHECK(elements[3] == 8);
  REQUIRE(kv.get("grid/2x2", buffer, info) == core::KvStatus::ok);
  CHECK(info.array == core::ArrayShape{core::Dtype::u32, 2, {2, 2}});
  CHECK(kv.get("temperature", buffer, info) == core::KvStatus::not_found);  // not chosen
  CHECK(kv.get("late", buffer, info) == core::KvStatus::not_found);
}

TEST_CASE("paced, a key logged after the last block comes due at its recorded time" * doctest::timeout(30)) {
  ScratchDir dir("replay-keys-paced");
  write_recording(dir.file("run.h5"), {u32_channel("adc0", {{0, 10}}, 0)}, keyed_file());
  ArenaGuard guard(unique_name("replay-keys-paced"));
  auto arena = core::Arena::create(guard.where(), replay_arena());
  REQUIRE(arena);
  acq::ReplayOptions o;
  o.speed = 5;
  o.keys = {"late", "gain"};
  const acq::ReplayReport r = replay(*arena, {dir.file("run.h5")}, o);
  CHECK(r.recorded_s == doctest::Approx(0.51));  // the last key, 510 ms after the first block
  CHECK(r.elapsed_s >= 0.09);
  CHECK(r.keys_written == 3);
  CHECK(get_f64(*arena, "late") == 42.0);
  CHECK(get_f64(*arena, "gain") == 4.5);
}

TEST_CASE("replay refuses key patterns that match no logged key, naming the keys it has") {
  ScratchDir dir("replay-keys-none");
  write_recording(dir.file("run.h5"), {u32_channel("adc0", {{0, 2}}, 0)});
  ArenaGuard guard(unique_name("replay-keys-none"));
  auto arena = core::Arena::create(guard.where(), replay_arena());
  REQUIRE(arena);
  auto recording = acq::open_recording(std::vector<std::string>{dir.file("run.h5")});
  REQUIRE(recording);
  acq::ReplayOptions o;
  o.speed = 0;
  o.keys = {"nothing*"};
  const std::atomic<bool> stop{false};
  auto report = acq::run_replay(*arena, *recording, o, stop);
  REQUIRE_FALSE(report);
  CHECK(report.error().what.find("temperature") != std::string::npos);
  CHECK(core::list_channels(*arena).empty());  // refused before anything was created
}

#ifdef WEIR_CLI_PATH
TEST_CASE("weir replay --keys writes array keys that weir get shows with their dtype and shape") {
  ScratchDir dir("replay-keys-cli");
  write_recording(dir.file("run.h5"), {u32_channel("adc0", {{0, 10}}, 0)}, keyed_file());
  ScratchArena arena("replaykeys");
  const RunResult r =
      run_weir({"replay", dir.file("run.h5"), arena.name(), "--speed", "max", "--json", "--keys", "mca.*", "mode"});
  CHECK(r.exit_code == kExitOk);
  const nlohmann::json report = parse_json(r.out);
  CHECK(report["keys_written"] == 4);
  CHECK(report["keys"] == nlohmann::json::array({"mca.spectrum", "mode"}));
  const nlohmann::json j = parse_json(run_weir({"get", arena.name(), "mca.spectrum", "--json"}).out);
  CHECK(j["type"] == "array");
  CHECK(j["dtype"] == "u32");
  CHECK(j["shape"] == nlohmann::json::array({4}));
  CHECK(j["value"] == nlohmann::json::array({5, 6, 7, 8}));
  const nlohmann::json mode = parse_json(run_weir({"get", arena.name(), "mode", "--json"}).out);
  CHECK(mode["type"] == "text");
  CHECK(mode["value"] == "running");

  const RunResult text = run_weir({"replay", dir.file("run.h5"), arena.name(), "--speed", "max", "--keys", "gain"});
  CHECK(text.exit_code == kExitOk);
  CHECK(contains(text.out, "2 logged key values written to 1 key"));
}
#endif  // WEIR_CLI_PATH

}  // TEST_SUITE
