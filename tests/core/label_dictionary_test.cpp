#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "arena_guard.hpp"
#include "weir/core/label_dictionary.hpp"
#include "weir/core/signals.hpp"

using namespace weir::core;
using weir::test::ArenaGuard;
using weir::test::unique_name;

namespace {
const ArenaOptions kSmallArena{.slot_count = 64, .vector_dim = 0};
}  // namespace

TEST_SUITE("core.label_dictionary") {

TEST_CASE("labels are found by name and by id, with their masks, and never added by a lookup") {
  ArenaGuard guard(unique_name("labels"));
  auto arena = Arena::create(guard.where(), kSmallArena);
  REQUIRE(arena);
  const LabelDictionary dict(*arena);
  CHECK_FALSE(dict.find("power"));
  CHECK_FALSE(dict.find("power"));  // still absent: find never adds
  GroupTable groups(*arena);
  const std::uint32_t power = groups.label_id("power").value();
  const std::uint32_t fast = groups.label_id("fast").value();
  REQUIRE(dict.find("power"));
  CHECK(*dict.find("power") == power);
  CHECK(*dict.find("fast") == fast);
  CHECK_FALSE(dict.find("pow"));
  const auto entry = dict.at(fast);
  REQUIRE(entry);
  CHECK(entry->id == fast);
  CHECK(entry->name == "fast");
  CHECK(entry->mask == label_mask("fast"));
  CHECK_FALSE(dict.at(kLabelCapacity - 1));  // free
  CHECK_FALSE(dict.at(kLabelCapacity));      // past the dictionary
  std::vector<std::string> seen;
  dict.for_each([&](const LabelInfo& l) { seen.emplace_back(l.name); });
  CHECK(seen == std::vector<std::string>{"power", "fast"});
}

TEST_CASE("a half-written entry is not handed out") {
  ArenaGuard guard(unique_name("labels"));
  auto arena = Arena::create(guard.where(), kSmallArena);
  REQUIRE(arena);
  const std::uint32_t id = GroupTable(*arena).label_id("x").value();
  auto* entries = reinterpret_cast<LabelEntry*>(arena->region(Region::groups) + labels_offset_in_groups());
  entries[id].state.store(static_cast<std::uint32_t>(LabelState::writing));  // as a writer that died mid-entry
  const LabelDictionary dict(*arena);
  CHECK_FALSE(dict.at(id));
  CHECK_FALSE(dict.find("x"));
}

}  // TEST_SUITE
