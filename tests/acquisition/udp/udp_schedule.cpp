// Random packet schedules for the UDP accounting property test (udp_schedule.hpp says what they hold).
#include "udp_schedule.hpp"

#include <algorithm>
#include <array>
#include <random>
#include <sstream>
#include <tuple>

#include "udp_wire.hpp"
#include "weir/udp/udp_limits.hpp"

namespace weir::test::sched {

namespace {

using Rng = std::mt19937_64;

constexpr std::uint64_t kMaxPackets = 5000;      // per stream: the test's channel ring holds every block
constexpr std::uint64_t kFirstClean = 3;         // a stream's first packets start it (and give its step)
constexpr std::uint64_t kLastClean = 2;          // every phase ends with packets that show what came before
constexpr std::uint32_t kMaxLateDuplicate = 200;  // packets after its original a late copy may come
constexpr std::uint32_t kMaxBeyond = 40;          // blocks past the window a packet delayed beyond it may come
constexpr std::uint32_t kVitaCount = 16;          // the 4-bit VITA 49 packet count wraps here
constexpr std::uint32_t kMaxCountBack = 7;        // without TSF, count steps read as a late packet at most
constexpr std::uint64_t kPsPerSecond = 1'000'000'000'000ULL;
constexpr std::uint64_t kNsPerSecond = 1'000'000'000ULL;
constexpr std::uint32_t kMaxRepairs = 1000;

std::uint64_t uniform(Rng& r, std::uint64_t lo, std::uint64_t hi) {
  return std::uniform_int_distribution<std::uint64_t>(lo, hi)(r);
}
bool chance(Rng& r, double p) { return std::uniform_real_distribution<double>(0, 1)(r) < p; }
template <class T, std::size_t N>
T pick(Rng& r, const std::array<T, N>& from) {
  return from[uniform(r, 0, N - 1)];
}

const char* format_name(Format f) {
  switch (f) {
    case Format::vita_tsf: return "vita49+TSF";
    case Format::vita_no_tsf: return "vita49-noTSF";
    case Format::raw: return "raw";
  }
  return "?";
}

struct Item {  // one datagram before it has bytes
  std::uint32_t stream = 0;
  std::uint64_t k = 0;
  bool duplicate = false;
  std::uint32_t phase = 0;
  double order = 0;      // place within the phase, 0..1 (the two streams interleave on it)
  std::uint64_t tiebreak = 0;
};

// What one stream's generator needs besides its plan.
struct StreamBuild {
  std::vector<std::uint64_t> phase_end;         // k one past each phase
  std::vector<double> key;                      // per k: where it goes among its stream's packets
  std::vector<double> duplicate_key;            // per k: where its copy goes, < 0 none
  std::vector<std::uint64_t> tiebreak;
  std::vector<std::int64_t> jump;               // per k: samples added to its index (fate jump)
};

std::uint32_t count_window(const Schedule& s) {  // VITA 49 without TSF: count steps read as a late packet
  return std::min<std::uint32_t>(kMaxCountBack, s.reorder_blocks * s.packets_per_block);
}

std::uint32_t phase_of(const StreamBuild& b, std::uint64_t k) {
  std::uint32_t p = 0;
  while (k >= b.phase_end[p]) ++p;
  return p;
}

void make_fates(Schedule& s, StreamPlan& plan, StreamBuild& build, Rng& r, const std::vector<std::uint64_t>& targets) {
  const bool timestamps = s.format != Format::vita_no_tsf;
  const std::uint32_t wp = count_window(s);
  for (std::size_t p = 0; p < s.phases.size(); ++p) {
    std::uint64_t delivered = 0;
    const bool burst = s.phases[p].burst;
    while (delivered < targets[p] && plan.fate.size() < kMaxPackets - 2000) {
      const std::uint64_t k = plan.fate.size();
      if (k < kFirstClean || !chance(r, burst ? 0.01 : 0.07)) {
        plan.fate.push_back(Fate::sent);
        ++delivered;
        continue;
      }
      const std::uint64_t kind = burst ? 0 : uniform(r, 0, timestamps ? 99 : 54);
      if (kind < 35) {  // a run of source losses
        std::uint64_t run = 0;
        if (!timestamps) {
          run = chance(r, 0.15) ? kVitaCount - 1 : uniform(r, 1, std::max<std::uint64_t>(1, 13 - wp));
        } else {
          const double x = std::uniform_real_distribution<double>(0, 1)(r);
          run = x < 0.65 ? uniform(r, 1, 4) : x < 0.9 ? uniform(r, 5, 40) : x < 0.98 ? uniform(r, 41, 300)
                                                                                   : uniform(r, 301, 1500);
        }
        plan.fate.insert(plan.fate.end(), run, Fate::lost);
      } else if (kind < 55) {
        plan.fate.push_back(Fate::corrupt);
      } else if (kind < 80) {
        plan.fate.push_back(Fate::jump);
      } else {
        plan.fate.push_back(Fate::width);
      }
      plan.fate.push_back(Fate::sent);  // faults are one sent packet apart at least
      ++delivered;
    }
    plan.fate.insert(plan.fate.end(), kLastClean, Fate::sent);
    if (p + 1 == s.phases.size() && plan.fate.size() % s.packets_per_block != 0) plan.fate.push_back(Fate::sent);  // whole blocks
    build.phase_end.push_back(plan.fate.size());
  }
}

void make_order(Schedule& s, StreamPlan& plan, StreamBuild& build, Rng& r, bool beyond_allowed) {
  const std::uint64_t n = plan.fate.size();
  const bool timestamps = s.format != Format::vita_no_tsf;
  const std::uint64_t ppb = s.packets_per_block;
  plan.delay.assign(n, 0);
  build.key.resize(n);
  build.duplicate_key.assign(n, -1);
  build.tiebreak.resize(n);
  build.jump.assign(n, 0);
  for (std::uint64_t k = 0; k < n; ++k) {
    build.key[k] = static_cast<double>(k);
    build.tiebreak[k] = r();
  }
  const std::uint64_t horizon = s.horizon_blocks != 0 ? s.horizon_blocks : acq::kUdpDefaultHorizonBlocks;
  for (std::uint64_t k = kFirstClean; k < n; ++k) {
    const std::uint32_t p = phase_of(build, k);
    const std::uint64_t end = build.phase_end[p];
    if (plan.fate[k] == Fate::jump) {
      std::uint64_t q = (horizon + s.reorder_blocks + 3) * ppb + uniform(r, 0, 3000);
      if (q % kVitaCount == 0) ++q;  // a jump that its 4-bit count contradicts
      auto delta = static_cast<std::int64_t>(q * s.packet_samples + (chance(r, 0.2) ? 1 : 0));
      build.jump[k] = chance(r, 0.3) ? -delta : delta;
    }
    if (plan.fate[k] != Fate::sent || s.phases[p].burst || k + kLastClean >= end) continue;
    // The largest delay that keeps it within the window: no packet of a block more than R past its own before it.
    std::uint64_t in_window = (k / ppb + s.reorder_blocks + 1) * ppb - 1 - k;
    if (!timestamps) in_window = std::min<std::uint64_t>(in_window, count_window(s));
    const std::uint64_t room = end - kLastClean - 1 - k;  // it must still come before the phase's last packets
    bool beyond = false;
    if (beyond_allowed && chance(r, 0.03)) {
      const std::uint64_t d = in_window + uniform(r, 1, kMaxBeyond * ppb);
      if (d <= room) {
        plan.delay[k] = static_cast<std::uint32_t>(d);
        beyond = true;
        s.beyond_window = true;
      }
    } else if (in_window > 0 && chance(r, 0.06)) {
      plan.delay[k] = static_cast<std::uint32_t>(uniform(r, 1, std::min(in_window, std::max<std::uint64_t>(room, 1))));
      if (plan.delay[k] > room) plan.delay[k] = 0;
    }
    if (plan.delay[k] != 0) build.key[k] = static_cast<double>(k + plan.delay[k]) + 0.5;
    // Without TSF only the newest packet can be told resent (README "Streams, blocks and gaps").
    if (!beyond && (timestamps || plan.delay[k] == 0) && chance(r, 0.04)) {
      double at = build.key[k] + 0.01;  // at once
      if (timestamps && chance(r, 0.5)) {
        const double later = static_cast<double>(k + uniform(r, 1, kMaxLateDuplicate)) + 0.75;
        if (later < static_cast<double>(end - kLastClean)) at = std::max(at, later);
      }
      build.duplicate_key[k] = at;
      ++plan.duplicates;
    }
  }
}

std::vector<Item> order_items(const Schedule& s, const std::vector<StreamBuild>& builds) {
  std::vector<Item> items;
  for (std::uint32_t i = 0; i < s.streams.size(); ++i) {
    const StreamPlan& plan = s.streams[i];
    const StreamBuild& b = builds[i];
    for (std::uint64_t k = 0; k < plan.fate.size(); ++k) {
      const std::uint32_t p = phase_of(b, k);
      const double begin = p == 0 ? 0 : static_cast<double>(b.phase_end[p - 1]);
      const double span = static_cast<double>(b.phase_end[p]) - begin;
      if (plan.fate[k] != Fate::lost) items.push_back({i, k, false, p, (b.key[k] - begin) / span, b.tiebreak[k]});
      if (b.duplicate_key[k] >= 0)
        items.push_back({i, k, true, p, (b.duplicate_key[k] - begin) / span, b.tiebreak[k] + 1});
    }
  }
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    return std::tie(a.phase, a.order, a.tiebreak, a.stream) < std::tie(b.phase, b.order, b.tiebreak, b.stream);
  });
  return items;
}

