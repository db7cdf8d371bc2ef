// Threads of one process hammering one arena: torn reads, atomic sums, duplicate keys. Built for
// TSan as well (tests/tsan.supp names the only intended races).
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "arena_guard.hpp"
#include "payload.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/slot_copier.hpp"

using namespace weir::core;
using namespace weir::test;

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kRunFor = std::chrono::milliseconds(1500);
constexpr std::uint32_t kSmallValue = 64;
constexpr std::uint32_t kLargeValue = 4096;

struct ReadTally {
  std::atomic<std::uint64_t> good{0};
  std::atomic<std::uint64_t> bad{0};
  std::atomic<std::uint64_t> busy{0};
  std::atomic<std::uint64_t> other{0};
  std::atomic<std::uint64_t> view_retried{0};

  void add(KvStatus st, bool payload_valid) noexcept {  // relaxed: counters read after join
    if (st == KvStatus::ok) {
      (payload_valid ? good : bad).fetch_add(1, std::memory_order_relaxed);
    } else if (st == KvStatus::busy) {
      busy.fetch_add(1, std::memory_order_relaxed);
    } else {
      other.fetch_add(1, std::memory_order_relaxed);
    }
  }
};

// Array versions: every element holds the version v, and v picks the shape (64 elements, so the
// length never changes and only the shape words tell the versions apart); every 7th version is
// plain bytes of the same length, whose shape must read as none.
constexpr std::uint32_t kArrayElements = 64;
ArrayShape shape_for(std::uint32_t v) noexcept {
  constexpr std::uint32_t kRows[] = {0, 2, 4, 8, 16, 32};
  const std::uint32_t rows = kRows[v % std::size(kRows)];
  if (rows == 0) return ArrayShape{Dtype::u32, 1, {kArrayElements, 0}};
  return ArrayShape{Dtype::u32, 2, {rows, kArrayElements / rows}};
}
bool plain_version(std::uint32_t v) noexcept { return v % 7 == 0; }

// Whether what a reader got is one whole version: equal elements, and the shape (or none) of it.
bool array_version_ok(ValueType type, const ArrayShape& shape, const std::byte* data, std::uint32_t length) {
  if (length != kArrayElements * sizeof(std::uint32_t)) return false;
  std::uint32_t first = 0;
  std::memcpy(&first, data, sizeof(first));
  for (std::uint32_t i = 1; i < kArrayElements; ++i) {
    std::uint32_t e = 0;
    std::memcpy(&e, data + i * sizeof(e), sizeof(e));
    if (e != first) return false;
  }
  if (plain_version(first)) return type == ValueType::bytes && shape == ArrayShape{};
  return type == ValueType::array && shape == shape_for(first);
}

}  // namespace

