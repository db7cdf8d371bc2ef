// Every query slot of the real `weir scpi` is accounted for, in the keys and in its channel: the fake
// instrument (fake_scpi.py, another process) numbers its measurement queries and answers each with
// its number, and fails chosen ones (a garbled line, silence, a reply that never ends, a dropped
// connection); a Lua parser errors on one. Read back with a ChannelReader, each missed sample is a
// gap block of its reason exactly where the sample would be, and the accounting keys balance.
#include <doctest/doctest.h>

#include <signal.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "background_weir.hpp"
#include "channel_events.hpp"
#include "fake_instrument.hpp"
#include "live_arena.hpp"
#include "scratch_dir.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/kv_store.hpp"

using weir::core::GapReason;
using weir::test::BackgroundWeir;
using weir::test::ChannelEvent;
using weir::test::eventually;
using weir::test::FakeInstrument;

namespace {

constexpr std::chrono::seconds kPatience{30};  // bound on waiting for the driver to get somewhere

std::string pipeline(const weir::test::ScratchDir& dir, const std::string& arena, const std::string& body) {
  const std::string path = dir.file("instrument.lua");
  std::ofstream(path) << "arena { name = \"" << arena << "\", slots = 256, channels = 4, channel_mb = 4 }\n"
                      << "driver \"scpi\" { " << body << " }\n";
  return path;
}

std::uint64_t u64(const weir::core::Arena& arena, const std::string& key) {
  std::uint64_t bits = 0;
  weir::core::ValueType type = weir::core::ValueType::none;
  if (weir::core::KvStore(arena).get_scalar(key, bits, type) != weir::core::KvStatus::ok) return ~0ULL;
  return type == weir::core::ValueType::u64 ? bits : ~0ULL;
}

// The keys of the accounting of part P, read after the driver stopped.
struct Accounting {
  std::uint64_t queries, late_slots, unsent, recorded, timeout, malformed, driver_error, source_loss, late;
  Accounting(const weir::core::Arena& a, const std::string& p)
      : queries(u64(a, p + ".queries")), late_slots(u64(a, p + ".late")), unsent(u64(a, p + ".unsent")),
        recorded(u64(a, p + ".accounting.recorded")), timeout(u64(a, p + ".accounting.timeout")),
        malformed(u64(a, p + ".accounting.malformed")), driver_error(u64(a, p + ".accounting.driver_error")),
        source_loss(u64(a, p + ".accounting.source_loss")), late(u64(a, p + ".accounting.late")) {}
  [[nodiscard]] std::uint64_t slots() const { return queries + late_slots + unsent; }
  [[nodiscard]] std::uint64_t terms() const { return recorded + timeout + malformed + driver_error + source_loss + late; }
};

// Walks a channel the fake fed with numbered readings: a sample must be the next query's number, a
// gap of a planned query's reason stands for that query; late gaps, and source_loss gaps the plan
// does not explain (slots passed while disconnected), stand for slots no query was sent in.
struct Walk {
  std::uint64_t next = 1;  // the fake's next query number
  std::uint64_t samples = 0;
  std::map<GapReason, std::uint64_t> gaps;  // for queries sent
  std::uint64_t late = 0, unsent = 0;       // for slots without a query
  std::string problem;
  [[nodiscard]] std::uint64_t of(GapReason reason) const {
    const auto at = gaps.find(reason);
    return at == gaps.end() ? 0 : at->second;
  }
};

Walk walk(const std::vector<ChannelEvent>& events, const std::map<std::uint64_t, GapReason>& plan, std::uint32_t block) {
  Walk w;
  for (std::size_t i = 0; i < events.size() && w.problem.empty(); ++i) {
    const ChannelEvent& e = events[i];
    if (!e.gap) {
      // A block is full unless a gap closed it, or the driver stopped.
      if (e.samples.size() != block && i + 1 < events.size() && !events[i + 1].gap)
        w.problem = "block " + std::to_string(i) + " is short but no gap follows it";
      for (const double v : e.samples) {
        if (plan.count(w.next) != 0) w.problem = "query " + std::to_string(w.next) + " should be a gap, not a sample";
        if (v != static_cast<double>(w.next)) w.problem = "sample " + std::to_string(v) + " where query " + std::to_string(w.next) + " was due";
        ++w.next;
        ++w.samples;
      }
      continue;
    }
    const auto planned = plan.find(w.next);
    if (e.reason == GapReason::late) {
      ++w.late;
    } else if (planned != plan.end() && planned->second == e.reason) {
      ++w.gaps[e.reason];
      ++w.next;
    } else if (e.reason == GapReason::source_loss) {
      ++w.unsent;
    } else {
      w.problem = std::string("a gap for ") + std::string(weir::core::gap_reason_name(e.reason)) + " where query " +
                  std::to_string(w.next) + " was due";
    }
  }
  return w;
}

}  // namespace

