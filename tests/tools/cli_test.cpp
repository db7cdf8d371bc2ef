// Runs the built `weir` binary as a user would and checks exit codes, stdout and stderr.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "weir/core/arena.hpp"
#include "weir/core/arena_layout.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/kv_store.hpp"
#include "json.hpp"
#include "run_weir.hpp"

namespace {

using namespace weir::test;

std::string shm_path(const std::string& name) { return "/dev/shm/weir." + name; }

// A unique arena name for one test, removed from /dev/shm however the test ends.
class ScratchArena {
 public:
  ScratchArena() {
    static std::atomic<int> counter{0};
    name_ = "clitest" + std::to_string(getpid()) + "n" + std::to_string(counter.fetch_add(1));
  }
  ScratchArena(const ScratchArena&) = delete;
  ScratchArena& operator=(const ScratchArena&) = delete;
  ~ScratchArena() {
    std::error_code ignored;
    std::filesystem::remove(shm_path(name_), ignored);
  }
  [[nodiscard]] const std::string& name() const { return name_; }

 private:
  std::string name_;
};

void create_arena(const ScratchArena& arena) {
  const RunResult created = run_weir({"create", arena.name(), "--slots", "64"});
  REQUIRE_MESSAGE(created.exit_code == kExitOk, created.err);
}

}  // namespace

