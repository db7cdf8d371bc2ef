#include <doctest/doctest.h>

#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "arena_guard.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/signals.hpp"
#include "weir/core/slot_copier.hpp"

using namespace weir::core;
using weir::test::ArenaGuard;
using weir::test::unique_name;

namespace {

std::span<const std::byte> bytes_of(std::string_view s) { return {reinterpret_cast<const std::byte*>(s.data()), s.size()}; }
std::string text_of(const std::vector<std::byte>& v) { return {reinterpret_cast<const char*>(v.data()), v.size()}; }

struct Fixture {
  Fixture() : guard(unique_name("slotcopy")), arena(std::move(Arena::create(guard.where(), options()).value())), kv(arena) {}
  static ArenaOptions options() {
    ArenaOptions o;
    o.slot_count = 64;
    o.value_bytes = 256;
    o.vector_dim = 0;
    return o;
  }
  SlotHeader& slot_of(std::string_view key) {
    KeyHandle h;
    REQUIRE(kv.resolve(key, h) == KvStatus::ok);
    return *reinterpret_cast<SlotHeader*>(arena.region(Region::slots) + std::uint64_t{h.slot} * arena.geometry().slot_stride);
  }
  std::uint32_t index_of(std::string_view key) {
    KeyHandle h;
    REQUIRE(kv.resolve(key, h) == KvStatus::ok);
    return h.slot;
  }
  ArenaGuard guard;
  Arena arena;
  KvStore kv;
};

}  // namespace

TEST_SUITE("core.slot_copier") {

TEST_CASE("a slot copies with its key, value, type, labels and version from one write") {
  Fixture f;
  REQUIRE(f.kv.set("volts", bytes_of("3.3V"), ValueType::text) == KvStatus::ok);
  REQUIRE(f.kv.set("volts", bytes_of("5.0V"), ValueType::text) == KvStatus::ok);
  const std::vector<std::string> labels{"power"};
  REQUIRE(set_labels(f.arena, "volts", labels));
  const SlotCopier copier(f.arena);
  SlotCopy c;
  CHECK(copier.copy(f.index_of("volts"), c) == SlotStatus::ok);
  CHECK(c.record.status == SlotStatus::ok);
  CHECK(c.key == "volts");
  CHECK(text_of(c.value) == "5.0V");
  CHECK(c.record.type == ValueType::text);
  CHECK(c.record.key_length == 5);
  CHECK(c.record.value_length == 4);
  CHECK(c.record.version() >= 2);
  CHECK(c.record.label_ids == 1);  // the first label in the dictionary
  CHECK((c.record.labels & label_mask("power")) == label_mask("power"));
  CHECK(c.record.owner_pid == 0);
  CHECK(c.record.retries == 0);
  CHECK_FALSE(c.record.met_writer);
  ValueInfo info;
  std::vector<std::byte> value(256);
  REQUIRE(f.kv.get("volts", value, info) == KvStatus::ok);
  CHECK(c.record.epoch == info.epoch);
}

TEST_CASE("an unused slot is empty") {
  Fixture f;
  const SlotCopier copier(f.arena);
  SlotCopy c;
  c.key = "left over";
  CHECK(copier.copy(0, c) == SlotStatus::empty);
  CHECK(c.key.empty());
  CHECK(c.value.empty());
}

TEST_CASE("caller buffers: a copy allocates nothing and a short buffer answers too_small with the lengths") {
  Fixture f;
  REQUIRE(f.kv.set("k", bytes_of("twelve bytes")) == KvStatus::ok);
  const SlotCopier copier(f.arena);
  std::vector<char> key(copier.key_bytes());
  SlotRecord r;
  SUBCASE("big enough") {
    std::vector<std::byte> value(copier.value_bytes());
    CHECK(copier.copy(f.index_of("k"), key, value, r) == SlotStatus::ok);
    CHECK(std::string(key.data(), r.key_length) == "k");
    CHECK(std::string(reinterpret_cast<const char*>(value.data()), r.value_length) == "twelve bytes");
  }
  SUBCASE("too short") {
    std::vector<std::byte> value(4);
    CHECK(copier.copy(f.index_of("k"), key, value, r) == SlotStatus::too_small);
    CHECK(r.value_length == 12);
    CHECK(r.key_length == 1);
  }
}

TEST_CASE("a slot held by a live writer is reported busy with the holder's pid after the wait") {
  Fixture f;
  REQUIRE(f.kv.set("held", bytes_of("a")) == KvStatus::ok);
  SlotHeader& s = f.slot_of("held");
  const std::uint32_t index = f.index_of("held");
  const std::uint64_t even = s.epoch.load();
  const auto me = static_cast<std::uint32_t>(getpid());
  s.epoch.store(epoch_claimed(even, me));  // as a live writer of this process leaves it mid-write
  SlotCopyOptions o;
  o.wait_ns = 2'000'000;
  const SlotCopier copier(f.arena, o);
  SlotCopy c;
  c.value.assign(8, std::byte{1});
  CHECK(copier.copy(index, c) == SlotStatus::busy);
  CHECK(c.record.owner_pid == me);
  CHECK(epoch_odd(c.record.epoch));
  CHECK(c.record.met_writer);
  CHECK(c.key == "held");  // live before the claim: its bytes do not change
  CHECK(c.value.empty());
  s.epoch.store(epoch_released(s.epoch.load()));
  CHECK(copier.copy(index, c) == SlotStatus::ok);
  CHECK(text_of(c.value) == "a");
}

TEST_CASE("a slot a dead writer left torn gives its key and metadata but never its value") {
  Fixture f;
  REQUIRE(f.kv.set("torn", bytes_of("half")) == KvStatus::ok);
  SlotHeader& s = f.slot_of("torn");
  s.meta.fetch_or(std::uint64_t{kSlotTorn} << 56);  // the flag recovery sets (bits 56-63: SlotFlags)
  const SlotCopier copier(f.arena);
  SlotCopy c;
  CHECK(copier.copy(f.index_of("torn"), c) == SlotStatus::torn);
  CHECK(c.key == "torn");
  CHECK(c.value.empty());
  CHECK(c.record.value_length == 4);
  CHECK(c.record.owner_pid == 0);
}

TEST_CASE("an array slot copies with its element dtype and shape") {
  Fixture f;
  std::vector<std::int64_t> v{-1, 2, -3, 4, -5, 6};
  REQUIRE(f.kv.set_array("arr", ArrayShape{Dtype::i64, 2, {3, 2}}, std::as_bytes(std::span(v))) == KvStatus::ok);
  const SlotCopier copier(f.arena);
  SlotCopy c;
  REQUIRE(copier.copy(f.index_of("arr"), c) == SlotStatus::ok);
  CHECK(c.record.type == ValueType::array);
  CHECK(c.record.array == ArrayShape{Dtype::i64, 2, {3, 2}});
  REQUIRE(c.value.size() == v.size() * sizeof(std::int64_t));
  CHECK(std::memcmp(c.value.data(), v.data(), c.value.size()) == 0);
  REQUIRE(f.kv.set("arr", bytes_of("now text"), ValueType::text) == KvStatus::ok);
  REQUIRE(copier.copy(f.index_of("arr"), c) == SlotStatus::ok);
  CHECK(c.record.type == ValueType::text);
  CHECK(c.record.array == ArrayShape{});
}

}  // TEST_SUITE
