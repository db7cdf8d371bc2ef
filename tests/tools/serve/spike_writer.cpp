// A channel writer for the serve tests: `spike_writer ARENA CHANNEL BLOCKS SPIKE_AT VALUE [GAP_AFTER]`
// creates CHANNEL (f32, 1 MS/s, 4096-sample blocks) and publishes BLOCKS blocks of zeros in which
// sample SPIKE_AT alone holds VALUE, and a gap block (skip) after the first GAP_AFTER of them, prints
// "done SAMPLES" and keeps the channel until stdin closes.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>

#include "weir/core/arena.hpp"
#include "weir/core/channel.hpp"

namespace core = weir::core;

int main(int argc, char** argv) {
  if (argc != 6 && argc != 7) {
    std::fprintf(stderr, "usage: spike_writer ARENA CHANNEL BLOCKS SPIKE_AT VALUE [GAP_AFTER]\n");
    return 2;
  }
  auto arena = core::Arena::open(argv[1]);
  if (!arena) {
    std::fprintf(stderr, "spike_writer: %s\n", arena.error().what.c_str());
    return 1;
  }
  core::ChannelSpec spec;
  spec.name = argv[2];
  spec.rate_hz = 1e6;
  spec.units = "V";
  spec.samples_per_block = 4096;
  spec.ring_blocks = 64;
  if (auto made = core::create_channel(*arena, spec); !made) {
    std::fprintf(stderr, "spike_writer: %s\n", made.error().what.c_str());
    return 1;
  }
  auto writer = core::ChannelWriter::open(*arena, spec.name);
  if (!writer) {
    std::fprintf(stderr, "spike_writer: %s\n", writer.error().what.c_str());
    return 1;
  }
  const std::uint64_t blocks = std::strtoull(argv[3], nullptr, 10);
  const std::uint64_t spike_at = std::strtoull(argv[4], nullptr, 10);
  const float value = std::strtof(argv[5], nullptr);
  const std::uint64_t gap_after = argc == 7 ? std::strtoull(argv[6], nullptr, 10) : ~0ULL;
  std::uint64_t sample = 0;
  for (std::uint64_t b = 0; b < blocks; ++b) {
    if (b == gap_after) writer->skip(1, core::GapReason::dropped_at_source);
    std::span<std::byte> out;
    if (writer->claim(out) != core::ClaimStatus::ok) return 1;
    auto* f = reinterpret_cast<float*>(out.data());
    for (std::uint32_t i = 0; i < spec.samples_per_block; ++i, ++sample) f[i] = sample == spike_at ? value : 0.0F;
    writer->publish(spec.samples_per_block);
  }
  std::printf("done %llu\n", static_cast<unsigned long long>(sample));
  std::fflush(stdout);
  while (std::getchar() != EOF) {
  }
  return 0;
}