TEST_SUITE("tools.cli") {

TEST_CASE("create, set, get, keys, incr, del and rm round-trip through the binary") {
  ScratchArena arena;
  const std::string& name = arena.name();

  const RunResult created = run_weir({"create", name, "--slots", "64", "--value-bytes", "256"});
  REQUIRE_MESSAGE(created.exit_code == kExitOk, created.err);
  CHECK(contains(created.out, name));
  CHECK(contains(created.out, shm_path(name)));
  CHECK(std::filesystem::exists(shm_path(name)));

  CHECK(run_weir({"set", name, "greeting", "hello world"}).exit_code == kExitOk);
  const RunResult got = run_weir({"get", name, "greeting"});
  CHECK(got.exit_code == kExitOk);
  CHECK(got.out == "hello world\n");
  CHECK(got.err.empty());

  CHECK(run_weir({"set", name, "count", "41", "--type", "i64"}).exit_code == kExitOk);
  const RunResult incremented = run_weir({"incr", name, "count"});
  CHECK(incremented.exit_code == kExitOk);
  CHECK(incremented.out == "42\n");

  const RunResult keys = run_weir({"keys", name});
  CHECK(keys.exit_code == kExitOk);
  CHECK(contains(keys.out, "greeting"));
  CHECK(contains(keys.out, "count"));
  CHECK(contains(keys.out, "i64"));

  CHECK(run_weir({"del", name, "greeting"}).exit_code == kExitOk);
  CHECK(run_weir({"get", name, "greeting"}).exit_code == kExitError);
  CHECK_FALSE(contains(run_weir({"keys", name}).out, "greeting"));

  const RunResult removed = run_weir({"rm", name});
  CHECK_MESSAGE(removed.exit_code == kExitOk, removed.err);
  CHECK_FALSE(std::filesystem::exists(shm_path(name)));
}

TEST_CASE("--json output is one JSON object with the expected fields") {
  ScratchArena arena;
  const std::string& name = arena.name();

  SUBCASE("create") {
    const RunResult r = run_weir({"create", name, "--slots", "32", "--mode", "0640", "--json"});
    REQUIRE(r.exit_code == kExitOk);
    CHECK(is_one_json_object(r.out));
    CHECK(contains(r.out, "\"path\":\"" + shm_path(name) + "\""));
    CHECK(contains(r.out, "\"slot_count\":32"));
    CHECK(contains(r.out, "\"mode\":\"0640\""));
  }
  SUBCASE("info") {
    create_arena(arena);
    const RunResult r = run_weir({"info", name, "--json"});
    REQUIRE(r.exit_code == kExitOk);
    CHECK(is_one_json_object(r.out));
    for (const char* field : {"\"creator_pid\":", "\"creator_alive\":", "\"attached\":[", "\"stale\":",
                              "\"owner_uid\":", "\"live_keys\":0", "\"regions\":{", "\"created\":\""}) {
      CHECK_MESSAGE(contains(r.out, field), field);
    }
  }
  SUBCASE("set, get and keys") {
    create_arena(arena);
    const RunResult set = run_weir({"set", name, "pi", "3.5", "--type", "f64", "--json"});
    REQUIRE(set.exit_code == kExitOk);
    CHECK(is_one_json_object(set.out));
    const RunResult got = run_weir({"get", name, "pi", "--json"});
    REQUIRE(got.exit_code == kExitOk);
    CHECK(is_one_json_object(got.out));
    CHECK(contains(got.out, "\"type\":\"f64\""));
    CHECK(contains(got.out, "\"value\":3.5"));
    const RunResult keys = run_weir({"keys", name, "--json"});
    REQUIRE(keys.exit_code == kExitOk);
    CHECK(is_one_json_object(keys.out));
    CHECK(contains(keys.out, "\"count\":1"));
    CHECK(contains(keys.out, "{\"key\":\"pi\",\"type\":\"f64\",\"length\":8,\"epoch\":"));
  }
  SUBCASE("ls") {
    create_arena(arena);
    const RunResult r = run_weir({"ls", "--json"});
    REQUIRE(r.exit_code == kExitOk);
    CHECK(is_one_json_object(r.out));
    CHECK(contains(r.out, "\"name\":\"" + name + "\""));
  }
  SUBCASE("text values with quotes, control bytes and invalid UTF-8") {
    create_arena(arena);
    REQUIRE(run_weir({"set", name, "odd", "a\"b\\c\n\x01\xff\xc3\xa9"}).exit_code == kExitOk);
    const RunResult r = run_weir({"get", name, "odd", "--json"});
    REQUIRE(r.exit_code == kExitOk);
    CHECK(is_one_json_object(r.out));
    CHECK(contains(r.out, R"("value":"a\"b\\c\n\u0001)" "\xEF\xBF\xBD" "\xc3\xa9\""));
  }
}

TEST_CASE("get of a missing key exits 1 and names the key and the arena") {
  ScratchArena arena;
  create_arena(arena);
  const RunResult r = run_weir({"get", arena.name(), "no_such_key"});
  CHECK(r.exit_code == kExitError);
  CHECK(r.out.empty());
  CHECK(contains(r.err, "key 'no_such_key' not found in arena '" + arena.name() + "'"));
}

TEST_CASE("get says the value is torn when its writer died mid-write") {
  ScratchArena arena;
  create_arena(arena);
  REQUIRE(run_weir({"set", arena.name(), "k", "v"}).exit_code == kExitOk);

  auto held = weir::core::Arena::open(arena.name());
  REQUIRE(held.has_value());
  weir::core::KvStore kv(*held);
  weir::core::KeyHandle handle;
  REQUIRE(kv.resolve("k", handle) == weir::core::KvStatus::ok);
  auto* slot = reinterpret_cast<weir::core::SlotHeader*>(held->region(weir::core::Region::slots) +
                                                        std::uint64_t{handle.slot} * held->geometry().slot_stride);
  const pid_t dead = fork();  // a writer that is gone: reaped before it is named the owner
  REQUIRE(dead >= 0);
  if (dead == 0) _exit(0);
  REQUIRE(waitpid(dead, nullptr, 0) == dead);
  // Odd and naming the dead pid: a write in progress that will never finish.
  slot->epoch.store(weir::core::epoch_claimed(slot->epoch.load(), static_cast<std::uint32_t>(dead)));

  const RunResult r = run_weir({"get", arena.name(), "k"});
  CHECK(r.exit_code == kExitError);
  CHECK(r.out.empty());
  CHECK(contains(r.err, "key 'k'"));
  CHECK(contains(r.err, "torn"));
}

TEST_CASE("commands on a missing arena exit 1 and name the arena") {
  ScratchArena arena;
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"get", arena.name(), "k"}, {"info", arena.name()}, {"rm", arena.name()}, {"keys", arena.name()}}) {
    const RunResult r = run_weir(args);
    CHECK_MESSAGE(r.exit_code == kExitError, args[0]);
    CHECK_MESSAGE(contains(r.err, arena.name()), args[0]);
  }
}

TEST_CASE("create over an existing arena fails and names it") {
  ScratchArena arena;
  create_arena(arena);
  const RunResult r = run_weir({"create", arena.name()});
  CHECK(r.exit_code == kExitError);
  CHECK(contains(r.err, arena.name()));
  CHECK(contains(r.err, "exists"));
}

TEST_CASE("--help works for every command") {
  for (const char* command : {"create", "info", "ls", "rm", "sync", "snapshot", "restore", "get", "set", "del",
                              "keys", "incr", "decr", "and", "or", "xor", "not", "bench"}) {
    const RunResult r = run_weir({command, "--help"});
    CHECK_MESSAGE(r.exit_code == kExitOk, command);
    CHECK_MESSAGE(contains(r.out, std::string("weir ") + command), command);
  }
  const RunResult top = run_weir({"--help"});
  CHECK(top.exit_code == kExitOk);
  CHECK(contains(top.out, "Subcommands:"));
}

