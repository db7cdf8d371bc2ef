#pragma once
// One schedule through the real driver: run_udp on a thread of the test, bound to a loopback port,
// fed by the test's own sender (udp_wire.hpp), stopped once the socket is empty, and what it left
// read back: its report, its `<part>.accounting.<term>` keys, the kernel's own drop count for the
// socket, and every block of every channel (data checked against what was sent, gaps with reasons).
#include <doctest/doctest.h>

#include <pthread.h>
#include <signal.h>
#include <time.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "arena_guard.hpp"
#include "udp_schedule.hpp"
#include "udp_wire.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/udp/receiver.hpp"

namespace weir::test::acct {

inline constexpr auto kWait = std::chrono::milliseconds(10'000);   // bound on every wait of a run
inline constexpr std::uint32_t kRingBlocks = 8192;                 // holds every block of a schedule
inline constexpr std::int64_t kSmallRcvbuf = 16 << 10;             // the burst schedules' (the kernel doubles it)
inline constexpr std::int64_t kLargeRcvbuf = 8 << 20;
inline constexpr std::size_t kSmallChunk = 8;                      // datagrams sent between drains, small buffer
inline constexpr std::size_t kLargeChunk = 128;
inline constexpr const char* kPart = "dig";
inline constexpr std::array<const char*, 6> kTerms{"recorded", "source_loss", "kernel_drop",
                                                   "malformed", "duplicate",   "late"};

inline std::array<std::uint64_t, 6> terms(const acq::UdpLedger& l) {
  return {l.recorded, l.source_loss, l.kernel_drop, l.malformed, l.duplicate, l.late};
}

/// SIGUSR2 with a handler that does nothing and no SA_RESTART: sent to the receiving thread, it cuts
/// its wait in recvmmsg short so that it sees the stop flag at once. The old action comes back after.
class WakeSignal {
 public:
  WakeSignal() {
    struct sigaction sa {};
    sa.sa_handler = [](int) {};
    sigemptyset(&sa.sa_mask);
    REQUIRE(::sigaction(SIGUSR2, &sa, &old_) == 0);
  }
  ~WakeSignal() { (void)::sigaction(SIGUSR2, &old_, nullptr); }
  WakeSignal(const WakeSignal&) = delete;
  WakeSignal& operator=(const WakeSignal&) = delete;

 private:
  struct sigaction old_ {};
};

/// Holds one thread still while a burst is sent, as a busy machine would deschedule it: SIGUSR1 runs
/// a handler on that thread that waits until the holder goes out of scope. The constructor returns
/// once the thread is in the handler, so everything sent meanwhile lands in the socket's buffer
/// undrained (a burst larger than the buffer makes the kernel drop, every time).
class HeldThread {
 public:
  explicit HeldThread(std::thread& t) {
    struct sigaction sa {};
    sa.sa_handler = [](int) {
      held().store(true);
      const timespec nap{0, 100'000};
      while (!released().load()) (void)::nanosleep(&nap, nullptr);
      held().store(false);
    };
    sigemptyset(&sa.sa_mask);
    REQUIRE(::sigaction(SIGUSR1, &sa, &old_) == 0);
    released().store(false);
    REQUIRE(::pthread_kill(t.native_handle(), SIGUSR1) == 0);
    const auto deadline = std::chrono::steady_clock::now() + kWait;
    while (!held().load()) {
      if (std::chrono::steady_clock::now() < deadline) continue;
      released().store(true);  // the handler stays: if the signal lands late, it returns at once
      FAIL("the receiving thread never took SIGUSR1");
    }
  }
  ~HeldThread() {
    released().store(true);
    while (held().load()) std::this_thread::yield();
    (void)::sigaction(SIGUSR1, &old_, nullptr);
  }
  HeldThread(const HeldThread&) = delete;
  HeldThread& operator=(const HeldThread&) = delete;

 private:
  static std::atomic<bool>& held() {
    static std::atomic<bool> flag{false};
    return flag;
  }
  static std::atomic<bool>& released() {
    static std::atomic<bool> flag{true};
    return flag;
  }
  struct sigaction old_ {};
};

struct Block {
  bool gap = false;
  core::GapReason reason = core::GapReason::lapped;
  std::uint64_t wrong_samples = 0;  // data block: samples that are not what was sent there
};

struct Outcome {
  acq::UdpReport report;
  std::array<std::uint64_t, 6> keys{};
  std::uint32_t keys_missing = 0;
  std::vector<std::array<std::uint64_t, 2>> stream_keys;  // bad_timestamp, width_mismatch per stream
  std::uint32_t stream_keys_missing = 0;
  std::uint64_t socket_drops = 0;  // the kernel's count for the socket (/proc/net/udp), after the last send
  std::vector<std::vector<Block>> blocks;  // per stream, in channel order
};

inline std::string channel_of(std::size_t stream) { return "s" + std::to_string(stream); }

inline bool read_key(const core::Arena& arena, const std::string& key, std::uint64_t& value) {
  core::KvStore kv(arena);
  core::ValueType type{};
  return kv.get_scalar(key, value, type) == core::KvStatus::ok && type == core::ValueType::u64;
}

// Every block of a stream's channel, the data compared with what the sender put there.
inline std::vector<Block> read_channel(const core::Arena& arena, const sched::Schedule& s, std::size_t stream) {
  auto reader = core::ChannelReader::open(arena, channel_of(stream), core::ConsumerPolicy::lossy, "accounting-test",
                                          core::StartAt::oldest);
  REQUIRE(reader);
  std::vector<Block> out;
  const std::uint32_t n = s.block_samples();
  for (;;) {
    core::BlockView view;
    std::uint64_t lost = 0;
    const core::NextStatus status = reader->next(view, lost);
    if (status == core::NextStatus::empty) break;
    if (status == core::NextStatus::lost) {
      out.insert(out.end(), lost, Block{true, core::lost_reason(view.flags), 0});
      continue;
    }
    Block b;
    if (view.samples != n) b.wrong_samples += n;
    for (std::uint32_t i = 0; i < std::min(view.samples, n); ++i) {
      std::int16_t v = 0;
      std::memcpy(&v, view.data + 2 * i, 2);
      if (v != wire::sample_value(static_cast<std::uint32_t>(stream), view.sequence * n + i)) ++b.wrong_samples;
    }
    REQUIRE(reader->done(view));
    out.push_back(b);
  }
  return out;
}

inline Outcome run_schedule(const sched::Schedule& s) {
  core::ArenaOptions ao;
  ao.vector_dim = 0;
  ao.channel_capacity = 4;
  auto arena = core::Arena::create("memfd:" + unique_name("acct"), ao);
  REQUIRE_MESSAGE(arena, arena.error().what);

  acq::UdpOptions o;
  o.part = kPart;
  o.format = s.format == sched::Format::raw ? acq::PacketFormat::raw : acq::PacketFormat::vita49;
  for (std::size_t i = 0; i < s.streams.size(); ++i) o.streams.push_back({s.streams[i].id, channel_of(i)});
  o.rcvbuf_bytes = s.small_rcvbuf ? kSmallRcvbuf : kLargeRcvbuf;
  o.batch = s.batch;
  o.reorder_blocks = s.reorder_blocks;
  if (s.horizon_blocks != 0) o.horizon_blocks = s.horizon_blocks;
  o.create_missing = true;
  o.dtype = core::Dtype::i16;
  o.rate_hz = s.rate_hz;
  o.block_samples = s.block_samples();
  o.ring_blocks = kRingBlocks;

  std::atomic<bool> stop{false}, done{false};
  std::optional<core::Result<acq::UdpReport>> result;
  std::thread rx([&] {
    result.emplace(acq::run_udp(*arena, o, stop));
    done.store(true);
  });
  struct Joiner {  // a failed REQUIRE below still stops and joins the receiver
    std::atomic<bool>& stop;
    std::thread& rx;
    ~Joiner() {
      stop.store(true);
      if (rx.joinable()) rx.join();
    }
  } joiner{stop, rx};

  const auto deadline = std::chrono::steady_clock::now() + kWait;
  std::uint64_t port = 0;
  while (!done.load() && !(read_key(*arena, std::string(kPart) + ".port", port) && port != 0)) {
    REQUIRE_MESSAGE(std::chrono::steady_clock::now() < deadline, "the receiver never published its port");
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  REQUIRE_MESSAGE(!done.load(), "run_udp ended before binding: ",
                  (result && !*result ? result->error().what : std::string("?")));
  const auto p = static_cast<std::uint16_t>(port);

  wire::Sender tx(p);
  const std::size_t chunk = s.small_rcvbuf ? kSmallChunk : kLargeChunk;
  for (std::uint32_t phase = 0; phase < s.phases.size(); ++phase) {
    std::vector<const std::vector<std::byte>*> datagrams;
    for (const sched::Datagram& d : s.wire)
      if (d.phase == phase) datagrams.push_back(&d.bytes);
    if (s.phases[phase].burst) {
      const HeldThread held(rx);  // as if descheduled: nothing drains until the burst is sent
      tx.send(datagrams);         // all at once: the small buffer overflows
    } else {
      for (std::size_t at = 0; at < datagrams.size(); at += chunk) {
        REQUIRE_MESSAGE(wire::drained(p, kWait), "the receiver stopped reading its socket");
        tx.send({datagrams.begin() + static_cast<std::ptrdiff_t>(at),
                 datagrams.begin() + static_cast<std::ptrdiff_t>(std::min(at + chunk, datagrams.size()))});
      }
    }
    REQUIRE_MESSAGE(wire::drained(p, kWait), "the receiver stopped reading its socket");
  }
  Outcome out;
  out.socket_drops = wire::socket_queue(p).drops;
  stop.store(true);
  while (!done.load()) {
    REQUIRE_MESSAGE(std::chrono::steady_clock::now() < deadline + kWait, "run_udp did not return after stop");
    (void)pthread_kill(rx.native_handle(), SIGUSR2);
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  rx.join();
  REQUIRE(result.has_value());
  REQUIRE_MESSAGE(*result, (*result ? std::string() : result->error().what));
  out.report = **result;

  for (std::size_t t = 0; t < kTerms.size(); ++t)
    if (!read_key(*arena, std::string(kPart) + ".accounting." + kTerms[t], out.keys[t])) ++out.keys_missing;
  for (std::size_t i = 0; i < s.streams.size(); ++i) {
    std::array<std::uint64_t, 2> v{};
    const std::string prefix = std::string(kPart) + "." + channel_of(i) + ".";
    if (!read_key(*arena, prefix + "bad_timestamp", v[0])) ++out.stream_keys_missing;
    if (!read_key(*arena, prefix + "width_mismatch", v[1])) ++out.stream_keys_missing;
    out.stream_keys.push_back(v);
    out.blocks.push_back(read_channel(*arena, s, i));
  }
  return out;
}

}  // namespace weir::test::acct
