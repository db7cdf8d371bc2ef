// `weir bench udp`: the UDP driver's receive path (acq::run_udp: recvmmsg, decode, assembler,
// channel blocks, counters) against a bare recvmmsg loop into a buffer, at 1 KiB and 8 KiB i16
// payloads, fed by the same load generator (acq::run_udpgen, in this process) with the same
// options, in the same run, the receivers taking turns.
//
// Two ways to feed a receiver (a forked child on the other CPU):
//   drain  the child is stopped (SIGSTOP) once it waits in recvmmsg, the generator fills its
//          socket buffer with N datagrams (sized to fit, checked in /proc/net/udp: no kernel drop),
//          then the child is continued and timed until it has taken all N: the receiver's own
//          capacity, with nothing else running. On loopback the sender pays the kernel's whole
//          delivery path, so a live sender is slower than either receiver; this is the rate that
//          saturates the receiver.
//   live   the child receives while the generator sends as fast as it can: both receivers keep up
//          with the sender (the sender is the limit, which the report shows), and the line to read
//          is the receiver's CPU time per packet at that rate.
// With injected loss (drain, 1 % of packets dropped and 0.5 % reordered by the generator) the
// driver must count lost == what the generator dropped, exactly, in every fill; else the run fails.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "channel_bench.hpp"
#include "extra_suites.hpp"
#include "harness.hpp"
#include "suite_report.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/udp/generator.hpp"
#include "weir/udp/receiver.hpp"