// Two streams: a corrupt packet of one stream (no stream can be read from it) in a window where the
// other stream has a source loss makes the split between the two terms ambiguous: put it back whole.
bool repair_once(Schedule& s, const std::vector<Item>& items) {
  if (s.streams.size() < 2) return false;
  const std::uint64_t margin = (s.reorder_blocks + 1ULL) * s.packets_per_block + 2;
  for (std::size_t at = 0; at < items.size(); ++at) {
    const Item& bad = items[at];
    if (bad.duplicate || s.streams[bad.stream].fate[bad.k] != Fate::corrupt) continue;
    const std::uint32_t other = 1 - bad.stream;
    const StreamPlan& o = s.streams[other];
    std::uint64_t lo = 0, hi = o.fate.size() - 1;
    for (std::size_t j = at; j-- > 0;)
      if (items[j].stream == other && !items[j].duplicate && o.fate[items[j].k] == Fate::sent) {
        lo = items[j].k;
        break;
      }
    for (std::size_t j = at + 1; j < items.size(); ++j)
      if (items[j].stream == other && !items[j].duplicate && o.fate[items[j].k] == Fate::sent) {
        hi = items[j].k;
        break;
      }
    if (lo > hi) std::swap(lo, hi);
    lo = lo > margin ? lo - margin : 0;
    hi = std::min<std::uint64_t>(hi + margin, o.fate.size() - 1);
    for (std::uint64_t k = lo; k <= hi; ++k)
      if (o.fate[k] == Fate::lost) {
        s.streams[bad.stream].fate[bad.k] = Fate::sent;
        return true;
      }
  }
  return false;
}