TEST_SUITE("acquisition.instrument.gaps") {

TEST_CASE("a garbled, silent, endless or unparsable reply and a dropped connection are gap blocks of their reason, in place") {
  weir::test::ScratchDir dir("scpigaps");
  weir::test::ScratchArena arena("scpigaps");
  const auto& a = arena.arena();
  // Query 3 garbled (the parser finds no VOLT: a mismatch), 5 silent, 7 endless, 9 refused by the
  // parser with an error, 12 answered by closing the connection.
  const std::map<std::uint64_t, GapReason> plan{{3, GapReason::malformed},  {5, GapReason::timeout},
                                                {7, GapReason::malformed},  {9, GapReason::driver_error},
                                                {12, GapReason::source_loss}};
  FakeInstrument dmm(dir, "dmm", {"--count", "--plan", "3:garbage,5:stall,7:noterm,12:drop"});
  std::ofstream(dir.file("status.lua")) << R"lua(
function volts(reply)
  local v = reply:match("VOLT:(%S+);")
  if v == nil then return nil end
  if tonumber(v) == 9 then error("no sense in reading 9") end
  return tonumber(v)
end
)lua";
  // The endless reply (64 KiB) is dropped at once through buffers of max_reply (64 of them at most).
  // A declared channel of 3 samples a block: a missed sample closes the block being filled.
  weir::core::ChannelSpec spec;
  spec.name = "dmm.v";
  spec.dtype = weir::core::Dtype::f64;
  spec.rate_hz = 4;
  spec.samples_per_block = 3;
  spec.ring_blocks = 256;
  REQUIRE(weir::core::create_channel(a, spec));
  const std::string file = pipeline(
      dir, arena.name(),
      "name = \"dmm\", host = \"127.0.0.1\", port = " + std::to_string(dmm.port()) +
          ", timeout_ms = 100, max_reply = 4000, reconnect_min_ms = 600, reconnect_max_ms = 600, script = \"status.lua\","
          " channels = {\"dmm.v\"}, queries = { {send = \"MEAS:STAT?\", every = 0.25, key = \"dmm.v\","
          " reply = \"lua:volts\", channel = \"dmm.v\"} }");
  BackgroundWeir driver({"scpi", arena.name(), "--pipeline", file, "--part", "dmm"});
  REQUIRE_MESSAGE(eventually([&] { const auto r = u64(a, "dmm.accounting.recorded"); return r != ~0ULL && r >= 12; },
                             kPatience),
                  driver.output());
  REQUIRE(driver.signal(SIGINT));
  REQUIRE(driver.wait_exit(std::chrono::seconds(30)) == 0);

  const auto events = weir::test::read_events(a, "dmm.v");
  const std::string seen = weir::test::describe(events);
  const Walk w = walk(events, plan, 3);
  CHECK_MESSAGE(w.problem.empty(), w.problem << "\n" << seen);
  CHECK_MESSAGE(w.next > 12, seen);  // every planned fault was met
  CHECK(w.of(GapReason::malformed) == 2);
  CHECK(w.of(GapReason::timeout) == 1);
  CHECK(w.of(GapReason::driver_error) == 1);
  CHECK(w.of(GapReason::source_loss) == 1);
  CHECK_MESSAGE(w.unsent >= 1, seen);  // reconnecting took 600 ms: two 250 ms slots passed unsent

  const Accounting k(a, "dmm");
  CHECK(k.recorded == w.samples);
  CHECK(k.malformed == 2);
  CHECK(k.timeout == 1);
  CHECK(k.driver_error == 1);
  CHECK(k.source_loss == 1 + w.unsent);
  CHECK(k.unsent == w.unsent);
  CHECK(k.late == w.late);
  CHECK(k.late_slots == w.late);
  CHECK_MESSAGE(k.slots() == k.terms(), seen);
  CHECK(k.queries == w.next - 1);  // every query the fake saw, sent
  CHECK(u64(a, "dmm.samples") == w.samples);
  CHECK(u64(a, "dmm.mismatches") == 1);
  CHECK(u64(a, "dmm.overlong") == 1);
  CHECK(u64(a, "dmm.parser_errors") == 1);
}