namespace weir::bench {

namespace {

constexpr std::uint32_t kPayloadBytes[] = {1024, 8192};     // i16 payload per datagram, the two measured sizes
constexpr std::uint32_t kSampleBytes = 2;                    // i16
constexpr std::uint32_t kBlockSamples = 4096;                // channel block: 8 packets of 1 KiB, 1 of 8 KiB
constexpr std::uint32_t kRingBlocks = 256;                   // channel ring
constexpr double kRateHz = 1e8;                              // the stream's nominal rate (stamps only: nothing is paced)
constexpr std::uint32_t kBatch = acq::kUdpDefaultBatch;      // datagrams per recvmmsg / sendmmsg, both receivers
constexpr std::int64_t kRcvbufBytes = acq::kUdpDefaultRcvbufBytes;  // asked for by both receivers (FORCE)
constexpr std::uint64_t kCalibratePackets = 1000;            // datagrams queued to learn one's buffer cost
constexpr double kFillFraction = 0.7;                        // of the granted buffer a drain fill may take
constexpr std::uint64_t kMaxFill = 65536;                    // datagrams per drain fill at most
constexpr std::uint64_t kQuickFillDivisor = 8;               // --quick: smaller fills
constexpr int kFillsPerRep = 4;                              // drain fills per receiver per repetition (--quick: 1)
constexpr std::uint64_t kLivePackets[] = {200000, 50000};    // live run per payload size (--quick: a tenth)
constexpr double kLoss = 0.01;                               // the loss fills: probability a packet is dropped
constexpr double kReorder = 0.005;                           // ... and that one is sent after the next
constexpr std::int64_t kSettleNs = 20'000'000;               // after the port is up: time to reach recvmmsg
constexpr std::int64_t kReceiveTimeoutNs = 100'000'000;      // the bare loop's SO_RCVTIMEO (as the driver's)
constexpr std::int64_t kChildTimeoutNs = 60'000'000'000;     // a child's whole receive gives up after this
constexpr double kTarget = 0.9;                              // the driver's packets/s over the bare loop's, at least
constexpr std::string_view kUnitPacketsPerS = "packets/s";
constexpr std::uint64_t kUntilStopped = UINT64_MAX;        // a receiver's expected count: until stopped and drained
constexpr const char* kChannel = "udp.in";
constexpr const char* kPart = "udpbench";

constexpr const char* kUsage =
    "usage: weir bench udp [--json] [--reps N] [--quick]\n"
    "  the UDP driver's receive path against a bare recvmmsg loop, 1 KiB and 8 KiB i16 payloads over\n"
    "  loopback: draining a filled socket buffer (capacity) and behind a live sender (CPU per packet);\n"
    "  loss counted exactly under injected loss\n"
    "  --json     one JSON object per result line on stdout\n"
    "  --reps N   repetitions per case, 1..1000 (default 5); the median is reported\n"
    "  --quick    smaller fills, one per repetition (for tests)\n";

enum class Receiver : std::uint8_t { bare, driver };
enum class Feed : std::uint8_t { drain, live };

std::atomic<bool> g_stop{false};  // the child's stop flag, set by SIGUSR1
extern "C" void on_stop_signal(int) { g_stop.store(true, std::memory_order_relaxed); }  // a flag: orders nothing
std::atomic<std::int64_t> g_continued_cpu_ns{0};  // the child's CPU time when SIGCONT resumed it (drain)
extern "C" void on_continue_signal(int) {
  timespec t{};
  (void)::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);  // async-signal-safe
  g_continued_cpu_ns.store(static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec,
                           std::memory_order_relaxed);  // read by the same thread after the handler
}

// The bare child's first message: its socket is bound.
struct Ready {
  std::uint32_t port = 0;
  std::int32_t rcvbuf = 0;
};

// A child's report, sent once through its pipe when it is done.
struct RxReport {
  std::int64_t end_ns = 0;          // CLOCK_MONOTONIC once the last datagram was handled
  std::int64_t cpu_ns = 0;          // the receiving process's CPU time over its receive loop (drain: from SIGCONT)
  std::uint64_t datagrams = 0;
  std::uint64_t kernel_drops = 0;   // driver: SO_RXQ_OVFL
  std::uint64_t lost_samples = 0;   // driver: the stream's exact count
  std::uint64_t samples = 0;
  std::uint64_t gap_blocks = 0;
  std::uint64_t blocks = 0;
  std::uint64_t malformed = 0;
  std::int32_t error = 0;           // 0 ok, else errno or -1
};

std::int64_t process_cpu_ns() noexcept {
  timespec t{};
  (void)::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<std::int64_t>(t.tv_sec) * core::kNsPerSecond + t.tv_nsec;
}

void sleep_ns(std::int64_t ns) noexcept {
  timespec t{static_cast<time_t>(ns / core::kNsPerSecond), static_cast<long>(ns % core::kNsPerSecond)};
  while (::nanosleep(&t, &t) != 0 && errno == EINTR) {
  }
}

void catch_stop_signal() noexcept {
  struct sigaction sa{};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a blocked recvmmsg returns EINTR
  (void)::sigaction(SIGUSR1, &sa, nullptr);
  struct sigaction cont{};
  cont.sa_handler = on_continue_signal;
  sigemptyset(&cont.sa_mask);
  cont.sa_flags = SA_RESTART;
  (void)::sigaction(SIGCONT, &cont, nullptr);
}

// CPU time since `cpu0`, or since SIGCONT resumed this process when it was stopped after cpu0.
std::int64_t cpu_since(std::int64_t cpu0) noexcept {
  const std::int64_t continued = g_continued_cpu_ns.load(std::memory_order_relaxed);  // set by this thread's handler
  return process_cpu_ns() - std::max(cpu0, continued);
}

int send_report(int fd, const RxReport& report) noexcept {
  return ::write(fd, &report, sizeof report) == static_cast<ssize_t>(sizeof report) ? kChildOk : kChildPipeFailed;
}

// The bare floor: a socket like the driver's (same buffer, same receive timeout, bound to
// 127.0.0.1), recvmmsg batches of kBatch into buffers of kUdpMaxDatagramBytes each, allocated once;
// counts datagrams, nothing else. Runs in the child.
int bare_child(int fd, std::uint64_t expect) {
  catch_stop_signal();
  RxReport report;
  const int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return kChildSetupFailed;
  const int want = static_cast<int>(kRcvbufBytes);
  if (::setsockopt(s, SOL_SOCKET, SO_RCVBUFFORCE, &want, sizeof want) != 0)
    (void)::setsockopt(s, SOL_SOCKET, SO_RCVBUF, &want, sizeof want);
  timeval timeout{};
  timeout.tv_usec = kReceiveTimeoutNs / 1000;
  (void)::setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_in local{};
  local.sin_family = AF_INET;
  local.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof local;
  if (::bind(s, reinterpret_cast<const sockaddr*>(&local), sizeof local) != 0 ||
      ::getsockname(s, reinterpret_cast<sockaddr*>(&local), &len) != 0)
    return kChildSetupFailed;
  Ready ready;
  ready.port = ntohs(local.sin_port);
  len = sizeof ready.rcvbuf;
  (void)::getsockopt(s, SOL_SOCKET, SO_RCVBUF, &ready.rcvbuf, &len);

  std::vector<std::byte> data(std::size_t{kBatch} * acq::kUdpMaxDatagramBytes);
  std::vector<iovec> iov(kBatch);
  std::vector<mmsghdr> msgs(kBatch);
  for (std::uint32_t i = 0; i < kBatch; ++i) {
    iov[i].iov_base = data.data() + std::size_t{i} * acq::kUdpMaxDatagramBytes;
    iov[i].iov_len = acq::kUdpMaxDatagramBytes;
    msgs[i].msg_hdr.msg_iov = &iov[i];
    msgs[i].msg_hdr.msg_iovlen = 1;
  }
  if (::write(fd, &ready, sizeof ready) != static_cast<ssize_t>(sizeof ready)) return kChildPipeFailed;

  const std::int64_t cpu0 = process_cpu_ns();
  const std::int64_t give_up_ns = core::monotonic_ns() + kChildTimeoutNs;
  while (report.datagrams < expect) {
    const bool stopping = g_stop.load(std::memory_order_relaxed);  // a flag: orders nothing
    const int n = ::recvmmsg(s, msgs.data(), kBatch, stopping ? MSG_DONTWAIT : MSG_WAITFORONE, nullptr);
    if (n > 0) {
      report.datagrams += static_cast<std::uint64_t>(n);
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      report.error = errno;
      break;
    }
    if (stopping && n <= 0 && errno != EINTR) break;  // stopped and drained
    if (core::monotonic_ns() > give_up_ns) {
      report.error = -1;
      break;
    }
  }
  report.end_ns = core::monotonic_ns();
  report.cpu_ns = cpu_since(cpu0);
  (void)::close(s);
  return send_report(fd, report);
}

// The driver: acq::run_udp on the arena's channel, bound to 127.0.0.1, port from the kernel
// (published in <part>.port), until `expect` datagrams. Runs in the child.
int driver_child(int fd, const std::string& arena_name, std::uint64_t expect) {
  catch_stop_signal();
  auto arena = core::Arena::open(arena_name);
  if (!arena) return kChildSetupFailed;
  acq::UdpOptions o;
  o.part = kPart;
  o.bind = "127.0.0.1";
  o.streams = {acq::UdpStream{1, kChannel}};
  o.rcvbuf_bytes = kRcvbufBytes;
  o.batch = kBatch;
  o.max_packets = expect == kUntilStopped ? 0 : expect;
  o.duration_s = static_cast<double>(kChildTimeoutNs) / 1e9;
  const std::int64_t cpu0 = process_cpu_ns();
  auto r = acq::run_udp(*arena, o, g_stop);
  RxReport report;
  report.end_ns = core::monotonic_ns();
  report.cpu_ns = cpu_since(cpu0);
  if (!r) {
    std::fprintf(stderr, "weir bench udp: %s\n", r.error().what.c_str());
    report.error = -1;
  } else {
    report.datagrams = r->datagrams;
    report.kernel_drops = r->kernel_drops;
    report.malformed = r->malformed_total;
    if (!r->streams.empty()) {
      const acq::StreamCounters& c = r->streams[0].counters;
      report.lost_samples = c.lost_samples;
      report.samples = c.samples;
      report.gap_blocks = c.gap_blocks;
      report.blocks = c.blocks_published;
    }
  }
  arena->close();
  return send_report(fd, report);
}

// A UDP socket's queue in /proc/net/udp: bytes held (the sum of the datagrams' buffer cost) and drops.
struct SocketQueue {
  std::uint64_t rx_bytes = 0;
  std::uint64_t drops = 0;
  bool found = false;
};

SocketQueue socket_queue(std::uint16_t port) {
  SocketQueue q;
  std::ifstream in("/proc/net/udp");
  std::string line;
  std::getline(in, line);  // the column names
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string word; words >> word;) w.push_back(word);
    if (w.size() < 13) continue;
    const auto colon = w[1].find(':');
    const auto queues = w[4].find(':');
    if (colon == std::string::npos || queues == std::string::npos) continue;
    if (std::stoul(w[1].substr(colon + 1), nullptr, 16) != port) continue;
    q.rx_bytes = std::stoull(w[4].substr(queues + 1), nullptr, 16);
    q.drops = std::stoull(w.back());
    q.found = true;
  }
  return q;
}

