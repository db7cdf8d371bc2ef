// How long a snapshot of a large arena takes: a 256 MiB arena (WEIR_SNAPSHOT_BENCH_MIB asks for
// more) with full channel rings, keys and vectors, written to a file and synced to disk.
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>

#include "proc_util.hpp"
#include "scratch_dir.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/vector_store.hpp"
#include "weir/snapshot/snapshot.hpp"

using namespace weir;
using namespace weir::test;

namespace {

constexpr std::uint32_t kBlockSamples = 16384;      // 64 KiB f32 blocks
constexpr std::uint32_t kRing = 1024;               // 64 MiB of samples per channel
constexpr std::uint64_t kChannelBytes = 114ULL << 20;  // ring (64 MiB), min/max pyramid (48 MiB), spare
constexpr std::uint32_t kKeys = 2048;
constexpr std::uint32_t kValueBytes = 4096;
constexpr std::uint32_t kDim = 768;

std::uint64_t requested_mib() {
  const char* text = std::getenv("WEIR_SNAPSHOT_BENCH_MIB");
  const std::uint64_t mib = text != nullptr ? std::strtoull(text, nullptr, 10) : 0;
  return mib >= 256 ? mib : 256;
}

double mib_per_s(std::uint64_t bytes, std::uint64_t ns) {
  return ns == 0 ? 0 : static_cast<double>(bytes) / (1 << 20) / (static_cast<double>(ns) / 1e9);
}

}  // namespace

TEST_SUITE("recorders.snapshot") {

TEST_CASE("a snapshot of a 256 MiB arena with full rings is timed" * doctest::timeout(60)) {
  const std::uint32_t channels = static_cast<std::uint32_t>(std::max<std::uint64_t>(2, requested_mib() / 128));
  core::ArenaOptions o;
  o.slot_count = 2 * kKeys;
  o.value_bytes = kValueBytes;
  o.vector_dim = kDim;
  o.channel_capacity = channels;
  o.channel_data_bytes = channels * kChannelBytes;
  ArenaGuard guard(unique_name("snap-bench"));
  auto arena = core::Arena::create(guard.where(), o);
  REQUIRE(arena);

  std::vector<std::byte> value(kValueBytes, std::byte{0x5a});
  core::KvStore kv(*arena);
  core::VectorStore vectors(*arena);
  std::vector<float> v(kDim, 0.25F);
  for (std::uint32_t k = 0; k < kKeys; ++k) {
    const std::string key = "key/" + std::to_string(k);
    REQUIRE(kv.set(key, value) == core::KvStatus::ok);
    if (k % 2 == 0) REQUIRE(vectors.set(key, v) == core::VectorStatus::ok);
  }
  for (std::uint32_t c = 0; c < channels; ++c) {
    core::ChannelSpec spec;
    spec.name = "wave" + std::to_string(c);
    spec.rate_hz = 1e7;
    spec.samples_per_block = kBlockSamples;
    spec.ring_blocks = kRing;
    REQUIRE(core::create_channel(*arena, spec));
    auto w = core::ChannelWriter::open(*arena, spec.name);
    REQUIRE(w);
    for (std::uint32_t b = 0; b < kRing; ++b) {
      std::span<std::byte> out;
      REQUIRE(w->claim(out) == core::ClaimStatus::ok);
      std::memset(out.data(), static_cast<int>(b & 0x7f), out.size());
      w->publish(kBlockSamples);
    }
  }

  ScratchDir dir("snap-bench");
  auto stats = rec::snapshot_to_hdf5(*arena, dir.file("big.h5"));
  REQUIRE_MESSAGE(stats, (stats ? "" : stats.error().what));
  CHECK(stats->blocks == std::uint64_t{channels} * kRing);
  CHECK(stats->keys == kKeys);
  CHECK(stats->vectors == kKeys / 2);
  CHECK(stats->file_bytes >= std::uint64_t{channels} * kRing * kBlockSamples * sizeof(float));
  const double ms = static_cast<double>(stats->elapsed_ns) / 1e6;
  const double sync_ms = static_cast<double>(stats->sync_ns) / 1e6;
  MESSAGE("snapshot of a " << arena->bytes() / (1 << 20) << " MiB arena (" << channels << " channels x " << kRing
                           << " blocks of 64 KiB, " << kKeys << " keys of 4 KiB, " << kKeys / 2
                           << " vectors of 768 floats): " << stats->bytes_copied / (1 << 20) << " MiB copied into a "
                           << stats->file_bytes / (1 << 20) << " MiB file in " << ms << " ms ("
                           << mib_per_s(stats->bytes_copied, stats->elapsed_ns) << " MiB/s), of which fsync "
                           << sync_ms << " ms");
}

}  // TEST_SUITE
