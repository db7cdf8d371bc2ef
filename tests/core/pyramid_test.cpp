// The min/max pyramid: every kernel path against a plain loop, and every entry of every level a
// writer keeps against the samples it wrote, for each dtype and for blocks that cut entries apart.
#include <doctest/doctest.h>

#include <algorithm>
#include <complex>
#include <cstring>
#include <random>
#include <vector>

#include "cpu_features.hpp"
#include "pyramid_kernels.hpp"
#include "arena_guard.hpp"
#include "weir/core/channel.hpp"

using namespace weir::core;
using weir::test::ArenaGuard;
using weir::test::unique_name;

namespace {

using KernelFn = void (*)(const float*, std::size_t, float*, float*) noexcept;

std::vector<std::pair<const char*, KernelFn>> kernels_here() {
  std::vector<std::pair<const char*, KernelFn>> k{{"portable", &detail::entry_ranges_portable},
                                                  {"best", &detail::entry_ranges}};
  if (detail::cpu_has_avx2_fma()) k.emplace_back("avx2", &detail::entry_ranges_avx2);
  if (detail::cpu_has_avx512f()) k.emplace_back("avx512", &detail::entry_ranges_avx512);
  return k;
}

// Min and max of samples [first, first + n) as floats, the plain way.
template <class T>
std::pair<float, float> plain_range(const std::vector<T>& v, std::uint64_t first, std::uint64_t n) {
  float lo = 0, hi = 0;
  for (std::uint64_t i = first; i < first + n; ++i) {
    float f;
    if constexpr (std::is_same_v<T, std::complex<float>>)
      f = v[i].real();
    else
      f = static_cast<float>(v[i]);
    lo = i == first ? f : std::min(lo, f);
    hi = i == first ? f : std::max(hi, f);
  }
  return {lo, hi};
}

template <class T>
T random_sample(std::mt19937& rng) {
  if constexpr (std::is_same_v<T, std::complex<float>>) {
    std::normal_distribution<float> d(0.0F, 100.0F);
    return {d(rng), d(rng)};
  } else if constexpr (std::is_floating_point_v<T>) {
    std::normal_distribution<T> d(0, 1000);
    return d(rng);
  } else {
    std::uniform_int_distribution<long long> d(std::numeric_limits<T>::min() / 2, std::numeric_limits<T>::max() / 2);
    return static_cast<T>(d(rng));
  }
}

// Writes `total` random samples in blocks of `block` (the last one short), then checks every entry
// of every level the ring still holds against the samples.
template <class T>
void check_levels(Dtype dtype, std::uint32_t block, std::uint64_t total) {
  CAPTURE(static_cast<int>(dtype));
  CAPTURE(block);
  ArenaGuard guard(unique_name("pyr"));
  const ArenaOptions o{
      .slot_count = 16, .value_bytes = 64, .channel_capacity = 1, .channel_data_bytes = 64ULL << 20, .vector_dim = 0};
  Arena arena = std::move(Arena::create(guard.where(), o).value());
  ChannelSpec s;
  s.name = "p";
  s.dtype = dtype;
  s.rate_hz = 1e3;
  s.samples_per_block = block;
  s.ring_blocks = 1;
  // The ring holds them all and a block more: envelope() trusts no entry the next block could overwrite.
  while (std::uint64_t{s.ring_blocks} * block < total + block) s.ring_blocks *= 2;
  REQUIRE(create_channel(arena, s));
  auto w = ChannelWriter::open(arena, "p");
  REQUIRE(w);
  std::mt19937 rng(block);
  std::vector<T> all(total);
  for (T& x : all) x = random_sample<T>(rng);
  for (std::uint64_t at = 0; at < total; at += block) {
    std::span<std::byte> out;
    REQUIRE(w->claim(out) == ClaimStatus::ok);
    const auto n = static_cast<std::uint32_t>(std::min<std::uint64_t>(block, total - at));
    std::memcpy(out.data(), all.data() + at, n * sizeof(T));
    w->publish(n);
  }
  std::uint64_t span = kPyramidFactor;
  for (std::uint32_t level = 0; level < kPyramidLevels; ++level, span *= kPyramidFactor) {
    CAPTURE(level);
    const std::uint64_t complete = total / span * span;
    if (complete == 0) break;
    const std::size_t columns = complete / span;  // one entry per column: envelope reads this level
    std::vector<float> mins(columns), maxs(columns);
    envelope(arena, 0, 0, complete, mins, maxs);
    std::size_t wrong = 0;
    for (std::size_t c = 0; c < columns; ++c) {
      const auto [lo, hi] = plain_range(all, c * span, span);
      wrong += (mins[c] == lo && maxs[c] == hi) ? 0U : 1U;
    }
    CHECK(wrong == 0);
  }
}

}  // namespace

TEST_CASE("every pyramid kernel path gives each run of kPyramidFactor floats its exact min and max") {
  std::mt19937 rng(7);
  std::normal_distribution<float> noise(0.0F, 1e3F);
  for (const auto& [name, kernel] : kernels_here()) {
    CAPTURE(name);
    for (std::size_t entries : {0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 100}) {
      CAPTURE(entries);
      std::vector<float> x(entries * kPyramidFactor);
      for (float& f : x) f = noise(rng);
      // A lone spike in each entry at a position that walks through every lane.
      for (std::size_t e = 0; e < entries; ++e) x[e * kPyramidFactor + e % kPyramidFactor] = (e % 2 ? 1e6F : -1e6F);
      std::vector<float> lo(entries + 1, 123.0F), hi(entries + 1, 123.0F);  // one past: must stay untouched
      kernel(x.data(), entries, lo.data(), hi.data());
      std::size_t wrong = 0;
      for (std::size_t e = 0; e < entries; ++e) {
        const auto [l, h] = std::minmax_element(x.begin() + static_cast<long>(e * kPyramidFactor),
                                                x.begin() + static_cast<long>((e + 1) * kPyramidFactor));
        wrong += (lo[e] == *l && hi[e] == *h) ? 0U : 1U;
      }
      CHECK(wrong == 0);
      CHECK(lo[entries] == 123.0F);
      CHECK(hi[entries] == 123.0F);
    }
  }
}

TEST_CASE("the writer keeps every level's entries exact, for every dtype and blocks that cut entries") {
  // Three whole top-level entries and a ragged end.
  constexpr std::uint64_t kTotal = 3 * std::uint64_t{kPyramidFactor} * kPyramidFactor * kPyramidFactor + 1000;
  static_assert(kPyramidLevels == 3);
  for (const std::uint32_t block : {1000U, 4096U, 7U, 33U}) {
    check_levels<float>(Dtype::f32, block, kTotal);
    check_levels<std::int16_t>(Dtype::i16, block, kTotal);
  }
  check_levels<std::int8_t>(Dtype::i8, 1000, kTotal);
  check_levels<std::uint8_t>(Dtype::u8, 1000, kTotal);
  check_levels<std::uint16_t>(Dtype::u16, 1000, kTotal);
  check_levels<std::int32_t>(Dtype::i32, 1000, kTotal);
  check_levels<std::uint32_t>(Dtype::u32, 1000, kTotal);
  check_levels<std::int64_t>(Dtype::i64, 1000, kTotal);
  check_levels<double>(Dtype::f64, 1000, kTotal);
  check_levels<std::complex<float>>(Dtype::c64, 1000, kTotal);
}