// One receive by one child: what the parent measured and what the child said.
struct Sample {
  RxReport rx;
  acq::UdpGenReport gen;
  double seconds = 0;      // drain: continue -> last datagram; live: first send -> last datagram
  std::uint64_t queued_bytes = 0;  // drain: the socket's queue when the child was continued
  std::int64_t rcvbuf = 0;         // bare: the buffer the kernel granted
};

struct Suite {
  Config config;
  std::string arena_name;
  core::Arena* arena = nullptr;
  CpuPlan cpus;
  Results results;
  Fields fields;
};

acq::UdpGenOptions sender(std::uint16_t port, std::uint32_t payload, std::uint64_t packets, bool loss, std::uint64_t seed) {
  acq::UdpGenOptions g;
  g.dest = "127.0.0.1";
  g.port = port;
  g.format = acq::PacketFormat::vita49;
  g.dtype = core::Dtype::i16;
  g.rate_hz = kRateHz;
  g.packet_samples = payload / kSampleBytes;
  g.packets = packets;
  g.fast = true;
  g.batch = kBatch;
  g.seed = seed;
  if (loss) {
    g.loss = kLoss;
    g.reorder = kReorder;
  }
  return g;
}

// Forks a receiver, feeds it `packets` datagrams of `payload` bytes, collects its report. Drain:
// the receiver is stopped while its socket fills, then given the stop flag and continued, so it
// takes exactly what the socket holds and ends. Live: it ends after `packets` datagrams (or, when
// the kernel dropped some, on the stop flag once it has the rest).
core::Result<Sample> receive_once(Suite& s, Receiver receiver, Feed feed, std::uint32_t payload, std::uint64_t packets,
                                  bool loss, std::uint64_t seed) {
  const auto failed = [](const std::string& why) { return core::fail(core::Errc::io_error, why); };
  core::KvStore kv(*s.arena);
  const std::string port_key = std::string(kPart) + ".port";
  if (receiver == Receiver::driver && kv.set_u64(port_key, 0) != core::KvStatus::ok)
    return failed("cannot reset " + port_key);
  const std::string arena_name = s.arena_name;
  Sample sample;
  auto child = spawn_reader(s.cpus, 0, [&](int fd) {
    const std::uint64_t expect = feed == Feed::drain ? kUntilStopped : packets;
    return receiver == Receiver::bare ? bare_child(fd, expect) : driver_child(fd, arena_name, expect);
  });
  if (child == nullptr) return failed("pipe or fork failed");
  std::uint16_t port = 0;
  if (receiver == Receiver::bare) {
    Ready ready;
    if (!child->read_exact(&ready, sizeof ready, kChildReadyTimeoutNs)) return failed("the bare receiver did not start");
    port = static_cast<std::uint16_t>(ready.port);
    sample.rcvbuf = ready.rcvbuf;
  } else {
    const std::int64_t deadline = core::monotonic_ns() + kChildReadyTimeoutNs;
    int status = 0;
    while (port == 0) {
      std::uint64_t bits = 0;
      core::ValueType type{};
      if (kv.get_scalar(port_key, bits, type) == core::KvStatus::ok) port = static_cast<std::uint16_t>(bits);
      if (port != 0) break;
      if (!child->running(status)) return failed(exit_text(status, "driver child"));
      if (core::monotonic_ns() > deadline) return failed("the driver did not bind its socket");
      sleep_ns(kSettleNs / 20);
    }
  }
  sleep_ns(kSettleNs);  // the child is now blocked in recvmmsg

  const std::atomic<bool> never{false};
  std::int64_t start_ns = 0;
  if (feed == Feed::drain) {
    if (::kill(child->pid(), SIGSTOP) != 0) return failed("SIGSTOP the receiver");
    int status = 0;
    if (::waitpid(child->pid(), &status, WUNTRACED) != child->pid() || !WIFSTOPPED(status))
      return failed("the receiver did not stop");
    auto gen = acq::run_udpgen(sender(port, payload, packets, loss, seed), never);
    if (!gen) return failed("udpgen: " + gen.error().what);
    sample.gen = *gen;
    const SocketQueue q = socket_queue(port);
    if (!q.found) return failed("port " + std::to_string(port) + " is not in /proc/net/udp");
    if (q.drops != 0)
      return failed("a fill of " + std::to_string(packets) + " datagrams overflowed the receive buffer (" +
                    std::to_string(q.drops) + " dropped)");
    sample.queued_bytes = q.rx_bytes;
    // Stopped and continued: the child takes what its socket holds and ends (the stop flag's path).
    if (::kill(child->pid(), SIGUSR1) != 0) return failed("SIGUSR1 the receiver");
    start_ns = core::monotonic_ns();
    if (::kill(child->pid(), SIGCONT) != 0) return failed("SIGCONT the receiver");
  } else {
    start_ns = core::monotonic_ns();
    auto gen = acq::run_udpgen(sender(port, payload, packets, loss, seed), never);
    if (!gen) return failed("udpgen: " + gen.error().what);
    sample.gen = *gen;
    // Datagrams the kernel dropped never come: stop the receiver once it has the rest.
    if (socket_queue(port).drops != 0) (void)::kill(child->pid(), SIGUSR1);
  }
  if (!child->read_exact(&sample.rx, sizeof sample.rx, kChildTimeoutNs + kChildReadyTimeoutNs))
    return failed("the receiver sent no report");
  int status = 0;
  if (!child->wait_exit(kChildExitTimeoutNs, status)) return failed("the receiver did not exit");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != kChildOk) return failed(exit_text(status, "receiver child"));
  if (sample.rx.error != 0) return failed("the receiver failed (" + std::to_string(sample.rx.error) + ")");
  sample.seconds = static_cast<double>(sample.rx.end_ns - start_ns) / 1e9;
  return sample;
}