TEST_SUITE("stress.kv_store") {

TEST_CASE("concurrent readers never see an array's shape from one version with bytes from another" *
          doctest::timeout(60)) {
  ArenaGuard guard(unique_name("arrays"));
  ArenaOptions options;
  options.slot_count = 64;
  options.value_bytes = 1024;
  auto arena = Arena::create(guard.where(), options);
  REQUIRE(arena);
  KvStore kv(*arena);
  const std::string key = "spectrum";
  {
    std::vector<std::uint32_t> v(kArrayElements, 1);
    REQUIRE(kv.set_array(key, shape_for(1), std::as_bytes(std::span(v))) == KvStatus::ok);
  }
  KeyHandle handle;
  REQUIRE(kv.resolve(key, handle) == KvStatus::ok);
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> writes{0}, write_other{0};
  ReadTally by_key, by_handle, in_place, copied;
  std::vector<std::thread> threads;
  for (std::uint32_t w = 0; w < 2; ++w) {
    threads.emplace_back([&, w] {
      KvStore mine(*arena);
      std::vector<std::uint32_t> v(kArrayElements);
      for (std::uint32_t n = (w + 1) << 28; !stop.load(std::memory_order_relaxed); ++n) {
        std::fill(v.begin(), v.end(), n);
        const auto bytes = std::as_bytes(std::span(v));
        KvStatus st;
        if (plain_version(n)) {  // the fast paths, which must clear the shape
          st = w == 0 ? mine.set(key, bytes) : mine.set(handle, bytes);
        } else {
          st = w == 0 ? mine.set_array(key, shape_for(n), bytes) : mine.set_array(handle, shape_for(n), bytes);
        }
        // relaxed: read after join
        (st == KvStatus::ok || st == KvStatus::busy ? writes : write_other).fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  threads.emplace_back([&] {
    KvStore mine(*arena);
    std::vector<std::byte> out(1024);
    while (!stop.load(std::memory_order_relaxed)) {
      ValueInfo info;
      KvStatus st = mine.get(key, out, info);
      by_key.add(st, array_version_ok(info.type, info.array, out.data(), info.length));
      st = mine.get(handle, out, info);
      by_handle.add(st, array_version_ok(info.type, info.array, out.data(), info.length));
    }
  });
  threads.emplace_back([&] {
    KvStore mine(*arena);
    while (!stop.load(std::memory_order_relaxed)) {
      ValueView view;
      const KvStatus st = mine.view(key, view);
      const bool ok = st == KvStatus::ok &&
                      array_version_ok(view.info().type, view.info().array, view.data(), view.size());
      if (st == KvStatus::ok && !view.valid()) {
        in_place.view_retried.fetch_add(1, std::memory_order_relaxed);  // overwritten meanwhile: void
      } else {
        in_place.add(st, ok);
      }
    }
  });
  threads.emplace_back([&] {
    const SlotCopier copier(*arena);
    SlotCopy c;
    while (!stop.load(std::memory_order_relaxed)) {
      const SlotStatus st = copier.copy(handle.slot, c);
      if (st == SlotStatus::ok) {
        copied.add(KvStatus::ok, array_version_ok(c.record.type, c.record.array, c.value.data(),
                                                  static_cast<std::uint32_t>(c.value.size())));
      } else {
        copied.add(st == SlotStatus::busy ? KvStatus::busy : KvStatus::torn, false);
      }
    }
  });
  std::this_thread::sleep_for(kRunFor);
  stop.store(true, std::memory_order_relaxed);
  for (auto& t : threads) t.join();

  MESSAGE("writes " << writes.load());
  const std::pair<std::string, ReadTally*> tallies[] = {
      {"by key", &by_key}, {"by handle", &by_handle}, {"in place", &in_place}, {"slot copier", &copied}};
  for (const auto& [name, t] : tallies) {
    CAPTURE(name);
    MESSAGE(name << ": " << t->good.load() << " good, " << t->bad.load() << " bad, " << t->busy.load() << " busy");
    CHECK(t->bad.load() == 0);   // safety
    CHECK(t->good.load() > 0);   // progress
    CHECK(t->other.load() == 0);
  }
  CHECK(writes.load() > 0);
  CHECK(write_other.load() == 0);
}


TEST_CASE("concurrent readers never see a torn snapshot, by key, by handle or in place" * doctest::timeout(60)) {
  ArenaGuard guard(unique_name("torn"));
  ArenaOptions options;
  options.slot_count = 64;
  options.value_bytes = kLargeValue;
  auto arena = Arena::create(guard.where(), options);
  REQUIRE(arena);
  KvStore kv(*arena);
  const std::string keys[] = {"small", "large"};
  const std::uint32_t sizes[] = {kSmallValue, kLargeValue};
  KeyHandle handles[2];
  for (std::size_t k = 0; k < 2; ++k) {
    std::vector<std::byte> v(sizes[k]);
    fill_payload(v, 0);
    REQUIRE(kv.set_wait(keys[k], v) == KvStatus::ok);
    REQUIRE(kv.resolve(keys[k], handles[k]) == KvStatus::ok);
  }

  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> writes{0}, write_busy{0}, write_other{0};
  ReadTally by_key, by_handle, in_place;
  std::vector<std::thread> threads;
  for (std::uint64_t w = 0; w < 2; ++w) {
    threads.emplace_back([&, w] {
      KvStore mine(*arena);
      std::vector<std::byte> v(kLargeValue);
      for (std::uint64_t n = (w + 1) << 40; !stop.load(std::memory_order_relaxed); ++n) {
        for (std::size_t k = 0; k < 2; ++k) {
          const std::span<std::byte> value(v.data(), sizes[k]);
          fill_payload(value, n);
          // Writer 0 goes by key, writer 1 by handle.
          const KvStatus st = w == 0 ? mine.set(keys[k], value) : mine.set(handles[k], value);
          auto& counter = st == KvStatus::ok ? writes : st == KvStatus::busy ? write_busy : write_other;
          counter.fetch_add(1, std::memory_order_relaxed);  // relaxed: read after join
        }
      }
    });
  }
  threads.emplace_back([&] {
    KvStore mine(*arena);
    std::vector<std::byte> out(kLargeValue);
    while (!stop.load(std::memory_order_relaxed))
      for (std::size_t k = 0; k < 2; ++k) {
        ValueInfo info;
        const KvStatus st = mine.get(keys[k], out, info);
        by_key.add(st, info.length == sizes[k] && payload_ok({out.data(), info.length}));
      }
  });
  threads.emplace_back([&] {
    KvStore mine(*arena);
    std::vector<std::byte> out(kLargeValue);
    while (!stop.load(std::memory_order_relaxed))
      for (std::size_t k = 0; k < 2; ++k) {
        ValueInfo info;
        const KvStatus st = mine.get(handles[k], out, info);
        by_handle.add(st, info.length == sizes[k] && payload_ok({out.data(), info.length}));
      }
  });
  threads.emplace_back([&] {
    KvStore mine(*arena);
    while (!stop.load(std::memory_order_relaxed))
      for (std::size_t k = 0; k < 2; ++k) {
        ValueView view;
        const KvStatus st = k == 0 ? mine.view(keys[k], view) : mine.view(handles[k], view);
        const bool ok_in_place =
            st == KvStatus::ok && view.size() == sizes[k] && payload_ok({view.data(), view.size()});
        if (st == KvStatus::ok && !view.valid()) {
          in_place.view_retried.fetch_add(1, std::memory_order_relaxed);  // overwritten meanwhile: void
        } else {
          in_place.add(st, ok_in_place);
        }
      }
  });
  std::this_thread::sleep_for(kRunFor);
  stop.store(true, std::memory_order_relaxed);
  for (auto& t : threads) t.join();

  MESSAGE("writes " << writes.load() << ", busy " << write_busy.load());
  const std::pair<std::string, ReadTally*> tallies[] = {{"by key", &by_key}, {"by handle", &by_handle},
                                                        {"in place", &in_place}};
  for (const auto& [name, t] : tallies) {
    CAPTURE(name);
    MESSAGE(name << ": " << t->good.load() << " good, " << t->bad.load() << " bad, " << t->busy.load()
                 << " busy, " << t->view_retried.load() << " views invalidated");
    CHECK(t->bad.load() == 0);   // safety
    CHECK(t->good.load() > 0);   // progress
    CHECK(t->other.load() == 0);
  }
  CHECK(writes.load() > 0);
  CHECK(write_other.load() == 0);
}

TEST_CASE("concurrent atomic adds sum exactly, from the racing insert on, while another key is rewritten" * doctest::timeout(60)) {
  ArenaGuard guard(unique_name("atomic"));
  ArenaOptions options;
  options.slot_count = 256;
  options.value_bytes = kSmallValue;
  auto arena = Arena::create(guard.where(), options);
  REQUIRE(arena);
  constexpr int kAdders = 4;
  constexpr int kCounters = 50;               // each a fresh key: all adders race to insert it
  constexpr std::uint64_t kPerThread = 2000;  // adds per adder per counter
  const auto counter_of = [](int i) { return "counter." + std::to_string(i); };
  const auto deadline = Clock::now() + std::chrono::seconds(20);

  std::atomic<bool> stop{false};
  std::atomic<int> current{0};
  std::atomic<std::uint64_t> adds_busy{0}, adds_failed{0}, sets{0}, backwards{0}, scalar_reads{0};
  std::barrier round_start(kAdders, [&]() noexcept { current.fetch_add(1, std::memory_order_relaxed); });
  std::vector<std::thread> adders;
  for (int t = 0; t < kAdders; ++t) {
    adders.emplace_back([&] {
      KvStore mine(*arena);
      for (int c = 0; c < kCounters; ++c) {
        round_start.arrive_and_wait();
        const std::string key = counter_of(c);
        for (std::uint64_t i = 0; i < kPerThread && Clock::now() < deadline;) {
          std::uint64_t result = 0;
          const KvStatus st = mine.atomic(key, AtomicOp::add, 1, result);
          if (st == KvStatus::ok) {
            ++i;
          } else if (st == KvStatus::busy) {
            adds_busy.fetch_add(1, std::memory_order_relaxed);  // relaxed: read after join
          } else {
            adds_failed.fetch_add(1, std::memory_order_relaxed);
            ++i;
          }
        }
      }
    });
  }
  std::thread setter([&] {
    KvStore mine(*arena);
    std::vector<std::byte> v(kSmallValue);
    for (std::uint64_t n = 0; !stop.load(std::memory_order_relaxed); ++n) {
      fill_payload(v, n);
      if (mine.set("neighbour", v) == KvStatus::ok) sets.fetch_add(1, std::memory_order_relaxed);
    }
  });
  std::thread watcher([&] {  // the counter being added to only ever grows
    KvStore mine(*arena);
    int watching = -1;
    std::uint64_t last = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      const int c = current.load(std::memory_order_relaxed) - 1;
      if (c < 0) continue;
      if (c != watching) {
        watching = c;
        last = 0;
      }
      std::uint64_t bits = 0;
      ValueType type = ValueType::none;
      if (mine.get_scalar(counter_of(c), bits, type) == KvStatus::ok) {
        scalar_reads.fetch_add(1, std::memory_order_relaxed);
        if (bits < last) backwards.fetch_add(1, std::memory_order_relaxed);
        last = bits;
      }
    }
  });
  for (auto& t : adders) t.join();
  stop.store(true, std::memory_order_relaxed);
  setter.join();
  watcher.join();

  KvStore kv(*arena);
  MESSAGE("busy " << adds_busy.load() << ", neighbour writes " << sets.load() << ", watcher reads "
                  << scalar_reads.load());
  CHECK(adds_failed.load() == 0);
  CHECK(backwards.load() == 0);
  CHECK(scalar_reads.load() > 0);
  CHECK(sets.load() > 0);
  for (int c = 0; c < kCounters; ++c) {
    CAPTURE(c);
    std::uint64_t total = 0;
    ValueType type = ValueType::none;
    REQUIRE(kv.get_scalar(counter_of(c), total, type) == KvStatus::ok);
    CHECK(type == ValueType::i64);
    CHECK(total == kAdders * kPerThread);
  }
  ValueInfo info;
  std::vector<std::byte> out(kSmallValue);
  REQUIRE(kv.get("neighbour", out, info) == KvStatus::ok);
  CHECK(payload_ok(out));
  std::map<std::string, int> seen;
  kv.for_each_key([&](std::string_view k, const ValueInfo&) { ++seen[std::string(k)]; });
  CHECK(seen.size() == static_cast<std::size_t>(kCounters) + 1);
  for (const auto& [k, n] : seen) CHECK_MESSAGE(n == 1, k << " appears " << n << " times");
}

TEST_CASE("concurrent inserts and deletes of overlapping keys never produce duplicates" * doctest::timeout(60)) {
  ArenaGuard guard(unique_name("dup"));
  ArenaOptions options;
  options.slot_count = 64;  // keys probe through each other's slots
  options.value_bytes = kSmallValue;
  auto arena = Arena::create(guard.where(), options);
  REQUIRE(arena);
  constexpr int kThreads = 4;
  constexpr int kKeys = 16;
  const auto key_of = [](int i) { return "dup." + std::to_string(i); };

  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> ok{0}, refused{0}, failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      KvStore mine(*arena);
      std::mt19937_64 rng(static_cast<std::uint64_t>(t) * 7919U + 1U);
      std::vector<std::byte> v(kSmallValue);
      for (std::uint64_t n = 0; !stop.load(std::memory_order_relaxed); ++n) {
        const auto key = key_of(static_cast<int>(rng() % kKeys));
        fill_payload(v, n);
        KvStatus st = KvStatus::ok;
        switch (rng() % 4) {
          case 0: st = mine.set(key, v); break;
          case 1: st = mine.set_wait(key, v); break;
          case 2: {
            KeyHandle h;
            st = mine.resolve(key, h, true);
            break;
          }
          default: st = mine.del(key); break;
        }
        auto& counter = st == KvStatus::ok ? ok : st == KvStatus::busy || st == KvStatus::not_found ? refused : failed;
        counter.fetch_add(1, std::memory_order_relaxed);  // relaxed: read after join
      }
    });
  }
  std::this_thread::sleep_for(kRunFor);
  stop.store(true, std::memory_order_relaxed);
  for (auto& t : threads) t.join();
  MESSAGE(ok.load() << " ok, " << refused.load() << " busy or absent, " << failed.load() << " failed");
  CHECK(ok.load() > 0);
  CHECK(failed.load() == 0);

  KvStore kv(*arena);
  std::map<std::string, int> seen;
  kv.for_each_key([&](std::string_view k, const ValueInfo&) { ++seen[std::string(k)]; });
  for (const auto& [k, n] : seen) CHECK_MESSAGE(n == 1, k << " appears " << n << " times");
  CHECK(kv.count() == seen.size());

  std::vector<std::byte> v(kSmallValue);
  for (int i = 0; i < kKeys; ++i) {
    fill_payload(v, static_cast<std::uint64_t>(i));
    CHECK(kv.set_wait(key_of(i), v) == KvStatus::ok);
  }
  seen.clear();
  kv.for_each_key([&](std::string_view k, const ValueInfo&) { ++seen[std::string(k)]; });
  CHECK(seen.size() == static_cast<std::size_t>(kKeys));
  for (const auto& [k, n] : seen) CHECK_MESSAGE(n == 1, k << " appears " << n << " times");
}

}  // TEST_SUITE