// VITA 49 without TSF: every step of the 4-bit count must say what happened (README "Accounting").
bool count_readable(const Schedule& s, const std::vector<Item>& items) {
  if (s.format != Format::vita_no_tsf) return true;
  const std::uint32_t wp = count_window(s);
  std::vector<std::int64_t> front(s.streams.size(), -1);
  for (const Item& it : items) {
    if (s.streams[it.stream].fate[it.k] != Fate::sent) continue;  // corrupt: unseen
    std::int64_t& f = front[it.stream];
    const auto k = static_cast<std::int64_t>(it.k);
    if (f < 0) {
      if (k != 0) return false;
      f = 0;
    } else if (k > f) {
      const std::int64_t step = k - f;
      if (!(step + wp < kVitaCount || step == kVitaCount)) return false;
      f = k;
    } else if (it.duplicate ? f != k : f - k > wp) {
      return false;
    }
  }
  return true;
}

void predict_late(Schedule& s, const std::vector<Item>& items) {
  std::vector<std::int64_t> newest(s.streams.size(), -1);  // highest block placed
  for (StreamPlan& p : s.streams) p.predicted_late = 0;
  for (const Item& it : items) {
    StreamPlan& plan = s.streams[it.stream];
    if (plan.fate[it.k] != Fate::sent || it.duplicate) continue;
    const auto block = static_cast<std::int64_t>(it.k / s.packets_per_block);
    if (newest[it.stream] > block + static_cast<std::int64_t>(s.reorder_blocks)) {
      ++plan.predicted_late;
      continue;
    }
    newest[it.stream] = std::max(newest[it.stream], block);
  }
}