std::string size_name(std::uint32_t payload) { return std::to_string(payload / 1024) + "KiB"; }

Row row_of(std::string name, std::vector<double> values) {
  Row row;
  row.name = std::move(name);
  row.unit = kUnitPacketsPerS;
  row.stats = summarize(std::move(values));
  return row;
}

// Datagrams of one drain fill: what the granted buffer holds, learnt from kCalibratePackets queued.
core::Result<std::uint64_t> fill_size(Suite& s, std::uint32_t payload) {
  auto probe = receive_once(s, Receiver::bare, Feed::drain, payload, kCalibratePackets, false, 1);
  if (!probe) return tl::make_unexpected(probe.error());
  const double per_datagram = static_cast<double>(probe->queued_bytes) / static_cast<double>(kCalibratePackets);
  // The buffer both receivers get: the kernel's grant for kRcvbufBytes.
  const auto granted = static_cast<double>(probe->rcvbuf);
  auto n = static_cast<std::uint64_t>(kFillFraction * granted / std::max(per_datagram, 1.0));
  n = std::min(n, kMaxFill);
  if (s.config.quick) n /= kQuickFillDivisor;
  s.fields.add("udp.drain." + size_name(payload), "buffer_bytes_per_datagram", per_datagram, 0);
  return std::max<std::uint64_t>(n, kCalibratePackets);
}