TEST_CASE("a wrong command line exits 2 and says what is wrong") {
  ScratchArena arena;
  create_arena(arena);
  SUBCASE("no subcommand") { CHECK(run_weir({}).exit_code == kExitUsage); }
  SUBCASE("missing positional") {
    const RunResult r = run_weir({"get", arena.name()});
    CHECK(r.exit_code == kExitUsage);
    CHECK(contains(r.err, "KEY"));
  }
  SUBCASE("unknown option") { CHECK(run_weir({"keys", arena.name(), "--bogus"}).exit_code == kExitUsage); }
  SUBCASE("value that is not of the type") {
    const RunResult r = run_weir({"set", arena.name(), "k", "twelve", "--type", "i64"});
    CHECK(r.exit_code == kExitUsage);
    CHECK(contains(r.err, "twelve"));
  }
  SUBCASE("bad operand") { CHECK(run_weir({"xor", arena.name(), "k", "0xZZ"}).exit_code == kExitUsage); }
  SUBCASE("bad mode") { CHECK(run_weir({"create", arena.name() + "m", "--mode", "0999"}).exit_code == kExitUsage); }
}

TEST_CASE("set reports a key or value over the arena's limits with the limit") {
  ScratchArena arena;
  REQUIRE(run_weir({"create", arena.name(), "--key-bytes", "8", "--value-bytes", "16"}).exit_code == kExitOk);
  const RunResult long_key = run_weir({"set", arena.name(), "a_key_longer_than_8", "v"});
  CHECK(long_key.exit_code == kExitError);
  CHECK(contains(long_key.err, "a_key_longer_than_8"));
  CHECK(contains(long_key.err, "at most 8 bytes"));
  const RunResult big_value = run_weir({"set", arena.name(), "k", std::string(17, 'x')});
  CHECK(big_value.exit_code == kExitError);
  CHECK(contains(big_value.err, "17 bytes"));
  CHECK(contains(big_value.err, "at most 16 bytes"));
}

TEST_CASE("set reads stdin verbatim and --hex stores bytes") {
  ScratchArena arena;
  create_arena(arena);
  REQUIRE(run_weir({"set", arena.name(), "piped", "--stdin"}, "line one\nline two\n").exit_code == kExitOk);
  CHECK(run_weir({"get", arena.name(), "piped", "--raw"}).out == "line one\nline two\n");

  REQUIRE(run_weir({"set", arena.name(), "blob", "00ff10Ab", "--hex"}).exit_code == kExitOk);
  const RunResult hex = run_weir({"get", arena.name(), "blob"});
  CHECK(hex.out == "00ff10ab\n");
  CHECK(contains(run_weir({"get", arena.name(), "blob", "--json"}).out, "\"type\":\"bytes\""));
  CHECK(run_weir({"get", arena.name(), "blob", "--raw"}).out == std::string("\x00\xff\x10\xab", 4));
}

TEST_CASE("integer commands print the new value") {
  ScratchArena arena;
  create_arena(arena);
  const std::string& name = arena.name();
  CHECK(run_weir({"incr", name, "n"}).out == "1\n");  // a missing key starts at 0
  CHECK(run_weir({"incr", name, "n", "10"}).out == "11\n");
  CHECK(run_weir({"decr", name, "n", "-4"}).out == "15\n");
  CHECK(run_weir({"decr", name, "n", "0x10"}).out == "-1\n");
  CHECK(run_weir({"and", name, "n", "0xff"}).out == "255\n");
  CHECK(run_weir({"or", name, "n", "0x100"}).out == "511\n");
  CHECK(run_weir({"xor", name, "n", "1"}).out == "510\n");
  CHECK(run_weir({"not", name, "n"}).out == "-511\n");
  const RunResult json = run_weir({"incr", name, "n", "--json"});
  CHECK(is_one_json_object(json.out));
  CHECK(contains(json.out, "\"value\":-510"));

  REQUIRE(run_weir({"set", name, "words", "text"}).exit_code == kExitOk);
  const RunResult mismatch = run_weir({"incr", name, "words"});
  CHECK(mismatch.exit_code == kExitError);
  CHECK(contains(mismatch.err, "words"));
}