struct Bases {
  std::uint64_t index = 0;     // absolute sample index of packet 0 (VITA timestamps, raw first_sample)
  std::uint64_t sequence = 0;  // raw
  std::uint64_t time_ns = 0;   // raw, 0: no clock
};

std::vector<std::int32_t> payload(std::uint32_t stream, std::uint64_t k, std::uint32_t count) {
  std::vector<std::int32_t> out(count);
  for (std::uint32_t j = 0; j < count; ++j) out[j] = wire::sample_value(stream, k * count + j);
  return out;
}

std::vector<std::byte> encode_item(Schedule& s, const Item& it, const Bases& base, std::int64_t jump, Rng& r) {
  StreamPlan& plan = s.streams[it.stream];
  const Fate fate = it.duplicate ? Fate::sent : plan.fate[it.k];
  const std::uint64_t rate = static_cast<std::uint64_t>(s.rate_hz);
  const std::uint64_t index = base.index + it.k * s.packet_samples + static_cast<std::uint64_t>(jump);
  std::string reason;
  std::vector<std::byte> bytes;
  if (s.format == Format::raw) {
    wire::RawPacket p;
    p.stream_id = plan.id;
    p.sequence = base.sequence + it.k;
    p.first_sample = index;
    p.timestamp_ns = base.time_ns == 0 ? 0 : base.time_ns + it.k * s.packet_samples * (kNsPerSecond / rate);
    p.samples = payload(it.stream, it.k, s.packet_samples);
    if (fate == Fate::width) p.dtype = 5;
    if (fate == Fate::corrupt) {
      switch (uniform(r, 0, 3)) {
        case 0: p.magic ^= 0x01000000U; reason = "bad_magic"; break;
        case 1: p.version = 2; reason = "bad_version"; break;
        case 2: p.count_error = 1; reason = "size_mismatch"; break;
        default: p.dtype = 0; reason = "bad_dtype"; break;
      }
    }
    bytes = wire::encode(p);
  } else {
    wire::VitaPacket p;
    p.stream_id = plan.id;
    p.with_stream_id = !(s.streams.size() == 1 && plan.id == 0);
    p.with_class_id = s.class_id;
    p.with_trailer = s.trailer;
    p.tsi = s.tsi;
    p.tsf = s.tsf;
    p.count = static_cast<std::uint32_t>(it.k % kVitaCount);
    if (s.tsi != 0) p.integer_ts = static_cast<std::uint32_t>(index / rate);
    if (s.tsf == 1 || s.tsf == 3) p.fractional_ts = s.tsi != 0 ? index % rate : index;
    if (s.tsf == 2) p.fractional_ts = index % rate * (kPsPerSecond / rate);
    p.samples = payload(it.stream, it.k, s.packet_samples);
    if (fate == Fate::width) p.sample_bytes = 4;
    if (fate == Fate::corrupt) {
      switch (uniform(r, 0, 3)) {
        case 0: p.type = 4; reason = "bad_type"; break;  // a context packet
        case 1: p.size_error = 1; reason = "size_mismatch"; break;
        case 2: reason = "too_short"; break;
        default: reason = "size_mismatch"; break;
      }
    }
    bytes = wire::encode(p);
    if (reason == "too_short") bytes.resize(3);
    if (fate == Fate::corrupt && reason == "size_mismatch" && p.size_error == 0) bytes.resize(bytes.size() - 2);
  }
  if (fate == Fate::corrupt) plan.corrupt_reason.push_back(reason);
  return bytes;
}