struct Totals {
  std::uint64_t datagrams = 0;
  double seconds = 0;
  std::int64_t cpu_ns = 0;
  void add(const Sample& x) {
    datagrams += x.rx.datagrams;
    seconds += x.seconds;
    cpu_ns += x.rx.cpu_ns;
  }
  [[nodiscard]] double rate() const { return seconds > 0 ? static_cast<double>(datagrams) / seconds : 0; }
  [[nodiscard]] double cpu_rate() const {
    return cpu_ns > 0 ? static_cast<double>(datagrams) * 1e9 / static_cast<double>(cpu_ns) : 0;
  }
};

void run_drain(Suite& s, std::uint32_t payload) {
  const std::string size = size_name(payload);
  const std::string bare_name = "base.udp.drain." + size, driver_name = "udp.drain." + size,
                    loss_name = "udp.drain.loss." + size;
  auto fill = fill_size(s, payload);
  if (!fill) return s.results.note_error(driver_name, fill.error().what);
  const int fills = s.config.quick ? 1 : kFillsPerRep;
  std::vector<double> bare_rates, driver_rates, loss_rates, bare_cpu_rates, driver_cpu_rates;
  std::uint64_t lost_total = 0, dropped_total = 0, gap_blocks = 0, inexact = 0, drops = 0;
  std::uint64_t seed = 1;
  for (int rep = 0; rep < s.config.reps; ++rep) {
    Totals bare, driver, lossy;
    for (int f = 0; f < fills; ++f) {
      // Three receivers in turn, the order rotated every fill, so a change of load reaches all alike.
      for (int k = 0; k < 3; ++k) {
        const int which = (k + f + rep) % 3;
        const bool with_loss = which == 2;
        auto x = receive_once(s, which == 0 ? Receiver::bare : Receiver::driver, Feed::drain, payload, *fill,
                              with_loss, seed++);
        if (!x) return s.results.note_error(which == 0 ? bare_name : which == 1 ? driver_name : loss_name,
                                            x.error().what);
        const std::uint64_t sent = x->gen.datagrams;
        if (which == 0) {
          bare.add(*x);
        } else if (which == 1) {
          driver.add(*x);
        } else {
          lossy.add(*x);
        }
        drops += x->rx.kernel_drops;
        if (which != 0 && x->rx.datagrams != sent) ++inexact;
        if (which == 2) {
          lost_total += x->rx.lost_samples;
          dropped_total += x->gen.samples_dropped;
          gap_blocks += x->rx.gap_blocks;
          if (x->rx.lost_samples != x->gen.samples_dropped) {
            ++inexact;
            std::fprintf(stderr, "weir bench udp: %s: lost %llu samples, the generator dropped %llu\n",
                         loss_name.c_str(), static_cast<unsigned long long>(x->rx.lost_samples),
                         static_cast<unsigned long long>(x->gen.samples_dropped));
          }
        } else if (which == 1 && x->rx.lost_samples != 0) {
          ++inexact;
        }
      }
    }
    bare_rates.push_back(bare.rate());
    driver_rates.push_back(driver.rate());
    loss_rates.push_back(lossy.rate());
    bare_cpu_rates.push_back(bare.cpu_rate());
    driver_cpu_rates.push_back(driver.cpu_rate());
  }
  s.results.add_row(row_of(bare_name, bare_rates));
  s.results.add_row(row_of(driver_name, driver_rates));
  s.results.add_row(row_of(loss_name, loss_rates));
  s.results.add_row(row_of("base.udp.drain.cpu." + size, bare_cpu_rates));
  s.results.add_row(row_of("udp.drain.cpu." + size, driver_cpu_rates));
  s.fields.add(driver_name, "fill_datagrams", *fill);
  s.fields.add(driver_name, "fills_per_rep", static_cast<std::uint64_t>(fills));
  s.fields.add(driver_name, "mb_per_s",
               s.results.find(driver_name)->stats.median_ns * static_cast<double>(payload) / 1e6, 0);
  s.fields.add(bare_name, "mb_per_s", s.results.find(bare_name)->stats.median_ns * static_cast<double>(payload) / 1e6, 0);
  s.fields.add(loss_name, "lost_samples", lost_total);
  s.fields.add(loss_name, "dropped_samples", dropped_total);
  s.fields.add(loss_name, "gap_blocks", gap_blocks);
  s.fields.add(loss_name, "kernel_drops", drops);
  s.fields.add_bool(loss_name, "exact", inexact == 0 && drops == 0);
  if (inexact != 0 || drops != 0)
    s.results.note_error(loss_name, std::to_string(inexact) + " fills with inexact counts, " + std::to_string(drops) +
                                        " kernel drops");
}

