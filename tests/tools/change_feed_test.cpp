// What `weir watch` makes of a change log (weir/tools/change_feed.hpp): the entries of one drain
// merged per key, and each change read back from a real arena, named even after its key is gone.
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "arena_guard.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/signals.hpp"
#include "weir/tools/change_feed.hpp"
#include "weir/tools/value_codec.hpp"

using namespace weir;
using tools::PendingChange;

namespace {

core::Arena make_arena() {
  core::ArenaOptions o;
  o.slot_count = 64;
  o.value_bytes = 64;
  o.vector_dim = 0;
  auto arena = core::Arena::create("memfd:" + test::unique_name("changes"), o);
  REQUIRE(arena.has_value());
  return std::move(*arena);
}

std::span<const std::byte> bytes_of(std::string_view text) {
  return {reinterpret_cast<const std::byte*>(text.data()), text.size()};
}

// Every change the watcher logged since the last drain, merged per key.
std::vector<PendingChange> drain(core::Watcher& watcher) {
  std::vector<core::Change> changes;
  (void)watcher.drain([&changes](const core::Change& c) { changes.push_back(c); });
  return tools::merge_changes(changes);
}

}  // namespace

TEST_SUITE("tools.change_feed") {

TEST_CASE("merge_changes gives one change per key in log order, counting the writes of its busiest group") {
  // slot 7 written twice, each write logged by groups 1 and 3; then slot 2 once; then slot 7 again
  // under a new generation (deleted and created again: another key).
  const std::vector<core::Change> log{
      {3, 7, 1, false}, {1, 7, 1, false}, {1, 2, 5, false}, {3, 7, 1, false}, {1, 7, 1, false}, {1, 7, 2, false}};
  const std::vector<PendingChange> merged = tools::merge_changes(log);
  REQUIRE(merged.size() == 3);
  CHECK(merged[0].slot == 7);
  CHECK(merged[0].generation == 1);
  CHECK(merged[0].group == 3);  // the group that logged it first
  CHECK(merged[0].writes == 2);  // two writes, though four entries
  CHECK(merged[0].first == 0);
  CHECK(merged[1].slot == 2);
  CHECK(merged[1].writes == 1);
  CHECK(merged[1].first == 2);
  CHECK(merged[2].slot == 7);
  CHECK(merged[2].generation == 2);
  CHECK(merged[2].first == 5);
  CHECK(tools::merge_changes({}).empty());
}

TEST_CASE("a change reads back as its key, its value now and the write's latency") {
  core::Arena arena = make_arena();
  core::KvStore kv(arena);
  auto watcher = core::Watcher::create(arena);
  REQUIRE(watcher.has_value());
  auto group = watcher->subscribe_key("run.title");
  REQUIRE(group.has_value());
  tools::ChangeReader reader(arena);
  reader.note_key_group(*group, "run.title");

  REQUIRE(kv.set_text("run.title", "cosmics") == core::KvStatus::ok);
  REQUIRE(kv.set_text("run.title", "cosmics 2") == core::KvStatus::ok);
  std::vector<PendingChange> changes = drain(*watcher);
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].writes == 2);
  const tools::ChangeRecord r = reader.read(changes[0]);
  CHECK(r.key == "run.title");
  CHECK_FALSE(r.deleted);
  CHECK(r.problem.empty());
  CHECK(r.info.type == core::ValueType::text);
  CHECK(std::string(reinterpret_cast<const char*>(r.value.data()), r.value.size()) == "cosmics 2");
  CHECK(r.writes == 2);
  REQUIRE(r.latency_ns.has_value());
  CHECK(*r.latency_ns >= 0);
  CHECK(r.time_ns > 0);

  SUBCASE("a deleted key is still named, and reads as deleted") {
    REQUIRE(kv.del("run.title") == core::KvStatus::ok);
    changes = drain(*watcher);
    REQUIRE(changes.size() == 1);
    const tools::ChangeRecord gone = reader.read(changes[0]);
    CHECK(gone.key == "run.title");
    CHECK(gone.deleted);
  }
}

TEST_CASE("a change of a slot nothing names reads as (slot N)") {
  core::Arena arena = make_arena();
  tools::ChangeReader reader(arena);
  const tools::ChangeRecord r = reader.read(PendingChange{5, 9, 0, 1, 0});
  CHECK(r.key == "(slot 5)");
  CHECK(r.deleted);  // nothing lives there under generation 9
}

TEST_CASE("a value previews as one short line") {
  using core::ValueType;
  CHECK(tools::value_preview(ValueType::none, {}) == "(empty)");
  CHECK(tools::value_preview(ValueType::text, bytes_of("say \"hi\"")) == R"("say \"hi\"")");
  const std::string long_text(70, 'x');
  CHECK(tools::value_preview(ValueType::text, bytes_of(long_text)) == "\"" + std::string(60, 'x') + "…\"");
  std::string accents;  // 61 two-byte characters: the cut falls after the 60th, never inside one
  for (int i = 0; i < 61; ++i) accents += "\xc3\xa9";
  CHECK(tools::value_preview(ValueType::text, bytes_of(accents)) == "\"" + accents.substr(0, 120) + "…\"");
  CHECK(tools::value_preview(ValueType::bytes, bytes_of("\x01\xff")) == "0x01ff (2 bytes)");
  std::string sixteen;  // the first 16 of 20 bytes 0x10, in hex
  for (int i = 0; i < 16; ++i) sixteen += "10";
  CHECK(tools::value_preview(ValueType::bytes, bytes_of(std::string(20, '\x10'))) == "0x" + sixteen + "… (20 bytes)");
  const std::int64_t minus_three = -3;
  CHECK(tools::value_preview(ValueType::i64, {reinterpret_cast<const std::byte*>(&minus_three), sizeof minus_three}) ==
        "-3");
  const float floats[2] = {1.0F, 2.0F};
  CHECK(tools::value_preview(ValueType::vector, {reinterpret_cast<const std::byte*>(floats), sizeof floats}) ==
        "[1 2] (2 floats)");
  CHECK(tools::value_preview(ValueType::array, bytes_of("abcd")) == "(array, 4 bytes)");
}

}  // TEST_SUITE