TEST_CASE("rm refuses an arena a live process has attached unless forced") {
  ScratchArena arena;
  create_arena(arena);
  auto held = weir::core::Arena::open(arena.name());  // this test process is the live attacher
  REQUIRE(held.has_value());

  const RunResult refused = run_weir({"rm", arena.name()});
  CHECK(refused.exit_code == kExitError);
  CHECK(contains(refused.err, arena.name()));
  CHECK(contains(refused.err, std::to_string(getpid())));
  CHECK(contains(refused.err, "--force"));
  CHECK(std::filesystem::exists(shm_path(arena.name())));

  const RunResult forced = run_weir({"rm", arena.name(), "--force"});
  CHECK_MESSAGE(forced.exit_code == kExitOk, forced.err);
  CHECK_FALSE(std::filesystem::exists(shm_path(arena.name())));
}

TEST_CASE("rm leaves no /dev/shm entry behind") {
  ScratchArena arena;
  create_arena(arena);
  REQUIRE(run_weir({"set", arena.name(), "k", "v"}).exit_code == kExitOk);
  REQUIRE(std::filesystem::exists(shm_path(arena.name())));
  const RunResult r = run_weir({"rm", arena.name()});
  CHECK(r.exit_code == kExitOk);
  CHECK_FALSE(std::filesystem::exists(shm_path(arena.name())));
  CHECK_FALSE(contains(run_weir({"ls"}).out, arena.name()));
}

TEST_CASE("snapshot and restore carry keys to a new arena") {
  ScratchArena source;
  ScratchArena copy;
  create_arena(source);
  REQUIRE(run_weir({"set", source.name(), "k", "kept"}).exit_code == kExitOk);
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("weir_cli_snapshot_" + std::to_string(getpid()) + ".arena");

  const RunResult snap = run_weir({"snapshot", source.name(), file.string(), "--json"});
  CHECK_MESSAGE(snap.exit_code == kExitOk, snap.err);
  CHECK(is_one_json_object(snap.out));
  CHECK(contains(snap.out, "\"keys_copied\":1"));

  const RunResult restored = run_weir({"restore", file.string(), copy.name()});
  CHECK_MESSAGE(restored.exit_code == kExitOk, restored.err);
  CHECK(run_weir({"get", copy.name(), "k"}).out == "kept\n");
  CHECK(run_weir({"restore", file.string(), copy.name()}).exit_code == kExitError);

  std::error_code ignored;
  std::filesystem::remove(file, ignored);
}

