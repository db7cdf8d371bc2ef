// The channel writer's min/max pyramid: as each block is published, every completed run of
// kPyramidFactor samples becomes a level-0 entry, and every kPyramidFactor entries of a level become
// one entry of the level above. Whole entries go through the vector kernel (pyramid_kernels.cpp);
// only a block's ragged edges take the scalar path.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "channel_access.hpp"
#include "pyramid_kernels.hpp"
#include "weir/core/channel.hpp"

namespace weir::core {

namespace {

constexpr std::uint64_t kEntryMask = kPyramidFactor - 1;
static_assert((kPyramidFactor & kEntryMask) == 0, "a power of two: masks, no division");
constexpr std::size_t kChunkEntries = 4096 / sizeof(float) / kPyramidFactor;  // per kernel call: 4 KiB of floats
static_assert(kChunkEntries >= 1);

// Complex samples are drawn by their real part: read them as pairs and keep the first.
struct RealOfComplex {
  float re, im;
  explicit operator float() const noexcept { return re; }
};

template <class T>
float sample_at(const std::byte* p, std::size_t i) noexcept {
  T v;
  std::memcpy(&v, p + i * sizeof(T), sizeof(T));
  return static_cast<float>(v);
}

// Min and max of n samples folded into lo and hi (a block's ragged edges only).
template <class T>
void partial_range(const std::byte* p, std::uint64_t n, float& lo, float& hi) noexcept {
  for (std::uint64_t i = 0; i < n; ++i) {
    const float f = sample_at<T>(p, i);
    lo = f < lo ? f : lo;
    hi = f > hi ? f : hi;
  }
}

}  // namespace

void ChannelWriter::update_pyramid(const std::byte* samples, std::uint32_t count, std::uint64_t first_sample) noexcept {
  // An entry slot is overwritten only after samples_written has been stored for every block before
  // this one: a reader that sees an overwritten entry then sees at least that much (envelope()).
  std::atomic_thread_fence(std::memory_order_release);
  switch (desc_->dtype) {
    case Dtype::i8: update_pyramid_as<std::int8_t>(samples, count, first_sample); break;
    case Dtype::u8: update_pyramid_as<std::uint8_t>(samples, count, first_sample); break;
    case Dtype::i16: update_pyramid_as<std::int16_t>(samples, count, first_sample); break;
    case Dtype::u16: update_pyramid_as<std::uint16_t>(samples, count, first_sample); break;
    case Dtype::i32: update_pyramid_as<std::int32_t>(samples, count, first_sample); break;
    case Dtype::u32: update_pyramid_as<std::uint32_t>(samples, count, first_sample); break;
    case Dtype::i64: update_pyramid_as<std::int64_t>(samples, count, first_sample); break;
    case Dtype::f32: update_pyramid_as<float>(samples, count, first_sample); break;
    case Dtype::f64: update_pyramid_as<double>(samples, count, first_sample); break;
    case Dtype::c64: update_pyramid_as<RealOfComplex>(samples, count, first_sample); break;
  }
}

template <class T>
void ChannelWriter::update_pyramid_as(const std::byte* samples, std::uint32_t count, std::uint64_t first_sample) noexcept {
  Accumulator& a0 = acc_[0];
  std::uint64_t i = 0;
  // The head: finish the entry the last block left open.
  if (const std::uint64_t offset = first_sample & kEntryMask; offset != 0) {
    i = std::min<std::uint64_t>(kPyramidFactor - offset, count);
    partial_range<T>(samples, i, a0.lo, a0.hi);
    if (((first_sample + i) & kEntryMask) != 0) return;  // still open: the block was that short
    complete_entries((first_sample + i) / kPyramidFactor - 1, &a0.lo, &a0.hi, 1);
    a0 = Accumulator{};
  }
  // Whole entries, a chunk at a time.
  alignas(64) float lo[kChunkEntries], hi[kChunkEntries];
  while (count - i >= kPyramidFactor) {
    const std::uint64_t entries = std::min<std::uint64_t>((count - i) / kPyramidFactor, kChunkEntries);
    const std::byte* p = samples + i * sizeof(T);
    if constexpr (std::is_same_v<T, float>) {
      detail::entry_ranges(reinterpret_cast<const float*>(p), entries, lo, hi);  // the kernel loads unaligned
    } else {
      alignas(64) float converted[kChunkEntries * kPyramidFactor];
      for (std::uint64_t k = 0; k < entries * kPyramidFactor; ++k) converted[k] = sample_at<T>(p, k);
      detail::entry_ranges(converted, entries, lo, hi);
    }
    complete_entries((first_sample + i) / kPyramidFactor, lo, hi, entries);
    i += entries * kPyramidFactor;
  }
  // The tail: an entry the next block finishes.
  partial_range<T>(samples + i * sizeof(T), count - i, a0.lo, a0.hi);
}

void ChannelWriter::complete_entries(std::uint64_t first_entry, const float* lo, const float* hi,
                                     std::size_t n) noexcept {
  PyramidEntry* const base = detail::pyramid_entry(*arena_, *desc_, 0, 0);
  const std::uint64_t ring_mask = desc_->pyramid_entries - 1;
  for (std::size_t k = 0; k < n; ++k)
    base[(first_entry + k) & ring_mask].range.store(pack_range(lo[k], hi[k]), std::memory_order_relaxed);
  if constexpr (kPyramidLevels < 2) return;
  // Level 1 takes them in runs that end where its own entries end; the running min and max stay in
  // registers (one dependent min per entry, no store-to-load round trip through acc_).
  for (std::size_t k = 0; k < n;) {
    const std::uint64_t entry = first_entry + k;
    const std::size_t run = static_cast<std::size_t>(std::min<std::uint64_t>(n - k, kPyramidFactor - (entry & kEntryMask)));
    float l = acc_[1].lo, h = acc_[1].hi;
    for (std::size_t j = k; j < k + run; ++j) {
      l = std::min(l, lo[j]);
      h = std::max(h, hi[j]);
    }
    k += run;
    if (((first_entry + k) & kEntryMask) != 0) {  // still open: n ran out first
      acc_[1] = Accumulator{l, h};
      break;
    }
    acc_[1] = Accumulator{};
    complete_upper(1, (first_entry + k) / kPyramidFactor - 1, l, h);
  }
}

// Stores the completed entry `entry` of `level` and folds it into the levels above, completing
// theirs as it goes (once every kPyramidFactor entries of the level below: no hot loop here).
void ChannelWriter::complete_upper(std::uint32_t level, std::uint64_t entry, float lo, float hi) noexcept {
  const std::uint64_t per_level = desc_->pyramid_entries;
  PyramidEntry* const base = detail::pyramid_entry(*arena_, *desc_, 0, 0);
  for (;;) {
    base[level * per_level + (entry & (per_level - 1))].range.store(pack_range(lo, hi), std::memory_order_relaxed);
    if (++level >= kPyramidLevels) return;
    Accumulator& up = acc_[level];
    up.lo = std::min(up.lo, lo);
    up.hi = std::max(up.hi, hi);
    if (((entry + 1) & kEntryMask) != 0) return;
    entry /= kPyramidFactor;
    lo = up.lo;
    hi = up.hi;
    up = Accumulator{};
  }
}

}  // namespace weir::core
