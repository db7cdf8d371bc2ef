// The UDP driver's packet ledger, as a property: for 1,000 random schedules (udp_schedule.hpp) sent
// over loopback to run_udp by the test's own VITA 49 and raw writer,
//   sent = recorded + source_loss + kernel_drop + malformed + duplicate + late
// exactly, the `<part>.accounting.<term>` keys say the same, kernel_drop is the kernel's own count for
// the socket, and every data block holds exactly the samples sent there. Where the schedule tells
// every term (no kernel drop, no packet delayed past the window), each term, each stream's counters,
// the refusals by reason, where the gap blocks are and the reasons they carry are checked too.
// A failing schedule is named by its seed; WEIR_UDP_SCHEDULE_SEED=<seed> runs it alone and prints it
// (WEIR_UDP_SCHEDULES=<n> runs the first n).
#include <doctest/doctest.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "udp_accounting_run.hpp"

using namespace weir;
using test::acct::Outcome;
using test::sched::Fate;
using test::sched::Schedule;

namespace {

constexpr std::uint64_t kBaseSeed = 26'000;
constexpr std::uint64_t kSchedules = 1000;
constexpr std::size_t kShownPerCheck = 3;  // failures described per check
constexpr std::uint64_t kListedSeeds = 100;  // failing seeds listed per check

class Verdict {
 public:
  void expect(bool ok, const std::string& check, const std::string& detail) {
    if (!ok) failed.push_back({check, detail});
  }
  std::vector<std::pair<std::string, std::string>> failed;
};

std::string ledger_text(const acq::UdpLedger& l) {
  return "recorded " + std::to_string(l.recorded) + ", source_loss " + std::to_string(l.source_loss) + ", kernel_drop " +
         std::to_string(l.kernel_drop) + ", malformed " + std::to_string(l.malformed) + ", duplicate " +
         std::to_string(l.duplicate) + ", late " + std::to_string(l.late);
}

bool missing(Fate f) { return f != Fate::sent; }

// What must hold for every schedule.
void check_always(const Schedule& s, const Outcome& o, Verdict& v) {
  const acq::UdpLedger& l = o.report.ledger;
  std::uint64_t sum = 0;
  for (std::uint64_t t : test::acct::terms(l)) sum += t;
  v.expect(sum == s.sent(), "equation",
           "sent " + std::to_string(s.sent()) + " != " + std::to_string(sum) + " (" + ledger_text(l) + ")");
  v.expect(o.keys_missing == 0 && o.keys == test::acct::terms(l), "accounting keys equal the report",
           std::to_string(o.keys_missing) + " keys missing; keys recorded " + std::to_string(o.keys[0]) + " ... late " +
               std::to_string(o.keys[5]) + " vs " + ledger_text(l));
  v.expect(l.kernel_drop == o.socket_drops, "kernel_drop is the socket's drop count",
           std::to_string(l.kernel_drop) + " vs /proc/net/udp " + std::to_string(o.socket_drops));
  if (o.socket_drops == 0 && s.beyond_window) {
    std::uint64_t late = 0;
    for (const auto& p : s.streams) late += p.predicted_late;
    v.expect(l.late == late, "late: the packets delayed past the window",
             std::to_string(l.late) + " vs " + std::to_string(late) + " predicted");
  }
  for (std::size_t i = 0; i < s.streams.size(); ++i) {
    const std::vector<test::acct::Block>& blocks = o.blocks[i];
    const std::uint64_t expected = s.packets(i) / s.packets_per_block;
    v.expect(blocks.size() == expected, "every block of the stream is in its channel",
             "stream " + std::to_string(i) + ": " + std::to_string(blocks.size()) + " blocks, " +
                 std::to_string(expected) + " expected");
    const acq::StreamCounters& c = o.report.streams[i].counters;
    v.expect(o.stream_keys_missing == 0 && o.stream_keys[i][0] == c.bad_timestamp &&
                 o.stream_keys[i][1] == c.width_mismatch,
             "bad_timestamp and width_mismatch keys equal the report",
             "stream " + std::to_string(i) + ": " + std::to_string(o.stream_keys_missing) + " keys missing");
    for (std::size_t b = 0; b < blocks.size(); ++b) {
      const std::string where = "stream " + std::to_string(i) + " block " + std::to_string(b);
      v.expect(blocks[b].wrong_samples == 0, "published data is what was sent",
               where + ": " + std::to_string(blocks[b].wrong_samples) + " samples differ");
      bool whole = b < expected;
      for (std::uint64_t k = b * s.packets_per_block; whole && k < (b + 1) * s.packets_per_block; ++k)
        whole = !missing(s.streams[i].fate[k]);
      v.expect(blocks[b].gap || whole, "a data block only where every packet of it was sent whole", where);
      const core::GapReason r = blocks[b].reason;
      v.expect(!blocks[b].gap || r == core::GapReason::source_loss || r == core::GapReason::kernel_drop ||
                   r == core::GapReason::malformed || r == core::GapReason::late,
               "gap blocks name who lost them", where + ": " + std::string(core::gap_reason_name(r)));
    }
  }
}

// Where the schedule tells every term: no kernel drop, nothing delayed past the window.
void check_exact(const Schedule& s, const Outcome& o, Verdict& v) {
  const acq::UdpLedger& l = o.report.ledger;
  const std::uint64_t bad = s.count(Fate::corrupt) + s.count(Fate::jump) + s.count(Fate::width);
  v.expect(l.recorded == s.count(Fate::sent) && l.source_loss == s.count(Fate::lost) && l.malformed == bad &&
               l.duplicate == s.duplicates() && l.late == 0 && l.kernel_drop == 0,
           "each term exact",
           ledger_text(l) + " vs recorded " + std::to_string(s.count(Fate::sent)) + ", source_loss " +
               std::to_string(s.count(Fate::lost)) + ", malformed " + std::to_string(bad) + ", duplicate " +
               std::to_string(s.duplicates()));
  std::map<std::string, std::uint64_t> refused;
  for (const auto& p : s.streams)
    for (const std::string& reason : p.corrupt_reason) ++refused[reason];
  for (std::size_t r = 1; r < acq::kPacketStatusCount; ++r) {
    const std::string name(acq::packet_status_name(static_cast<acq::PacketStatus>(r)));
    v.expect(o.report.malformed[r] == refused[name], "refusals by reason",
             name + ": " + std::to_string(o.report.malformed[r]) + " vs " + std::to_string(refused[name]) + " sent");
  }
  for (std::size_t i = 0; i < s.streams.size(); ++i) {
    const acq::StreamCounters& c = o.report.streams[i].counters;
    const std::string where = "stream " + std::to_string(i);
    const std::uint64_t width = s.count(i, Fate::width);
    v.expect(c.duplicates == s.streams[i].duplicates && c.late == 0 && c.bad_timestamp == s.count(i, Fate::jump) &&
                 (s.format == test::sched::Format::raw ? c.dtype_mismatch : c.width_mismatch) == width,
             "stream counters exact",
             where + ": duplicates " + std::to_string(c.duplicates) + ", late " + std::to_string(c.late) +
                 ", bad_timestamp " + std::to_string(c.bad_timestamp) + ", width_mismatch " +
                 std::to_string(c.width_mismatch) + ", dtype_mismatch " + std::to_string(c.dtype_mismatch));
    const std::uint64_t own_bad = s.count(i, Fate::corrupt) + s.count(i, Fate::jump) + width;
    v.expect(c.recorded == s.count(i, Fate::sent) && c.source_loss == s.count(i, Fate::lost) &&
                 c.malformed_missing == own_bad && c.kernel_drop == 0,
             "stream ledger exact",
             where + ": recorded " + std::to_string(c.recorded) + ", source_loss " + std::to_string(c.source_loss) +
                 ", malformed_missing " + std::to_string(c.malformed_missing) + " vs lost " +
                 std::to_string(s.count(i, Fate::lost)) + ", malformed " + std::to_string(own_bad));
    // Gap blocks exactly where a packet is missing; their reasons: which ones, and how many of each.
    const auto& fate = s.streams[i].fate;
    const std::uint64_t ppb = s.packets_per_block;
    std::uint64_t only_source = 0, only_malformed = 0, mixed = 0, labelled_source = 0, labelled_malformed = 0;
    const std::vector<test::acct::Block>& blocks = o.blocks[i];
    for (std::uint64_t b = 0; b < blocks.size() && (b + 1) * ppb <= fate.size(); ++b) {
      bool lost = false, bad_one = false;
      for (std::uint64_t k = b * ppb; k < (b + 1) * ppb; ++k) {
        lost = lost || fate[k] == Fate::lost;
        bad_one = bad_one || (missing(fate[k]) && fate[k] != Fate::lost);
      }
      v.expect(blocks[b].gap == (lost || bad_one), "gap blocks exactly where a packet is missing",
               where + " block " + std::to_string(b) + (blocks[b].gap ? " is a gap" : " is data"));
      only_source += lost && !bad_one;
      only_malformed += bad_one && !lost;
      mixed += lost && bad_one;
      labelled_source += blocks[b].gap && blocks[b].reason == core::GapReason::source_loss;
      labelled_malformed += blocks[b].gap && blocks[b].reason == core::GapReason::malformed;
    }
    // Where every missing packet of the stream went missing the same way, every gap says so. (With
    // both kinds, which gap carries which reason depends on the order the blocks close in: the
    // counts above must agree, not the places.)
    const std::uint64_t lost_packets = s.count(i, Fate::lost);
    const bool one_kind = lost_packets == 0 || lost_packets == s.packets(i) - s.count(i, Fate::sent);
    for (std::uint64_t b = 0; one_kind && b < blocks.size(); ++b)
      if (blocks[b].gap)
        v.expect(blocks[b].reason == (lost_packets != 0 ? core::GapReason::source_loss : core::GapReason::malformed),
                 "a gap block's reason", where + " block " + std::to_string(b) + ": " +
                                             std::string(core::gap_reason_name(blocks[b].reason)));
    // One packet per block: as many gaps of each reason as packets missing that way. (With two, a
    // block may hold one of each, and a run's reasons go to its blocks in the order they close.)
    v.expect(ppb != 1 || (labelled_source == only_source && labelled_malformed == only_malformed),
             "gap reasons add up", where + ": " + std::to_string(labelled_source) + " source_loss, " +
                                       std::to_string(labelled_malformed) + " malformed labels for " +
                                       std::to_string(only_source) + " lost, " + std::to_string(only_malformed) +
                                       " malformed, " + std::to_string(mixed) + " mixed blocks");
  }
}

}  // namespace