TEST_CASE("a silence longer than the period skips the slots it overran as late gaps, right after the timeout") {
  weir::test::ScratchDir dir("scpigaps");
  weir::test::ScratchArena arena("scpigaps");
  const auto& a = arena.arena();
  const std::map<std::uint64_t, GapReason> plan{{4, GapReason::timeout}, {8, GapReason::malformed}};
  FakeInstrument dmm(dir, "dmm", {"--count", "--plan", "4:stall,8:garbage"});
  // Not declared: the driver makes the channel, one sample a block at the query's rate.
  const std::string file = pipeline(
      dir, arena.name(),
      "name = \"dmm\", host = \"127.0.0.1\", port = " + std::to_string(dmm.port()) +
          ", timeout_ms = 400, channels = {\"dmm.volt\"},"
          " queries = { {send = \"MEAS:VOLT?\", every = 0.05, key = \"dmm.volt\", channel = \"dmm.volt\"} }");
  BackgroundWeir driver({"scpi", arena.name(), "--pipeline", file, "--part", "dmm"});
  REQUIRE_MESSAGE(eventually([&] { const auto r = u64(a, "dmm.accounting.recorded"); return r != ~0ULL && r >= 10; },
                             kPatience),
                  driver.output());
  REQUIRE(driver.signal(SIGINT));
  REQUIRE(driver.wait_exit(std::chrono::seconds(30)) == 0);

  const auto events = weir::test::read_events(a, "dmm.volt");
  const std::string seen = weir::test::describe(events);
  const Walk w = walk(events, plan, 1);
  CHECK_MESSAGE(w.problem.empty(), w.problem << "\n" << seen);
  CHECK(w.of(GapReason::timeout) == 1);
  CHECK(w.of(GapReason::malformed) == 1);
  CHECK(w.unsent == 0);
  // 400 ms of silence on a 50 ms schedule: the next 7 slots had passed when the reply gave up.
  std::size_t after_timeout = 0;
  for (std::size_t i = 0; i < events.size(); ++i)
    if (events[i].gap && events[i].reason == GapReason::timeout)
      while (i + 1 + after_timeout < events.size() && events[i + 1 + after_timeout].gap &&
             events[i + 1 + after_timeout].reason == GapReason::late)
        ++after_timeout;
  CHECK_MESSAGE(after_timeout >= 6, seen);
  CHECK_MESSAGE(after_timeout <= w.late, seen);

  const Accounting k(a, "dmm");
  CHECK(k.recorded == w.samples);
  CHECK(k.late == w.late);
  CHECK(k.late_slots == w.late);
  CHECK(k.timeout == 1);
  CHECK(k.malformed == 1);
  CHECK(k.source_loss == 0);
  CHECK_MESSAGE(k.slots() == k.terms(), seen);
  CHECK(k.queries == w.next - 1);
}

}  // TEST_SUITE