TEST_CASE("an array key prints as numbers: get --json with dtype and shape, text rows, keys with its shape") {
  ScratchArena arena;
  create_arena(arena);
  const std::string& name = arena.name();
  {
    auto held = weir::core::Arena::open(name);
    REQUIRE(held.has_value());
    weir::core::KvStore kv(*held);
    std::vector<std::uint32_t> counts(1024);
    for (std::uint32_t i = 0; i < counts.size(); ++i) counts[i] = i * 3 + (i % 7 == 0 ? 4000000000U : 0U);
    REQUIRE(kv.set_array("det0.spectrum", weir::core::ArrayShape{weir::core::Dtype::u32, 1, {1024, 0}},
                         std::as_bytes(std::span(counts))) == weir::core::KvStatus::ok);
    const RunResult r = run_weir({"get", name, "det0.spectrum", "--json"});
    REQUIRE_MESSAGE(r.exit_code == kExitOk, r.err);
    const nlohmann::json j = parse_json(r.out);
    REQUIRE_FALSE(j.is_discarded());
    CHECK(j["type"] == "array");
    CHECK(j["dtype"] == "u32");
    CHECK(j["shape"] == nlohmann::json::array({1024}));
    CHECK(j["length"] == 4096);
    REQUIRE(j["value"].is_array());
    REQUIRE(j["value"].size() == counts.size());
    for (std::size_t i = 0; i < counts.size(); ++i) {
      CAPTURE(i);
      REQUIRE(j["value"][i].is_number_unsigned());
      CHECK(j["value"][i].get<std::uint64_t>() == counts[i]);
    }
  }
  SUBCASE("set --array f64 --shape 2x3, then text and JSON") {
    const RunResult set = run_weir({"set", name, "grid", "--array", "f64", "--shape", "2x3", "0.5 -1 2e10, 3 4.25 -0"});
    REQUIRE_MESSAGE(set.exit_code == kExitOk, set.err);
    CHECK(contains(set.out, "array f64[2x3], 48 bytes"));
    const RunResult text = run_weir({"get", name, "grid"});
    REQUIRE(text.exit_code == kExitOk);
    CHECK(text.out == "0.5 -1 20000000000\n3 4.25 -0\n");
    const nlohmann::json j = parse_json(run_weir({"get", name, "grid", "--json"}).out);
    REQUIRE_FALSE(j.is_discarded());
    CHECK(j["dtype"] == "f64");
    CHECK(j["shape"] == nlohmann::json::array({2, 3}));
    const double want[2][3] = {{0.5, -1, 2e10}, {3, 4.25, -0.0}};
    REQUIRE(j["value"].size() == 2);
    for (std::size_t r = 0; r < 2; ++r) {
      REQUIRE(j["value"][r].size() == 3);
      for (std::size_t c = 0; c < 3; ++c) CHECK(j["value"][r][c].get<double>() == want[r][c]);
    }
  }
  SUBCASE("set --array u32 --shape 4, and keys shows the shape") {
    REQUIRE(run_weir({"set", name, "four", "--array", "u32", "--shape", "4", "1 2 3 4"}).exit_code == kExitOk);
    CHECK(run_weir({"get", name, "four"}).out == "1 2 3 4\n");
    const RunResult keys = run_weir({"keys", name});
    REQUIRE(keys.exit_code == kExitOk);
    CHECK(contains(keys.out, "array u32[1024]"));
    CHECK(contains(keys.out, "array u32[4]"));
    const nlohmann::json j = parse_json(run_weir({"keys", name, "--json"}).out);
    REQUIRE_FALSE(j.is_discarded());
    bool found = false;
    for (const auto& k : j["keys"]) {
      if (k["key"] != "four") continue;
      found = true;
      CHECK(k["type"] == "array");
      CHECK(k["dtype"] == "u32");
      CHECK(k["shape"] == nlohmann::json::array({4}));
    }
    CHECK(found);
  }
  SUBCASE("set --array refuses numbers that do not fit the dtype or the shape, naming them") {
    const RunResult big = run_weir({"set", name, "b", "--array", "u8", "1 2 300"});
    CHECK(big.exit_code == kExitUsage);
    CHECK(contains(big.err, "\"300\" (number 3) is not a u8 value"));
    const RunResult count = run_weir({"set", name, "b", "--array", "i32", "--shape", "2x2", "1 2 3"});
    CHECK(count.exit_code == kExitUsage);
    CHECK(contains(count.err, "3 elements given for shape i32[2x2]"));
    const RunResult atomic = run_weir({"incr", name, "det0.spectrum"});
    CHECK(atomic.exit_code == kExitError);
  }
}

TEST_CASE("ls shows a framed channel's frames and axis, in text and in JSON") {
  ScratchArena arena;
  create_arena(arena);
  {
    auto held = weir::core::Arena::open(arena.name());
    REQUIRE(held.has_value());
    weir::core::ChannelSpec spec;
    spec.name = "det0.psd";
    spec.rate_hz = 62530.5;
    spec.samples_per_block = 2049;
    spec.ring_blocks = 4;
    spec.frame.frames_per_block = 1;
    spec.frame.frame_elements = 2049;
    spec.frame.axis = weir::core::FrameAxis{"frequency", "Hz", 0.0, 30.5, ""};
    REQUIRE(weir::core::create_channel(*held, spec));
    spec = weir::core::ChannelSpec{};
    spec.name = "adc0";
    spec.rate_hz = 1000;
    spec.samples_per_block = 64;
    spec.ring_blocks = 4;
    REQUIRE(weir::core::create_channel(*held, spec));
  }
  const RunResult text = run_weir({"ls", arena.name()});
  REQUIRE_MESSAGE(text.exit_code == kExitOk, text.err);
  CHECK_MESSAGE(contains(text.out, "frames 1 x 2049 frequency [Hz] 0 + 30.5/bin"), text.out);
  const RunResult r = run_weir({"ls", arena.name(), "--json"});
  REQUIRE(r.exit_code == kExitOk);
  const nlohmann::json j = parse_json(r.out);
  REQUIRE_FALSE(j.is_discarded());
  int seen = 0;
  for (const auto& c : j["channels"]) {
    ++seen;
    if (c["name"] == "adc0") {
      CHECK(c["frame"].is_null());
      continue;
    }
    const auto& f = c["frame"];
    CHECK(f["frames_per_block"] == 1);
    CHECK(f["frame_elements"] == 2049);
    CHECK(f["axis"]["name"] == "frequency");
    CHECK(f["axis"]["units"] == "Hz");
    CHECK(f["axis"]["start"].get<double>() == 0.0);
    CHECK(f["axis"]["step"].get<double>() == 30.5);
  }
  CHECK(seen == 2);
}

}  // TEST_SUITE