TEST_SUITE("acquisition.udp.accounting") {

TEST_CASE("udp accounting: sent = recorded + source_loss + kernel_drop + malformed + duplicate + late, "
          "for 1,000 random schedules on loopback") {
  const test::acct::WakeSignal wake;
  std::vector<std::uint64_t> seeds;
  if (const char* one = std::getenv("WEIR_UDP_SCHEDULE_SEED"); one != nullptr) {
    seeds.push_back(std::strtoull(one, nullptr, 10));
  } else {
    const char* count = std::getenv("WEIR_UDP_SCHEDULES");  // fewer (or more) schedules, e.g. while debugging
    const std::uint64_t n = count != nullptr ? std::strtoull(count, nullptr, 10) : kSchedules;
    for (std::uint64_t i = 0; i < n; ++i) seeds.push_back(kBaseSeed + i);
  }
  struct Failures {
    std::uint64_t schedules = 0;
    std::array<std::uint64_t, 3> by_format{};  // vita49+TSF, vita49-noTSF, raw
    std::vector<std::string> shown;            // "seed: detail", the first few
    std::string seeds;                         // every failing seed, up to kListedSeeds
    std::string first;                         // the first failing schedule, in full
  };
  std::map<std::string, Failures> failures;  // by check
  std::uint64_t exact = 0, with_drops = 0, bursts = 0, beyond = 0, datagrams = 0, failing = 0;
  const auto start = std::chrono::steady_clock::now();
  for (std::uint64_t seed : seeds) {
    const Schedule s = test::sched::make_schedule(seed);
    if (seeds.size() == 1) MESSAGE(s.describe());
    const Outcome o = test::acct::run_schedule(s);
    Verdict v;
    check_always(s, o, v);
    const bool is_exact = o.socket_drops == 0 && !s.beyond_window;
    if (is_exact) check_exact(s, o, v);
    exact += is_exact;
    with_drops += o.socket_drops != 0;
    bursts += s.small_rcvbuf;
    beyond += s.beyond_window;
    datagrams += s.wire.size();
    failing += !v.failed.empty();
    std::set<std::string> counted;
    for (const auto& [check, detail] : v.failed) {
      Failures& f = failures[check];
      if (counted.insert(check).second) {
        ++f.schedules;
        ++f.by_format[static_cast<std::size_t>(s.format)];
        if (f.schedules <= kListedSeeds) f.seeds += " " + std::to_string(seed);
        if (f.first.empty()) f.first = s.describe() + "\n  ledger: " + ledger_text(o.report.ledger);
      }
      if (f.shown.size() < kShownPerCheck) f.shown.push_back(std::to_string(seed) + ": " + detail);
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MESSAGE(seeds.size(), " schedules, ", datagrams, " datagrams in ", seconds, " s: ", exact, " with every term known, ",
          bursts, " with bursts (", with_drops, " where the kernel dropped), ", beyond, " with delays past the window");
  if (seeds.size() > 1) CHECK_MESSAGE(with_drops > 0, "no burst made the kernel drop: kernel_drop went untested");
  for (const auto& [check, f] : failures) {
    std::string shown;
    for (const std::string& line : f.shown) shown += "\n  seed " + line;
    FAIL_CHECK(check, ": fails in ", f.schedules, " schedules (VITA 49 with TSF ", f.by_format[0], ", without TSF ",
               f.by_format[1], ", raw ", f.by_format[2], "):", f.seeds, std::string(f.schedules > kListedSeeds ? " ..." : ""), shown,
               "\n  the first:\n", f.first);
  }
  CHECK(failing == 0);
}

}  // TEST_SUITE