Schedule try_schedule(std::uint64_t seed, Rng& r) {
  Schedule s;
  s.seed = seed;
  s.format = static_cast<Format>(seed % 3);
  const std::size_t streams = chance(r, 0.3) ? 2 : 1;
  s.packets_per_block = chance(r, 0.2) ? 2 : 1;
  s.packet_samples = pick(r, std::array<std::uint32_t, 4>{8, 16, 32, 64});
  s.reorder_blocks = pick(r, std::array<std::uint32_t, 9>{0, 1, 1, 2, 2, 2, 3, 4, 8});
  s.horizon_blocks = chance(r, 0.5) ? 0 : std::max(s.reorder_blocks + 1, pick(r, std::array<std::uint32_t, 5>{8, 32, 64, 128, 512}));
  s.batch = pick(r, std::array<std::uint32_t, 4>{1, 4, 32, 64});
  // Bursts drop runs of packets: more than VITA 49 without TSF can place (README), so not there.
  s.small_rcvbuf = s.format != Format::vita_no_tsf && chance(r, 0.18);
  s.phases = s.small_rcvbuf ? std::vector<Phase>{{false}, {true}, {false}} : std::vector<Phase>{{false}};
  switch (s.format) {
    case Format::vita_tsf: {
      constexpr std::array<std::pair<unsigned, unsigned>, 5> kinds{{{1, 1}, {0, 1}, {0, 3}, {1, 2}, {2, 1}}};
      std::tie(s.tsi, s.tsf) = pick(r, kinds);
      s.rate_hz = s.tsf == 2 ? pick(r, std::array<double, 2>{1000, 1e6}) : pick(r, std::array<double, 2>{1000, 1e5});
      break;
    }
    case Format::vita_no_tsf:
      s.tsi = chance(r, 0.5) ? 1 : 0;
      s.rate_hz = pick(r, std::array<double, 2>{100, 1000});
      break;
    case Format::raw: s.rate_hz = pick(r, std::array<double, 2>{1000, 1e6}); break;
  }
  if (s.format != Format::raw) {
    s.class_id = chance(r, 0.2);
    s.trailer = chance(r, 0.2);
  }
  std::vector<std::uint64_t> targets;
  for (const Phase& p : s.phases)
    targets.push_back(p.burst ? uniform(r, 300, 700) / streams : uniform(r, 20, 120) * 2 / (streams + 1));
  const bool beyond_allowed = s.format != Format::vita_no_tsf && chance(r, 0.2);
  std::vector<StreamBuild> builds(streams);
  for (std::size_t i = 0; i < streams; ++i) {
    StreamPlan plan;
    plan.id = streams == 1 && s.format != Format::raw && chance(r, 0.15) ? 0 : static_cast<std::uint32_t>(r());
    if (i == 1 && plan.id == s.streams[0].id) plan.id ^= 1;
    s.streams.push_back(std::move(plan));
    make_fates(s, s.streams[i], builds[i], r, targets);
    make_order(s, s.streams[i], builds[i], r, beyond_allowed);
  }
  std::vector<Item> items = order_items(s, builds);
  for (std::uint32_t n = 0; n < kMaxRepairs && repair_once(s, items); ++n) {
    ++s.repairs;
    items = order_items(s, builds);
  }
  if (!count_readable(s, items)) return Schedule{};
  predict_late(s, items);
  std::vector<Bases> bases(streams);
  for (Bases& b : bases) {
    const std::uint64_t rate = static_cast<std::uint64_t>(s.rate_hz);
    b.index = s.tsi != 0 ? uniform(r, 1'600'000'000, 1'700'000'000) * rate + uniform(r, 0, rate - 1)
                         : uniform(r, 1ULL << 36, 1ULL << 40);
    b.sequence = uniform(r, 0, 1ULL << 40);
    b.time_ns = chance(r, 0.7) ? uniform(r, 1'600'000'000, 1'700'000'000) * kNsPerSecond : 0;
  }
  for (const Item& it : items) {
    Datagram d{it.stream, it.k, it.duplicate, it.phase, {}};
    const std::int64_t jump = !it.duplicate && s.streams[it.stream].fate[it.k] == Fate::jump ? builds[it.stream].jump[it.k] : 0;
    d.bytes = encode_item(s, it, bases[it.stream], jump, r);
    s.wire.push_back(std::move(d));
  }
  return s;
}

}  // namespace