void run_live(Suite& s, std::uint32_t payload, std::uint64_t packets) {
  const std::string size = size_name(payload);
  const std::string bare_name = "base.udp.live." + size, driver_name = "udp.live." + size;
  if (s.config.quick) packets /= 10;
  std::vector<double> bare_rates, driver_rates, sender_rates, bare_cpu, driver_cpu;
  std::uint64_t bare_drops = 0, driver_drops = 0, seed = 1000;
  for (int rep = 0; rep < s.config.reps; ++rep) {
    for (int k = 0; k < 2; ++k) {
      const bool bare = (k + rep) % 2 == 0;
      auto x = receive_once(s, bare ? Receiver::bare : Receiver::driver, Feed::live, payload, packets, false, seed++);
      if (!x) return s.results.note_error(bare ? bare_name : driver_name, x.error().what);
      const double rate = x->seconds > 0 ? static_cast<double>(x->rx.datagrams) / x->seconds : 0;
      const double cpu = x->rx.datagrams > 0
                             ? static_cast<double>(x->rx.cpu_ns) / static_cast<double>(x->rx.datagrams)
                             : 0;
      (bare ? bare_rates : driver_rates).push_back(rate);
      (bare ? bare_cpu : driver_cpu).push_back(cpu);
      (bare ? bare_drops : driver_drops) += x->gen.datagrams - x->rx.datagrams;
      sender_rates.push_back(x->gen.packets_per_s);
    }
  }
  s.results.add_row(row_of(bare_name, bare_rates));
  s.results.add_row(row_of(driver_name, driver_rates));
  s.fields.add(bare_name, "sender_packets_per_s", summarize(sender_rates).median_ns, 0);
  s.fields.add(bare_name, "cpu_ns_per_packet", summarize(bare_cpu).median_ns, 0);
  s.fields.add(driver_name, "cpu_ns_per_packet", summarize(driver_cpu).median_ns, 0);
  s.fields.add(bare_name, "not_received", bare_drops);
  s.fields.add(driver_name, "not_received", driver_drops);
  const double bare_cpu_median = summarize(bare_cpu).median_ns;
  if (bare_cpu_median > 0) s.fields.add(driver_name, "cpu_vs_bare", summarize(driver_cpu).median_ns / bare_cpu_median, 2);
}

}  // namespace

