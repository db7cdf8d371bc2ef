// A channel writer for the Python tests: i64 samples that count the channel's stream (sample k of
// the stream holds k), so a reader can check every sample it gets. Options:
//   counter_writer ARENA CHANNEL --block N --ring R --blocks B [--wait-lossless] [--sleep-us U]
//                  [--kill-mid-block]
// --wait-lossless waits (up to 30 s) until a lossless consumer registered before writing;
// --kill-mid-block claims block B after the B published ones, fills half of it, and SIGKILLs itself.
#include <signal.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>

#include "weir/core/arena.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/clock.hpp"

namespace core = weir::core;

namespace {

constexpr std::int64_t kWaitLosslessNs = 30'000'000'000;  // the Python side registers well before this
constexpr useconds_t kPollUs = 1000;

int usage(const char* what) {
  std::fprintf(stderr, "counter_writer: %s\n", what);
  return 2;
}

bool has_lossless(const core::Arena& arena, const std::string& channel) {
  for (const core::ChannelInfo& c : core::list_channels(arena)) {
    if (c.name != channel) continue;
    for (const core::ConsumerInfo& k : c.consumers)
      if (k.alive && k.policy == core::ConsumerPolicy::lossless) return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return usage("usage: counter_writer ARENA CHANNEL [options]");
  const std::string where = argv[1];
  const std::string channel = argv[2];
  std::uint32_t block = 1024, ring = 64;
  std::uint64_t blocks = 100, sleep_us = 0;
  bool wait_lossless = false, kill_mid_block = false;
  for (int i = 3; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() { return i + 1 < argc ? std::strtoull(argv[++i], nullptr, 10) : 0ULL; };
    if (a == "--block") block = static_cast<std::uint32_t>(value());
    else if (a == "--ring") ring = static_cast<std::uint32_t>(value());
    else if (a == "--blocks") blocks = value();
    else if (a == "--sleep-us") sleep_us = value();
    else if (a == "--wait-lossless") wait_lossless = true;
    else if (a == "--kill-mid-block") kill_mid_block = true;
    else return usage(("unknown option " + a).c_str());
  }
  auto arena = core::Arena::open(where);
  if (!arena) return usage(arena.error().what.c_str());
  if (!core::find_channel(*arena, channel)) {
    core::ChannelSpec spec;
    spec.name = channel;
    spec.dtype = core::Dtype::i64;
    spec.rate_hz = 1e6;
    spec.units = "counts";
    spec.labels = {"counter"};
    spec.samples_per_block = block;
    spec.ring_blocks = ring;
    if (auto made = core::create_channel(*arena, spec); !made) return usage(made.error().what.c_str());
  }
  auto writer = core::ChannelWriter::open(*arena, channel);
  if (!writer) return usage(writer.error().what.c_str());
  std::printf("ready\n");
  std::fflush(stdout);
  if (wait_lossless) {
    const std::int64_t deadline = core::monotonic_ns() + kWaitLosslessNs;
    while (!has_lossless(*arena, channel)) {
      if (core::monotonic_ns() > deadline) return usage("no lossless consumer registered");
      usleep(kPollUs);
    }
  }
  const std::uint32_t n = writer->samples_per_block();
  std::uint64_t next = 0, published = 0;
  for (std::uint64_t b = 0; b < blocks; ++b) {
    std::span<std::byte> out;
    if (writer->claim(out) != core::ClaimStatus::ok) continue;  // dropped at the source: counted there
    auto* samples = reinterpret_cast<std::int64_t*>(out.data());
    for (std::uint32_t i = 0; i < n; ++i) samples[i] = static_cast<std::int64_t>(next + i);
    next += n;
    writer->publish(n);
    ++published;
    if (sleep_us > 0) usleep(static_cast<useconds_t>(sleep_us));
  }
  if (kill_mid_block) {
    std::span<std::byte> out;
    if (writer->claim(out) == core::ClaimStatus::ok) {
      auto* samples = reinterpret_cast<std::int64_t*>(out.data());
      for (std::uint32_t i = 0; i < n / 2; ++i) samples[i] = -1;  // a torn block: half written, never published
    }
    std::printf("killing\n");
    std::fflush(stdout);
    raise(SIGKILL);
  }
  std::printf("published %llu\n", static_cast<unsigned long long>(published));
  return 0;
}