std::uint64_t Schedule::count(std::size_t stream, Fate f) const {
  return static_cast<std::uint64_t>(std::count(streams[stream].fate.begin(), streams[stream].fate.end(), f));
}
std::uint64_t Schedule::count(Fate f) const {
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < streams.size(); ++i) n += count(i, f);
  return n;
}
std::uint64_t Schedule::duplicates() const {
  std::uint64_t n = 0;
  for (const StreamPlan& p : streams) n += p.duplicates;
  return n;
}
std::uint64_t Schedule::sent() const {
  std::uint64_t n = duplicates();
  for (const StreamPlan& p : streams) n += p.fate.size();
  return n;
}

std::string Schedule::describe() const {
  std::ostringstream out;
  out << "schedule seed " << seed << " (rerun alone: WEIR_UDP_SCHEDULE_SEED=" << seed << "): " << format_name(format)
      << " tsi " << tsi << " tsf " << tsf << (class_id ? " class-id" : "") << (trailer ? " trailer" : "") << ", rate "
      << rate_hz << " Hz, " << packet_samples << " samples/packet, " << packets_per_block << " packet(s)/block, reorder "
      << reorder_blocks << ", horizon " << (horizon_blocks != 0 ? std::to_string(horizon_blocks) : "default") << ", batch "
      << batch << (small_rcvbuf ? ", small rcvbuf + burst" : "") << (beyond_window ? ", delays beyond the window" : "")
      << ", " << repairs << " repairs, " << wire.size() << " datagrams\n";
  for (std::size_t i = 0; i < streams.size(); ++i) {
    const StreamPlan& p = streams[i];
    out << "  stream " << i << " id " << p.id << ": " << p.fate.size() << " packets, lost " << count(i, Fate::lost)
        << ", corrupt " << count(i, Fate::corrupt) << ", jump " << count(i, Fate::jump) << ", width "
        << count(i, Fate::width) << ", duplicates " << p.duplicates << ", predicted late " << p.predicted_late << "\n   ";
    std::size_t shown = 0;
    for (std::uint64_t k = 0; k < p.fate.size() && shown < 80; ++k) {
      if (p.fate[k] == Fate::lost && (k == 0 || p.fate[k - 1] != Fate::lost)) {
        std::uint64_t end = k;
        while (end < p.fate.size() && p.fate[end] == Fate::lost) ++end;
        out << " k" << k << ":lost" << end - k;
        ++shown;
      } else if (p.fate[k] == Fate::corrupt || p.fate[k] == Fate::jump || p.fate[k] == Fate::width) {
        out << " k" << k << (p.fate[k] == Fate::corrupt ? ":corrupt" : p.fate[k] == Fate::jump ? ":jump" : ":width");
        ++shown;
      }
      if (!p.delay.empty() && p.delay[k] != 0) {
        out << " k" << k << ":delay" << p.delay[k];
        ++shown;
      }
    }
    out << "\n";
  }
  out << "  wire (stream:k, d = copy):";
  for (std::size_t i = 0; i < wire.size() && i < 400; ++i)
    out << (wire[i].phase != (i == 0 ? 0 : wire[i - 1].phase) ? " |" : "") << " " << wire[i].stream << ":" << wire[i].k
        << (wire[i].duplicate ? "d" : "");
  if (wire.size() > 400) out << " ...";
  return out.str();
}

Schedule make_schedule(std::uint64_t seed) {
  for (std::uint64_t attempt = 0;; ++attempt) {
    Rng r(seed * 0x9E3779B97F4A7C15ULL + attempt);
    Schedule s = try_schedule(seed, r);
    if (!s.wire.empty()) return s;
  }
}

}  // namespace weir::test::sched
