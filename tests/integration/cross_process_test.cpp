// Several processes on one arena: concurrent writers and readers, concurrent inserts and deletes,
// values crossing fork and exec, and a memfd arena inherited as fd:N.
#include <doctest/doctest.h>
#include <fcntl.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "payload.hpp"
#include "proc_util.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/kv_store.hpp"

using namespace weir::core;
using namespace weir::test;

namespace {

constexpr std::uint32_t kSmallValue = 64;
constexpr std::uint32_t kLargeValue = 4096;
constexpr auto kRunFor = std::chrono::milliseconds(2000);
constexpr auto kReportTimeout = kRunFor + milliseconds(10'000);

// Report slots of a writer child.
enum WriterReport : std::size_t { kWrites = 0, kWriterBusy, kWriterOther };
// Report slots of a reader child.
enum ReaderReport : std::size_t { kGood = 0, kBad, kReaderBusy, kTorn, kReaderOther, kViewRetried };

std::string get_text(const KvStore& kv, std::string_view key, KvStatus& status) {
  std::string out(kv.value_bytes(), '\0');
  ValueInfo info;
  status = kv.get(key, {reinterpret_cast<std::byte*>(out.data()), out.size()}, info);
  out.resize(status == KvStatus::ok ? info.length : 0);
  return out;
}

void tally_read(KvStatus st, bool payload_valid, Report& r) {
  if (st == KvStatus::ok) {
    ++r[payload_valid ? kGood : kBad];
  } else if (st == KvStatus::busy) {
    ++r[kReaderBusy];
  } else if (st == KvStatus::torn) {
    ++r[kTorn];
  } else {
    ++r[kReaderOther];
  }
}

}  // namespace

TEST_SUITE("integration.cross_process") {

TEST_CASE("readers in other processes never see a torn value while writer processes rewrite it" *
          doctest::timeout(60)) {
  ArenaGuard guard(unique_name("rw"));
  ArenaOptions options;
  options.slot_count = 64;
  options.value_bytes = kLargeValue;
  auto arena = Arena::create(guard.where(), options);
  REQUIRE(arena);
  KvStore kv(*arena);
  const std::string keys[] = {"small", "large"};
  const std::uint32_t sizes[] = {kSmallValue, kLargeValue};
  for (std::size_t k = 0; k < 2; ++k) {
    std::vector<std::byte> v(sizes[k]);
    fill_payload(v, 0);
    REQUIRE(kv.set_wait(keys[k], v) == KvStatus::ok);
  }

  StartGate gate;
  REQUIRE(gate.valid());
  std::vector<Child> writers, readers;
  for (std::uint64_t w = 0; w < 2; ++w) {
    writers.push_back(Child::spawn([&](ChildLink& link) {
      const std::string where = guard.where();
      auto mine = Arena::open(where);  // a mapping of its own, at its own address
      if (!mine) return 1;
      KvStore store(*mine);
      std::vector<std::byte> v(kLargeValue);
      if (!gate.pass()) return 2;
      const auto end = Clock::now() + kRunFor;
      for (std::uint64_t n = (w + 1) << 40; Clock::now() < end; ++n) {
        for (std::size_t k = 0; k < 2; ++k) {
          const std::span<std::byte> value(v.data(), sizes[k]);
          fill_payload(value, n);
          const KvStatus st = store.set(keys[k], value);
          ++link.report[st == KvStatus::ok ? kWrites : st == KvStatus::busy ? kWriterBusy : kWriterOther];
        }
      }
      return 0;
    }));
    REQUIRE(writers.back().valid());
  }
  for (int r = 0; r < 2; ++r) {
    readers.push_back(Child::spawn([&](ChildLink& link) {
      auto mine = Arena::open(guard.where());
      if (!mine) return 1;
      KvStore store(*mine);
      KeyHandle handles[2];
      for (std::size_t k = 0; k < 2; ++k)
        if (store.resolve(keys[k], handles[k]) != KvStatus::ok) return 3;
      std::vector<std::byte> out(kLargeValue);
      if (!gate.pass()) return 2;
      const auto end = Clock::now() + kRunFor;
      while (Clock::now() < end) {
        for (std::size_t k = 0; k < 2; ++k) {
          ValueInfo info;
          if (r == 0) {  // by key, copying out
            const KvStatus st = store.get(keys[k], out, info);
            tally_read(st, info.length == sizes[k] && payload_ok({out.data(), info.length}), link.report);
          } else {  // by handle: a copy, then a zero-copy view checked in place
            const KvStatus st = store.get(handles[k], out, info);
            tally_read(st, info.length == sizes[k] && payload_ok({out.data(), info.length}), link.report);
            ValueView view;
            const KvStatus vst = store.view(handles[k], view);
            const bool in_place_ok = vst == KvStatus::ok && view.size() == sizes[k] &&
                                     payload_ok({view.data(), view.size()});
            if (vst == KvStatus::ok && !view.valid()) {
              ++link.report[kViewRetried];  // a writer moved on meanwhile: what we read is void
            } else {
              tally_read(vst, in_place_ok, link.report);
            }
          }
        }
      }
      return 0;
    }));
    REQUIRE(readers.back().valid());
  }
  gate.open(writers.size() + readers.size());

  for (std::size_t i = 0; i < writers.size(); ++i) {
    Report r{};
    REQUIRE(writers[i].read_report(r, kReportTimeout));
    const ExitStatus e = writers[i].wait();
    CHECK(e.exited);
    CHECK(e.code == 0);
    MESSAGE("writer " << i << ": " << r[kWrites] << " writes, " << r[kWriterBusy] << " busy");
    CHECK(r[kWrites] > 0);
    CHECK(r[kWriterOther] == 0);
  }
  for (std::size_t i = 0; i < readers.size(); ++i) {
    Report r{};
    REQUIRE(readers[i].read_report(r, kReportTimeout));
    const ExitStatus e = readers[i].wait();
    CHECK(e.exited);
    CHECK(e.code == 0);
    MESSAGE("reader " << i << ": " << r[kGood] << " good, " << r[kBad] << " bad, " << r[kReaderBusy] << " busy, "
                      << r[kViewRetried] << " views invalidated");
    CHECK(r[kBad] == 0);  // safety
    CHECK(r[kGood] > 0);  // progress
    CHECK(r[kTorn] == 0);
    CHECK(r[kReaderOther] == 0);
  }
}

TEST_CASE("concurrent inserts and deletes from several processes never duplicate a key" * doctest::timeout(60)) {
  ArenaGuard guard(unique_name("dup"));
  ArenaOptions options;
  options.slot_count = 64;  // every key probes through its neighbours' slots
  options.value_bytes = kSmallValue;
  auto arena = Arena::create(guard.where(), options);
  REQUIRE(arena);
  KvStore kv(*arena);
  constexpr int kKeys = 16;
  constexpr int kProcesses = 4;
  const auto key_of = [](int i) { return "dup." + std::to_string(i); };

  StartGate gate;
  REQUIRE(gate.valid());
  std::vector<Child> churners;
  for (int p = 0; p < kProcesses; ++p) {
    churners.push_back(Child::spawn([&](ChildLink& link) {
      auto mine = Arena::open(guard.where());
      if (!mine) return 1;
      KvStore store(*mine);
      std::mt19937_64 rng(static_cast<std::uint64_t>(getpid()));
      std::vector<std::byte> v(kSmallValue);
      if (!gate.pass()) return 2;
      const auto end = Clock::now() + kRunFor;
      for (std::uint64_t n = 0; Clock::now() < end; ++n) {
        const auto key = key_of(static_cast<int>(rng() % kKeys));
        fill_payload(v, n);
        KvStatus st = KvStatus::ok;
        switch (rng() % 3) {
          case 0: st = store.set(key, v); break;
          case 1: st = store.set_wait(key, v); break;
          default: st = store.del(key); break;
        }
        ++link.report[st == KvStatus::ok ? 0 : st == KvStatus::busy || st == KvStatus::not_found ? 1 : 2];
      }
      return 0;
    }));
    REQUIRE(churners.back().valid());
  }
  gate.open(churners.size());
  for (auto& c : churners) {
    Report r{};
    REQUIRE(c.read_report(r, kReportTimeout));
    const ExitStatus e = c.wait();
    CHECK(e.exited);
    CHECK(e.code == 0);
    MESSAGE("churner: " << r[0] << " ok, " << r[1] << " busy or absent, " << r[2] << " other");
    CHECK(r[0] > 0);
    CHECK(r[2] == 0);  // never full: 16 keys in 64 slots
  }

  std::map<std::string, int> seen;
  kv.for_each_key([&](std::string_view k, const ValueInfo&) { ++seen[std::string(k)]; });
  for (const auto& [k, n] : seen) CHECK_MESSAGE(n == 1, k << " appears " << n << " times");

  std::vector<std::byte> v(kSmallValue);
  for (int i = 0; i < kKeys; ++i) {
    fill_payload(v, static_cast<std::uint64_t>(i));
    CHECK(kv.set_wait(key_of(i), v) == KvStatus::ok);
  }
  std::vector<std::byte> out(kSmallValue);
  for (int i = 0; i < kKeys; ++i) {
    ValueInfo info;
    REQUIRE(kv.get(key_of(i), out, info) == KvStatus::ok);
    CHECK(payload_ok(out));
    CHECK(payload_counter(out) == static_cast<std::uint64_t>(i));
  }
  seen.clear();
  kv.for_each_key([&](std::string_view k, const ValueInfo&) { ++seen[std::string(k)]; });
  CHECK(seen.size() == static_cast<std::size_t>(kKeys));
  for (const auto& [k, n] : seen) CHECK_MESSAGE(n == 1, k << " appears " << n << " times");
  CHECK(kv.count() == static_cast<std::uint64_t>(kKeys));
}

TEST_CASE("a process that opens the arena by name reads what the parent wrote after it attached") {
  ArenaGuard guard(unique_name("seen"));
  auto arena = Arena::create(guard.where());
  REQUIRE(arena);
  KvStore kv(*arena);
  StartGate gate;
  REQUIRE(gate.valid());

  Child reader = Child::spawn([&](ChildLink& link) {
    auto mine = Arena::open(guard.where());
    if (!mine) return 1;
    KvStore store(*mine);
    link.ready();
    if (!gate.pass()) return 2;
    KvStatus st = KvStatus::ok;
    link.report[0] = get_text(store, "greeting", st) == "hello" ? 1 : 0;
    std::uint64_t bits = 0;
    ValueType type = ValueType::none;
    link.report[1] = store.get_scalar("answer", bits, type) == KvStatus::ok && type == ValueType::i64 ? bits : 0;
    return 0;
  });
  REQUIRE(reader.valid());
  REQUIRE(reader.wait_ready(milliseconds(5000)));
  REQUIRE(kv.set_text("greeting", "hello") == KvStatus::ok);
  REQUIRE(kv.set_i64("answer", 42) == KvStatus::ok);
  gate.open(1);
  Report r{};
  REQUIRE(reader.read_report(r, milliseconds(10'000)));
  const ExitStatus e = reader.wait();
  CHECK(e.code == 0);
  CHECK(r[0] == 1);
  CHECK(r[1] == 42);

  SUBCASE("and so does a freshly exec'd program") {
    Child fresh = Child::exec(WEIR_TEST_CHILD, {"weir_test_child", "get", guard.where(), "greeting", "hello"});
    REQUIRE(fresh.valid());
    const ExitStatus fe = fresh.wait();
    CHECK(fe.exited);
    CHECK(fe.code == 0);
  }
}

TEST_CASE("a memfd arena is inherited across exec and opened as fd:N") {
  auto arena = Arena::create("memfd:" + unique_name("memfd"));
  REQUIRE(arena);
  const int fd = arena->fd();
  REQUIRE(fd >= 0);
  const int fd_flags = fcntl(fd, F_GETFD);
  REQUIRE(fd_flags >= 0);
  CHECK((fd_flags & FD_CLOEXEC) == 0);  // core creates it inheritable on purpose
  KvStore kv(*arena);
  REQUIRE(kv.set_text("from.parent", "over exec") == KvStatus::ok);
  const std::string where = "fd:" + std::to_string(fd);

  Child reader = Child::exec(WEIR_TEST_CHILD, {"weir_test_child", "get", where, "from.parent", "over exec"});
  REQUIRE(reader.valid());
  ExitStatus e = reader.wait();
  CHECK(e.exited);
  CHECK(e.code == 0);

  Child writer = Child::exec(WEIR_TEST_CHILD, {"weir_test_child", "set", where, "from.child", "back again"});
  REQUIRE(writer.valid());
  e = writer.wait();
  CHECK(e.exited);
  CHECK(e.code == 0);
  KvStatus st = KvStatus::ok;
  CHECK(get_text(kv, "from.child", st) == "back again");
  CHECK(st == KvStatus::ok);

  SUBCASE("a wrong value is told apart from a match") {
    Child wrong = Child::exec(WEIR_TEST_CHILD, {"weir_test_child", "get", where, "from.parent", "something else"});
    REQUIRE(wrong.valid());
    const ExitStatus we = wrong.wait();
    CHECK(we.exited);
    CHECK(we.code == 12);  // kMismatch in test_child.cpp
  }
}

}  // TEST_SUITE
