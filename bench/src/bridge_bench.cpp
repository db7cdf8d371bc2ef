// weir_bridge_bench: the network bridge against a bare ZeroMQ PUSH/PULL of the same bytes over the
// same link (tcp://127.0.0.1) in the same run. Throughput: a writer fills N blocks into a channel,
// `weir bridge send` logic follows it (lossless), `recv` publishes into a second arena, and a
// lossless far reader touches every cache line of every block; the bare floor is a producer filling
// ZeroMQ messages of the same size and a consumer touching them. Plain TCP and CURVE. Latency: blocks
// paced at a fixed rate, from the writer's publish to the far reader's wake-up, against the bare
// pair's send-to-receive. Medians of --reps runs.
// Usage: weir_bridge_bench [--reps N] [--quick] [--only throughput|latency] [--block BYTES] [--cases bare,plain,curve]
#include <zmq.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <unistd.h>

#include "weir/bridge/curve_keys.hpp"
#include "weir/bridge/receiver.hpp"
#include "weir/bridge/sender.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/clock.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/signals.hpp"

namespace {

using namespace weir;

constexpr std::uint64_t kCacheLine = 64;
constexpr std::int64_t kWaitNs = 50'000'000;
constexpr std::uint32_t kLatencyBlocks = 2000;   // paced blocks per latency run
constexpr double kLatencyRateHz = 1000;          // blocks per second while measuring latency

volatile std::uint64_t g_sink = 0;  // where the consumers' touches go, so they are not optimised away

struct Run {
  double gbps = 0;
  double p50_us = 0, p99_us = 0;
  std::uint64_t lost = 0;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double percentile(std::vector<double>& v, double p) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

void fill(std::byte* data, std::size_t bytes, std::uint64_t stamp) {
  for (std::size_t off = 0; off + sizeof stamp <= bytes; off += kCacheLine) std::memcpy(data + off, &stamp, sizeof stamp);
}

std::uint64_t touch(const std::byte* data, std::size_t bytes) {
  std::uint64_t sum = 0;
  for (std::size_t off = 0; off + 8 <= bytes; off += kCacheLine) {
    std::uint64_t v = 0;
    std::memcpy(&v, data + off, sizeof v);
    sum += v;
  }
  return sum;
}

int free_port() {
  static int next = 47000 + static_cast<int>(::getpid() % 1000) * 2;
  return next++;
}

// ---- bare ZeroMQ PUSH/PULL ----------------------------------------------------------------------

Run bare(std::size_t bytes, std::uint64_t blocks, bool pace) {
  void* ctx = zmq_ctx_new();
  void* pull = zmq_socket(ctx, ZMQ_PULL);
  void* push = zmq_socket(ctx, ZMQ_PUSH);
  const int hwm = 1000, linger = 0;
  zmq_setsockopt(pull, ZMQ_RCVHWM, &hwm, sizeof hwm);
  zmq_setsockopt(push, ZMQ_SNDHWM, &hwm, sizeof hwm);
  zmq_setsockopt(push, ZMQ_LINGER, &linger, sizeof linger);
  zmq_setsockopt(pull, ZMQ_LINGER, &linger, sizeof linger);
  // The kernel picks the port as it binds: a port found free first may be taken before the bind.
  char ep[256] = {};
  std::size_t ep_bytes = sizeof ep;
  if (zmq_bind(pull, "tcp://127.0.0.1:*") != 0 || zmq_getsockopt(pull, ZMQ_LAST_ENDPOINT, ep, &ep_bytes) != 0 ||
      zmq_connect(push, ep) != 0) {
    std::fprintf(stderr, "bare PUSH/PULL: %s\n", zmq_strerror(zmq_errno()));
    std::exit(1);
  }
  std::vector<double> lat_us;
  std::uint64_t sink = 0;
  std::thread consumer([&] {
    for (std::uint64_t i = 0; i < blocks; ++i) {
      zmq_msg_t m;
      zmq_msg_init(&m);
      zmq_msg_recv(&m, pull, 0);
      const auto* d = static_cast<const std::byte*>(zmq_msg_data(&m));
      if (pace) {
        std::int64_t sent = 0;
        std::memcpy(&sent, d, sizeof sent);
        lat_us.push_back(static_cast<double>(core::realtime_ns() - sent) / 1e3);
      }
      sink += touch(d, zmq_msg_size(&m));
      zmq_msg_close(&m);
    }
  });
  const std::int64_t t0 = core::monotonic_ns();
  for (std::uint64_t i = 0; i < blocks; ++i) {
    if (pace) std::this_thread::sleep_until(std::chrono::steady_clock::time_point(std::chrono::nanoseconds(
                  t0 + static_cast<std::int64_t>(static_cast<double>(i) * 1e9 / kLatencyRateHz))));
    zmq_msg_t m;
    zmq_msg_init_size(&m, bytes);
    fill(static_cast<std::byte*>(zmq_msg_data(&m)), bytes, static_cast<std::uint64_t>(core::realtime_ns()));
    zmq_msg_send(&m, push, 0);
  }
  consumer.join();
  const double s = static_cast<double>(core::monotonic_ns() - t0) / 1e9;
  zmq_close(push);
  zmq_close(pull);
  zmq_ctx_term(ctx);
  Run r;
  r.gbps = static_cast<double>(bytes) * static_cast<double>(blocks) / s / 1e9;
  if (pace) {
    r.p50_us = percentile(lat_us, 0.5);
    r.p99_us = percentile(lat_us, 0.99);
  }
  g_sink = g_sink + sink;  // keeps the touches
  return r;
}

// ---- the bridge ---------------------------------------------------------------------------------

std::string link_state(const core::Arena& arena) {
  core::KvStore kv(arena);
  char buf[8] = {};
  core::ValueInfo info;
  if (kv.get("bridge.bench-out.link", std::as_writable_bytes(std::span(buf)), info) != core::KvStatus::ok) return "";
  return std::string(buf, info.length);
}

Run bridged(std::size_t bytes, std::uint64_t blocks, bool pace, const std::string& keys) {
  const std::string tag = fmt::format("wbb-{}-{}", ::getpid(), free_port());
  core::ArenaOptions ao;
  ao.channel_data_bytes = 64ULL << 20;
  auto near = core::Arena::create(tag + "-near", ao);
  auto far = core::Arena::create(tag + "-far", ao);
  if (!near || !far) {
    fmt::print(stderr, "arena: {}\n", !near ? near.error().what : far.error().what);
    std::exit(1);
  }
  core::ChannelSpec spec;
  spec.name = "bench";
  spec.dtype = core::Dtype::u8;
  spec.rate_hz = 1e9;
  spec.samples_per_block = static_cast<std::uint32_t>(bytes);
  spec.ring_blocks = bytes <= 4096 ? 1024 : 128;
  spec.wait_timeout_ns = 5'000'000'000;
  (void)core::create_channel(*near, spec);
  const std::string ep = fmt::format("tcp://127.0.0.1:{}", free_port());
  bridge::ReceiverOptions ro;
  ro.name = "bench-in";
  ro.endpoint = ep;
  bridge::SenderOptions so;
  so.name = "bench-out";
  so.patterns = {"bench"};
  so.endpoint = ep;
  so.lossless = true;
  if (keys.empty()) {
    ro.security.plain = so.security.plain = true;
  } else {
    ro.security = {false, keys + "/recv.key", "", keys + "/allowed"};
    so.security = {false, keys + "/send.key", keys + "/recv.pub", ""};
  }
  std::atomic<bool> stop_recv{false}, stop_send{false}, recv_failed{false};
  std::thread receiver([&] {
    if (auto r = bridge::run_receiver(*far, ro, stop_recv); !r) {
      fmt::print(stderr, "bridge recv: {}\n", r.error().what);
      recv_failed = true;
    }
  });
  std::thread sender([&] { (void)bridge::run_sender(*near, so, stop_send); });
  while (link_state(*near) != "up" && !recv_failed) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  if (recv_failed) {  // the port was taken: try again on the next one
    stop_send = true;
    sender.join();
    receiver.join();
    (void)core::Arena::remove(tag + "-near");
    (void)core::Arena::remove(tag + "-far");
    return bridged(bytes, blocks, pace, keys);
  }

  std::vector<double> lat_us;
  std::uint64_t read = 0, lost = 0, sink = 0;
  std::atomic<bool> reader_ready{false};
  std::thread far_reader([&] {
    std::optional<core::ChannelReader> r;
    auto watcher = core::Watcher::create(*far);
    while (!r) {
      if (auto o = core::ChannelReader::open(*far, "bench", core::ConsumerPolicy::lossless, "bench", core::StartAt::sequence, 0))
        r.emplace(std::move(*o));
      else
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    (void)watcher->subscribe_channel("bench");
    reader_ready = true;
    while (read + lost < blocks) {
      core::BlockView v;
      std::uint64_t n = 0;
      switch (r->next(v, n)) {
        case core::NextStatus::ok:
          if (pace) lat_us.push_back(static_cast<double>(core::realtime_ns() - static_cast<std::int64_t>(v.realtime_ns)) / 1e3);
          sink += touch(v.data, std::size_t{v.samples});
          if (r->done(v)) ++read; else ++lost;
          break;
        case core::NextStatus::lost:
          lost += n;
          break;
        case core::NextStatus::empty:
          (void)watcher->wait(kWaitNs);
          (void)watcher->drain([](const core::Change&) {});
          break;
      }
    }
  });
  // The first block makes the far channel; the reader registers before the timed run.
  auto writer = core::ChannelWriter::open(*near, "bench");
  std::span<std::byte> out;
  if (writer->claim(out) == core::ClaimStatus::ok) {
    fill(out.data(), bytes, 0);
    writer->publish(static_cast<std::uint32_t>(bytes));
  }
  while (!reader_ready) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const std::int64_t t0 = core::monotonic_ns();
  for (std::uint64_t i = 1; i < blocks; ++i) {
    if (pace) std::this_thread::sleep_until(std::chrono::steady_clock::time_point(std::chrono::nanoseconds(
                  t0 + static_cast<std::int64_t>(static_cast<double>(i) * 1e9 / kLatencyRateHz))));
    if (writer->claim(out) != core::ClaimStatus::ok) continue;
    fill(out.data(), bytes, i);
    writer->publish(static_cast<std::uint32_t>(bytes));
  }
  far_reader.join();
  const double s = static_cast<double>(core::monotonic_ns() - t0) / 1e9;
  stop_send = true;
  sender.join();
  stop_recv = true;
  receiver.join();
  (void)core::Arena::remove(tag + "-near");
  (void)core::Arena::remove(tag + "-far");
  Run r;
  r.gbps = static_cast<double>(bytes) * static_cast<double>(blocks - 1) / s / 1e9;
  r.lost = lost;
  g_sink = g_sink + sink;
  if (pace && !lat_us.empty()) {
    lat_us.erase(lat_us.begin());  // the block before the clock started
    r.p50_us = percentile(lat_us, 0.5);
    r.p99_us = percentile(lat_us, 0.99);
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 5;
  bool quick = false;
  std::string only, cases = "bare,plain,curve";
  std::vector<std::size_t> sizes{4096, 65536};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
    if (a == "--quick") quick = true;
    if (a == "--only" && i + 1 < argc) only = argv[++i];
    if (a == "--block" && i + 1 < argc) sizes = {static_cast<std::size_t>(std::max(64, std::atoi(argv[++i])))};
    if (a == "--cases" && i + 1 < argc) cases = argv[++i];
  }
  const auto want = [&](const char* c) { return cases.find(c) != std::string::npos; };
  const std::string keys = (std::filesystem::temp_directory_path() / fmt::format("weir-bridge-bench-{}", ::getpid())).string();
  std::filesystem::create_directories(keys + "/allowed");
  if (!bridge::write_keypair(keys + "/recv") || !bridge::write_keypair(keys + "/send")) {
    fmt::print(stderr, "keygen failed\n");
    return 1;
  }
  std::filesystem::copy_file(keys + "/send.pub", keys + "/allowed/send.pub");

  fmt::print("bridge over tcp://127.0.0.1, medians of {} runs (GB/s; ratio = bridge / bare PUSH/PULL of the same bytes)\n", reps);
  fmt::print("| block | bare PUSH/PULL | bridge plain | ratio | bridge CURVE | ratio | lost |\n|---|---|---|---|---|---|---|\n");
  for (const std::size_t bytes : sizes) {
    if (only == "latency") break;
    const std::uint64_t blocks = (quick ? 16ULL << 20 : 256ULL << 20) / bytes;
    std::vector<double> b, p, c, rp, rc;
    std::uint64_t lost = 0;
    for (int i = 0; i < reps; ++i) {
      const Run rb = want("bare") ? bare(bytes, blocks, false) : Run{1, 0, 0, 0};
      const Run rpl = want("plain") ? bridged(bytes, blocks, false, "") : Run{};
      const Run rcv = want("curve") ? bridged(bytes, blocks, false, keys) : Run{};
      b.push_back(rb.gbps);
      p.push_back(rpl.gbps);
      c.push_back(rcv.gbps);
      rp.push_back(rpl.gbps / rb.gbps);
      rc.push_back(rcv.gbps / rb.gbps);
      lost += rpl.lost + rcv.lost;
    }
    fmt::print("| {} KiB | {:.3f} | {:.3f} | {:.2f} | {:.3f} | {:.2f} | {} |\n", bytes / 1024, median(b), median(p), median(rp),
               median(c), median(rc), lost);
    std::fflush(stdout);
  }
  fmt::print("\nlatency, {} blocks at {} blocks/s: write to far read (bridge) vs send to receive (bare), us\n",
             quick ? 200 : kLatencyBlocks, kLatencyRateHz);
  fmt::print("| block | bare p50 / p99 | bridge plain p50 / p99 | bridge CURVE p50 / p99 |\n|---|---|---|---|\n");
  for (const std::size_t bytes : sizes) {
    if (only == "throughput") break;
    const std::uint64_t blocks = quick ? 200 : kLatencyBlocks;
    std::vector<double> b50, b99, p50, p99, c50, c99;
    for (int i = 0; i < reps; ++i) {
      const Run rb = want("bare") ? bare(bytes, blocks, true) : Run{};
      const Run rpl = want("plain") ? bridged(bytes, blocks, true, "") : Run{};
      const Run rcv = want("curve") ? bridged(bytes, blocks, true, keys) : Run{};
      b50.push_back(rb.p50_us);
      b99.push_back(rb.p99_us);
      p50.push_back(rpl.p50_us);
      p99.push_back(rpl.p99_us);
      c50.push_back(rcv.p50_us);
      c99.push_back(rcv.p99_us);
    }
    fmt::print("| {} KiB | {:.0f} / {:.0f} | {:.0f} / {:.0f} | {:.0f} / {:.0f} |\n", bytes / 1024, median(b50), median(b99),
               median(p50), median(p99), median(c50), median(c99));
    std::fflush(stdout);
  }
  std::filesystem::remove_all(keys);
  return 0;
}
