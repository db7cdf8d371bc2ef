#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "arena_guard.hpp"
#include "weir/core/detail/hash.hpp"
#include "weir/core/kv_store.hpp"

using namespace weir::core;
using weir::test::ArenaGuard;
using weir::test::unique_name;

namespace {

std::span<const std::byte> bytes_of(std::string_view s) { return {reinterpret_cast<const std::byte*>(s.data()), s.size()}; }

std::string get_string(const KvStore& kv, std::string_view key, KvStatus expect = KvStatus::ok) {
  std::vector<std::byte> buf(kv.value_bytes());
  ValueInfo info;
  const KvStatus st = kv.get(key, buf, info);
  CHECK(st == expect);
  if (st != KvStatus::ok) return {};
  return {reinterpret_cast<const char*>(buf.data()), info.length};
}

struct Fixture {
  explicit Fixture(ArenaOptions options = {.slot_count = 256, .value_bytes = 4096})
      : guard(unique_name("kv")), arena(std::move(Arena::create(guard.where(), options).value())), kv(arena) {}
  ArenaGuard guard;
  Arena arena;
  KvStore kv;
};

}  // namespace

TEST_SUITE("core.kv_store") {

TEST_CASE("get after set returns the value, its type and an even epoch") {
  Fixture f;
  REQUIRE(f.kv.set("alpha", bytes_of("hello"), ValueType::text) == KvStatus::ok);
  CHECK(get_string(f.kv, "alpha") == "hello");
  ValueInfo info;
  std::byte buf[16];
  REQUIRE(f.kv.get("alpha", buf, info) == KvStatus::ok);
  CHECK(info.type == ValueType::text);
  CHECK(info.length == 5);
  CHECK(info.epoch % 2 == 0);
  REQUIRE(f.kv.set("alpha", bytes_of("bye"), ValueType::text) == KvStatus::ok);
  ValueInfo info2;
  REQUIRE(f.kv.get("alpha", buf, info2) == KvStatus::ok);
  CHECK(info2.epoch > info.epoch);
  CHECK(f.kv.count() == 1);
}

TEST_CASE("a missing key, a deleted key and a re-added key behave as a map") {
  Fixture f;
  get_string(f.kv, "nope", KvStatus::not_found);
  REQUIRE(f.kv.set("k", bytes_of("v1")) == KvStatus::ok);
  REQUIRE(f.kv.del("k") == KvStatus::ok);
  get_string(f.kv, "k", KvStatus::not_found);
  CHECK(f.kv.del("k") == KvStatus::not_found);
  REQUIRE(f.kv.set("k", bytes_of("v2")) == KvStatus::ok);
  CHECK(get_string(f.kv, "k") == "v2");
  CHECK(f.kv.count() == 1);
}

TEST_CASE("keys too long, empty keys, values too big and empty values") {
  Fixture f(ArenaOptions{.slot_count = 16, .key_bytes = 8, .value_bytes = 64});
  CHECK(f.kv.set("123456789", bytes_of("x")) == KvStatus::key_too_long);
  CHECK(f.kv.set("12345678", bytes_of("x")) == KvStatus::ok);
  CHECK(f.kv.set("", bytes_of("x")) == KvStatus::key_empty);
  const std::string big(65, 'b');
  CHECK(f.kv.set("big", bytes_of(big)) == KvStatus::value_too_large);
  CHECK(f.kv.set("fits", bytes_of(big.substr(0, 64))) == KvStatus::ok);
  CHECK(f.kv.set("empty", {}) == KvStatus::ok);
  ValueInfo info;
  std::byte small[4];
  CHECK(f.kv.get("empty", small, info) == KvStatus::ok);
  CHECK(info.length == 0);
  CHECK(f.kv.get("fits", small, info) == KvStatus::value_too_large);
  CHECK(info.length == 64);
  ValueInfo missing;
  CHECK(f.kv.get(std::string(9, 'k'), small, missing) == KvStatus::key_too_long);
}

TEST_CASE("typed values round-trip and integer ops are atomic read-modify-writes") {
  Fixture f;
  REQUIRE(f.kv.set_i64("count", -5) == KvStatus::ok);
  std::uint64_t r = 0;
  REQUIRE(f.kv.atomic("count", AtomicOp::add, 10, r) == KvStatus::ok);
  CHECK(std::bit_cast<std::int64_t>(r) == 5);
  REQUIRE(f.kv.atomic("count", AtomicOp::add, static_cast<std::uint64_t>(-7), r) == KvStatus::ok);
  CHECK(std::bit_cast<std::int64_t>(r) == -2);
  REQUIRE(f.kv.set_u64("mask", 0b1100) == KvStatus::ok);
  REQUIRE(f.kv.atomic("mask", AtomicOp::bit_and, 0b0110, r) == KvStatus::ok);
  CHECK(r == 0b0100);
  REQUIRE(f.kv.atomic("mask", AtomicOp::bit_or, 0b0001, r) == KvStatus::ok);
  CHECK(r == 0b0101);
  REQUIRE(f.kv.atomic("mask", AtomicOp::bit_xor, 0b0011, r) == KvStatus::ok);
  CHECK(r == 0b0110);
  REQUIRE(f.kv.atomic("mask", AtomicOp::bit_not, 0, r) == KvStatus::ok);
  CHECK(r == ~std::uint64_t{0b0110});
  std::uint64_t bits = 0;
  ValueType type{};
  REQUIRE(f.kv.get_scalar("mask", bits, type) == KvStatus::ok);
  CHECK(bits == ~std::uint64_t{0b0110});
  CHECK(type == ValueType::u64);
  REQUIRE(f.kv.set_f64("temp", 21.5) == KvStatus::ok);
  REQUIRE(f.kv.get_scalar("temp", bits, type) == KvStatus::ok);
  CHECK(std::bit_cast<double>(bits) == 21.5);
  CHECK(f.kv.atomic("temp", AtomicOp::add, 1, r) == KvStatus::type_mismatch);
  REQUIRE(f.kv.set_text("name", "adc") == KvStatus::ok);
  CHECK(f.kv.atomic("name", AtomicOp::add, 1, r) == KvStatus::type_mismatch);
  CHECK(f.kv.get_scalar("name", bits, type) == KvStatus::type_mismatch);
}

TEST_CASE("an integer op on a missing key starts it at zero") {
  Fixture f;
  std::uint64_t r = 0;
  REQUIRE(f.kv.atomic("fresh", AtomicOp::add, 3, r) == KvStatus::ok);
  CHECK(r == 3);
  std::uint64_t bits = 0;
  ValueType type{};
  REQUIRE(f.kv.get_scalar("fresh", bits, type) == KvStatus::ok);
  CHECK(type == ValueType::i64);
}

TEST_CASE("an integer op changes the key's epoch so readers see a new version") {
  Fixture f;
  REQUIRE(f.kv.set_i64("n", 0) == KvStatus::ok);
  ValueView before;
  REQUIRE(f.kv.view("n", before) == KvStatus::ok);
  CHECK(before.valid());
  std::uint64_t r = 0;
  REQUIRE(f.kv.atomic("n", AtomicOp::add, 1, r) == KvStatus::ok);
  CHECK_FALSE(before.valid());
}

TEST_CASE("a handle reads and writes without hashing and goes stale when its key is reused") {
  Fixture f;
  KeyHandle h;
  CHECK(f.kv.resolve("h", h) == KvStatus::not_found);
  REQUIRE(f.kv.resolve("h", h, true) == KvStatus::ok);
  REQUIRE(f.kv.set(h, bytes_of("via handle"), ValueType::text) == KvStatus::ok);
  CHECK(get_string(f.kv, "h") == "via handle");
  std::byte buf[32];
  ValueInfo info;
  REQUIRE(f.kv.get(h, buf, info) == KvStatus::ok);
  CHECK(std::string(reinterpret_cast<const char*>(buf), info.length) == "via handle");
  REQUIRE(f.kv.del("h") == KvStatus::ok);
  CHECK(f.kv.get(h, buf, info) == KvStatus::not_found);
  REQUIRE(f.kv.set("h", bytes_of("again")) == KvStatus::ok);  // most likely the same slot
  KeyHandle h2;
  REQUIRE(f.kv.resolve("h", h2) == KvStatus::ok);
  if (h2.slot == h.slot) CHECK(f.kv.set(h, bytes_of("x")) == KvStatus::stale_handle);
  CHECK(f.kv.get(KeyHandle{1U << 30, 0}, buf, info) == KvStatus::stale_handle);
}

TEST_CASE("a zero-copy view points into the arena and turns invalid after a write") {
  Fixture f;
  REQUIRE(f.kv.set("v", bytes_of("in place")) == KvStatus::ok);
  ValueView view;
  REQUIRE(f.kv.view("v", view) == KvStatus::ok);
  CHECK(std::string(reinterpret_cast<const char*>(view.data()), view.size()) == "in place");
  CHECK(view.valid());
  CHECK(view.data() >= f.arena.base());
  CHECK(view.data() < f.arena.base() + f.arena.bytes());
  REQUIRE(f.kv.set("v", bytes_of("changed")) == KvStatus::ok);
  CHECK_FALSE(view.valid());
}

TEST_CASE("a second writer on a held slot gets busy at once; the waiting variant gets through") {
  Fixture f;
  REQUIRE(f.kv.set("held", bytes_of("a")) == KvStatus::ok);
  KeyHandle h;
  REQUIRE(f.kv.resolve("held", h) == KvStatus::ok);
  auto* slot = reinterpret_cast<SlotHeader*>(f.arena.region(Region::slots) + std::uint64_t{h.slot} * f.arena.geometry().slot_stride);
  const std::uint64_t even = slot->epoch.load();
  // As a live writer of this process would leave it mid-write.
  slot->epoch.store(epoch_claimed(even, static_cast<std::uint32_t>(getpid())));
  CHECK(f.kv.set("held", bytes_of("b")) == KvStatus::busy);
  CHECK(f.kv.set(h, bytes_of("b")) == KvStatus::busy);
  CHECK(f.kv.set_wait("held", bytes_of("b"), ValueType::bytes, 5'000'000) == KvStatus::busy);  // owner alive: no theft
  std::thread releaser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    slot->epoch.store(epoch_released(slot->epoch.load()), std::memory_order_release);
  });
  CHECK(f.kv.set_wait("held", bytes_of("c"), ValueType::bytes, 2'000'000'000) == KvStatus::ok);
  releaser.join();
  CHECK(get_string(f.kv, "held") == "c");
}

TEST_CASE("listing shows every live key once with its type") {
  Fixture f;
  std::map<std::string, ValueType> want;
  for (int i = 0; i < 50; ++i) {
    const std::string key = "key." + std::to_string(i);
    REQUIRE(f.kv.set_i64(key, i) == KvStatus::ok);
    want[key] = ValueType::i64;
  }
  for (int i = 0; i < 50; i += 5) {
    REQUIRE(f.kv.del("key." + std::to_string(i)) == KvStatus::ok);
    want.erase("key." + std::to_string(i));
  }
  std::map<std::string, ValueType> seen;
  f.kv.for_each_key([&](std::string_view key, const ValueInfo& info) {
    CHECK(seen.count(std::string(key)) == 0);
    seen[std::string(key)] = info.type;
  });
  CHECK(seen == want);
  CHECK(f.kv.count() == want.size());
}

TEST_CASE("a full probe window reports full, and misses stay bounded even when every slot is used") {
  Fixture f(ArenaOptions{.slot_count = 32, .value_bytes = 64, .max_probe = 8});
  int stored = 0, full = 0;
  for (int i = 0; i < 64; ++i) {
    const KvStatus st = f.kv.set_i64("k" + std::to_string(i), i);
    if (st == KvStatus::ok) ++stored;
    if (st == KvStatus::full) ++full;
    CHECK((st == KvStatus::ok || st == KvStatus::full));
  }
  CHECK(stored <= 32);
  CHECK(full > 0);
  CHECK(static_cast<int>(f.kv.count()) == stored);
  get_string(f.kv, "absent", KvStatus::not_found);  // terminates after max_probe entries
  for (int i = 0; i < 64; ++i) {
    std::uint64_t bits = 0;
    ValueType type{};
    const KvStatus st = f.kv.get_scalar("k" + std::to_string(i), bits, type);
    if (st == KvStatus::ok) CHECK(bits == static_cast<std::uint64_t>(i));
  }
}

TEST_CASE("tombstones are reused and deleted keys never come back") {
  Fixture f(ArenaOptions{.slot_count = 16, .value_bytes = 64, .max_probe = 16});
  for (int round = 0; round < 200; ++round) {
    const std::string key = "r" + std::to_string(round % 7);
    REQUIRE(f.kv.set_i64(key, round) == KvStatus::ok);
    if (round % 3 == 0) REQUIRE(f.kv.del(key) == KvStatus::ok);
  }
  int live = 0;
  f.kv.for_each_key([&](std::string_view, const ValueInfo&) { ++live; });
  CHECK(live == static_cast<int>(f.kv.count()));
  CHECK(live <= 7);
}

// Two distinct keys with one 32-bit probe tag and one home slot among `slots`, found by a birthday
// search over 34 bits (about 160k keys).
std::pair<std::string, std::string> keys_with_one_tag(std::uint32_t slots) {
  std::unordered_map<std::uint64_t, std::string> seen;
  for (std::uint32_t i = 0;; ++i) {
    std::string key = "tag" + std::to_string(i);
    const std::uint64_t hash = weir::core::detail::hash_key(key);
    const std::uint64_t where = (hash >> 32) * slots + weir::core::detail::home_slot(hash, slots);
    if (auto [it, fresh] = seen.emplace(where, key); !fresh) return {it->second, key};
  }
}

TEST_CASE("keys whose probe tags collide read their own values, and a missing one leaves the buffer alone") {
  constexpr std::uint32_t kSlots = 4;
  const auto [a, b] = keys_with_one_tag(kSlots);
  REQUIRE(a != b);
  const std::uint64_t ha = weir::core::detail::hash_key(a), hb = weir::core::detail::hash_key(b);
  REQUIRE((ha >> 32) == (hb >> 32));
  REQUIRE(weir::core::detail::home_slot(ha, kSlots) == weir::core::detail::home_slot(hb, kSlots));
  MESSAGE("colliding keys: " << a << ", " << b);
  // One home slot: a takes it, so every lookup of b meets a's matching tag first.
  Fixture f(ArenaOptions{.slot_count = kSlots, .value_bytes = 64, .max_probe = kSlots});
  REQUIRE(f.kv.set(a, bytes_of("value of a")) == KvStatus::ok);
  std::byte buf[64];
  std::memset(buf, 0x5a, sizeof buf);
  ValueInfo info;
  CHECK(f.kv.get(b, buf, info) == KvStatus::not_found);
  CHECK(std::all_of(std::begin(buf), std::end(buf), [](std::byte x) { return x == std::byte{0x5a}; }));
  REQUIRE(f.kv.set(b, bytes_of("and b's")) == KvStatus::ok);
  CHECK(get_string(f.kv, a) == "value of a");
  CHECK(get_string(f.kv, b) == "and b's");
  REQUIRE(f.kv.set(a, bytes_of("a again")) == KvStatus::ok);
  REQUIRE(f.kv.set(b, bytes_of("b again")) == KvStatus::ok);  // the write path meets a's tag first too
  CHECK(get_string(f.kv, a) == "a again");
  CHECK(get_string(f.kv, b) == "b again");
  CHECK(f.kv.count() == 2);
  REQUIRE(f.kv.del(a) == KvStatus::ok);  // a tombstone at home: b is still found past it
  REQUIRE(f.kv.set(b, bytes_of("b once more")) == KvStatus::ok);
  CHECK(get_string(f.kv, b) == "b once more");
  CHECK(get_string(f.kv, a, KvStatus::not_found).empty());
  CHECK(f.kv.count() == 1);
}

TEST_CASE("a get by key takes the right path for every value size and buffer size") {
  Fixture f;
  std::string big(300, 'x');
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>('a' + i % 26);
  for (const std::size_t length : {std::size_t{0}, std::size_t{1}, std::size_t{63}, std::size_t{64},
                                   std::size_t{65}, std::size_t{300}}) {
    CAPTURE(length);
    const std::string value = big.substr(0, length);
    REQUIRE(f.kv.set("sized", bytes_of(value)) == KvStatus::ok);
    CHECK(get_string(f.kv, "sized") == value);
    // A buffer smaller than the fast path's fixed copy still gets exactly the value, or a refusal.
    std::byte small[16];
    ValueInfo info;
    const KvStatus st = f.kv.get("sized", small, info);
    if (length <= sizeof small) {
      REQUIRE(st == KvStatus::ok);
      CHECK(std::memcmp(small, value.data(), length) == 0);
    } else {
      CHECK(st == KvStatus::value_too_large);
    }
  }
}

TEST_CASE("an array value keeps its element dtype and shape, by key and by handle") {
  Fixture f;
  std::vector<std::uint32_t> counts(1024);
  for (std::uint32_t i = 0; i < counts.size(); ++i) counts[i] = i * 7 + 1;
  const ArrayShape spectrum{Dtype::u32, 1, {1024, 0}};
  CHECK(spectrum.elements() == 1024);
  CHECK(spectrum.bytes() == 4096);
  const auto counts_bytes = std::as_bytes(std::span(counts));
  std::vector<double> grid(6);
  for (std::size_t i = 0; i < grid.size(); ++i) grid[i] = 0.5 * static_cast<double>(i) - 1.0;
  const ArrayShape matrix{Dtype::f64, 2, {2, 3}};
  const auto grid_bytes = std::as_bytes(std::span(grid));

  const auto check_read = [&](std::string_view key, const ArrayShape& shape, std::span<const std::byte> want) {
    std::vector<std::byte> buf(f.kv.value_bytes());
    ValueInfo info;
    REQUIRE(f.kv.get(key, buf, info) == KvStatus::ok);
    CHECK(info.type == ValueType::array);
    CHECK(info.array == shape);
    REQUIRE(info.length == want.size());
    CHECK(std::memcmp(buf.data(), want.data(), want.size()) == 0);
    KeyHandle h;
    REQUIRE(f.kv.resolve(key, h) == KvStatus::ok);
    ValueInfo by_handle;
    REQUIRE(f.kv.get(h, buf, by_handle) == KvStatus::ok);
    CHECK(by_handle.array == shape);
    CHECK(std::memcmp(buf.data(), want.data(), want.size()) == 0);
    ValueView v;
    REQUIRE(f.kv.view(key, v) == KvStatus::ok);
    CHECK(v.info().array == shape);
    CHECK(v.valid());
  };
  SUBCASE("by key") {
    REQUIRE(f.kv.set_array("det0.spectrum", spectrum, counts_bytes) == KvStatus::ok);
    REQUIRE(f.kv.set_array("grid", matrix, grid_bytes) == KvStatus::ok);
    check_read("det0.spectrum", spectrum, counts_bytes);
    check_read("grid", matrix, grid_bytes);
    CHECK(std::string(value_type_name(ValueType::array)) == "array");
  }
  SUBCASE("by handle, over another shape of the same length") {
    KeyHandle h;
    REQUIRE(f.kv.resolve("grid", h, true) == KvStatus::ok);
    REQUIRE(f.kv.set_array(h, matrix, grid_bytes) == KvStatus::ok);
    check_read("grid", matrix, grid_bytes);
    const ArrayShape flat{Dtype::f64, 1, {6, 0}};
    REQUIRE(f.kv.set_array(h, flat, grid_bytes) == KvStatus::ok);  // same bytes, meta unchanged
    check_read("grid", flat, grid_bytes);
    std::vector<std::byte> buf(64);
    ValueInfo info;
    REQUIRE(f.kv.get(h, buf, info) == KvStatus::ok);  // the small-copy fast path hands arrays on
    CHECK(info.array == flat);
  }
}

TEST_CASE("set_array refuses a shape that does not match its bytes, and atomics refuse arrays") {
  Fixture f;
  std::vector<std::uint32_t> four{1, 2, 3, 4};
  const auto data = std::as_bytes(std::span(four));
  CHECK(f.kv.set_array("a", ArrayShape{Dtype::u32, 1, {5, 0}}, data) == KvStatus::type_mismatch);
  CHECK(f.kv.set_array("a", ArrayShape{Dtype::u32, 3, {4, 1}}, data) == KvStatus::type_mismatch);
  CHECK(f.kv.set_array("a", ArrayShape{Dtype::u32, 0, {4, 0}}, data) == KvStatus::type_mismatch);
  CHECK(f.kv.set_array("a", ArrayShape{Dtype::u32, 2, {4, 0}}, data) == KvStatus::type_mismatch);
  CHECK(f.kv.set_array("a", ArrayShape{static_cast<Dtype>(0), 1, {16, 0}}, data) == KvStatus::type_mismatch);
  CHECK(f.kv.set("a", data, ValueType::array) == KvStatus::type_mismatch);  // an array needs its shape
  std::vector<std::byte> big(f.kv.value_bytes() + 8);
  CHECK(f.kv.set_array("a", ArrayShape{Dtype::u8, 1, {static_cast<std::uint32_t>(big.size()), 0}}, big) ==
        KvStatus::value_too_large);
  REQUIRE(f.kv.set_array("a", ArrayShape{Dtype::u32, 2, {2, 2}}, data) == KvStatus::ok);
  std::uint64_t result = 0;
  CHECK(f.kv.atomic("a", AtomicOp::add, 1, result) == KvStatus::type_mismatch);
  CHECK(f.kv.atomic("a", AtomicOp::bit_or, 1, result) == KvStatus::type_mismatch);
  KeyHandle h;
  REQUIRE(f.kv.resolve("a", h) == KvStatus::ok);
  CHECK(f.kv.atomic(h, AtomicOp::add, 1, result) == KvStatus::type_mismatch);
  CHECK(f.kv.set(h, data, ValueType::array) == KvStatus::type_mismatch);
  std::uint64_t bits = 0;
  ValueType type = ValueType::none;
  CHECK(f.kv.get_scalar("a", bits, type) == KvStatus::type_mismatch);
}

TEST_CASE("a plain write after an array clears the shape") {
  Fixture f;
  std::vector<std::uint32_t> four{1, 2, 3, 4};
  const auto data = std::as_bytes(std::span(four));
  const auto slot_of = [&](std::string_view key) -> SlotHeader& {
    KeyHandle h;
    REQUIRE(f.kv.resolve(key, h) == KvStatus::ok);
    return *reinterpret_cast<SlotHeader*>(f.arena.region(Region::slots) + std::uint64_t{h.slot} * f.arena.geometry().slot_stride);
  };
  const auto check_plain = [&](std::string_view key, ValueType type) {
    std::vector<std::byte> buf(f.kv.value_bytes());
    ValueInfo info;
    REQUIRE(f.kv.get(key, buf, info) == KvStatus::ok);
    CHECK(info.type == type);
    CHECK(info.array == ArrayShape{});
    CHECK(slot_of(key).array_shape.load() == 0);
    CHECK(slot_of(key).array_dims.load() == 0);
  };
  REQUIRE(f.kv.set_array("k", ArrayShape{Dtype::u32, 1, {4, 0}}, data) == KvStatus::ok);
  CHECK(slot_of("k").array_shape.load() != 0);
  SUBCASE("text by key (the fast path)") {
    REQUIRE(f.kv.set("k", bytes_of("plain"), ValueType::text) == KvStatus::ok);
    check_plain("k", ValueType::text);
  }
  SUBCASE("bytes by handle (the fast path)") {
    KeyHandle h;
    REQUIRE(f.kv.resolve("k", h) == KvStatus::ok);
    REQUIRE(f.kv.set(h, bytes_of("raw"), ValueType::bytes) == KvStatus::ok);
    check_plain("k", ValueType::bytes);
  }
  SUBCASE("an integer") {
    REQUIRE(f.kv.set_i64("k", -3) == KvStatus::ok);
    check_plain("k", ValueType::i64);
  }
  SUBCASE("delete, then insert again") {
    REQUIRE(f.kv.del("k") == KvStatus::ok);
    REQUIRE(f.kv.set("k", bytes_of("again"), ValueType::text) == KvStatus::ok);
    check_plain("k", ValueType::text);
  }
}

TEST_CASE("keys lists an array key with its shape") {
  Fixture f;
  std::vector<float> six(6, 1.5F);
  REQUIRE(f.kv.set_array("m", ArrayShape{Dtype::f32, 2, {3, 2}}, std::as_bytes(std::span(six))) == KvStatus::ok);
  REQUIRE(f.kv.set_text("t", "x") == KvStatus::ok);
  int seen = 0;
  f.kv.for_each_key([&](std::string_view key, const ValueInfo& info) {
    ++seen;
    if (key == "m") {
      CHECK(info.type == ValueType::array);
      CHECK(info.array == ArrayShape{Dtype::f32, 2, {3, 2}});
    } else {
      CHECK(info.array == ArrayShape{});
    }
  });
  CHECK(seen == 2);
}

}  // TEST_SUITE