int run_udp_suite(const std::vector<std::string>& args) {
  int exit_code = kExitOk;
  const auto maybe_config = parse_suite_options(args, kUsage, exit_code);
  if (!maybe_config) return exit_code;
  warn_if_unoptimised();
  Suite s;
  s.config = *maybe_config;
  if (!s.cpus.pinned())
    std::fputs("weir bench udp: fewer than two CPUs allowed: sender and receiver share one\n", stderr);
  s.arena_name = "bench.udp." + std::to_string(::getpid());
  core::ChannelSpec spec;
  spec.name = kChannel;
  spec.dtype = core::Dtype::i16;
  spec.rate_hz = kRateHz;
  spec.samples_per_block = kBlockSamples;
  spec.ring_blocks = kRingBlocks;
  core::ArenaOptions options;
  options.vector_dim = 0;
  options.channel_data_bytes = core::channel_footprint(spec) * 2;
  const bool ran = run_in_arena(s.arena_name, options, [&](core::Arena& arena) {
    s.arena = &arena;
    if (auto made = core::create_channel(arena, spec); !made)
      return s.results.note_error("udp", made.error().what);
    for (const std::uint32_t payload : kPayloadBytes) run_drain(s, payload);
    for (std::size_t i = 0; i < std::size(kPayloadBytes); ++i) run_live(s, kPayloadBytes[i], kLivePackets[i]);
  });
  if (!ran) return kExitFailed;
  std::vector<AtLeast> comparisons;
  for (const std::uint32_t payload : kPayloadBytes) {
    const std::string size = size_name(payload);
    comparisons.push_back({"udp.drain." + size, "base.udp.drain." + size, kTarget});
    comparisons.push_back({"udp.drain.loss." + size, "base.udp.drain." + size, 0});
    comparisons.push_back({"udp.drain.cpu." + size, "base.udp.drain.cpu." + size, kTarget});
    comparisons.push_back({"udp.live." + size, "base.udp.live." + size, 0});
  }
  compare_at_least(s.results, comparisons);
  char title[256];
  std::snprintf(title, sizeof title,
                "weir bench udp: datagrams/s received over loopback (higher is better), median/min/max of %d "
                "repetitions%s",
                s.config.reps, s.config.quick ? " (--quick)" : "");
  print_report(s.results.rows(), s.fields, s.config.json, title);
  return s.results.failures() != 0 ? kExitFailed : kExitOk;
}

}  // namespace weir::bench
