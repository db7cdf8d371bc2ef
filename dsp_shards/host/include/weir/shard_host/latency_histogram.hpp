#pragma once
// A fixed log-bucket histogram of durations in nanoseconds: no allocation, O(1) add, percentiles
// by one pass over the buckets. Values below 16 ns are exact; above, each power of two is split
// into 8 buckets, so a reported percentile is within 1/16 (6.25 %) of a value that was added.
//
//   bucket b < 16           : exactly b ns
//   bucket 16 + 8(e-4) + s  : [ (8+s) << (e-3), (9+s) << (e-3) )   e = floor(log2 v) >= 4, s = 0..7
//
// Thread: one owner; nothing here is atomic (the host copies percentiles into shared memory).
#include <array>
#include <bit>
#include <cstdint>

namespace weir::shard_host {

class LatencyHistogram {
 public:
  static constexpr std::uint32_t kExact = 16;
  static constexpr std::uint32_t kSubBuckets = 8;
  static constexpr std::uint32_t kBuckets = kExact + (64 - 4) * kSubBuckets;

  /// Counts one duration. Hot path: no allocation, no branch on the data beyond the bucket.
  void add(std::uint64_t ns) noexcept {
    ++counts_[bucket_of(ns)];
    ++total_;
  }
  void clear() noexcept {
    counts_.fill(0);
    total_ = 0;
  }
  [[nodiscard]] std::uint64_t count() const noexcept { return total_; }

  /// The value at quantile q (0 < q <= 1): the midpoint of the bucket holding the ceil(q*n)-th
  /// smallest value; 0 when empty.
  [[nodiscard]] std::uint64_t percentile(double q) const noexcept {
    if (total_ == 0) return 0;
    auto rank = static_cast<std::uint64_t>(q * static_cast<double>(total_) + 0.999999);
    rank = rank == 0 ? 1 : (rank > total_ ? total_ : rank);
    std::uint64_t seen = 0;
    for (std::uint32_t b = 0; b < kBuckets; ++b) {
      seen += counts_[b];
      if (seen >= rank) return midpoint(b);
    }
    return midpoint(kBuckets - 1);
  }

  static constexpr std::uint32_t bucket_of(std::uint64_t ns) noexcept {
    if (ns < kExact) return static_cast<std::uint32_t>(ns);
    const auto e = static_cast<std::uint32_t>(std::bit_width(ns) - 1);  // >= 4
    const auto s = static_cast<std::uint32_t>(ns >> (e - 3)) & (kSubBuckets - 1);
    return kExact + (e - 4) * kSubBuckets + s;
  }
  static constexpr std::uint64_t lower_bound(std::uint32_t b) noexcept {
    if (b < kExact) return b;
    const std::uint32_t e = (b - kExact) / kSubBuckets + 4;
    const std::uint64_t s = (b - kExact) % kSubBuckets;
    return (kSubBuckets + s) << (e - 3);
  }
  static constexpr std::uint64_t midpoint(std::uint32_t b) noexcept {
    if (b < kExact) return b;
    const std::uint32_t e = (b - kExact) / kSubBuckets + 4;
    return lower_bound(b) + (std::uint64_t{1} << (e - 3)) / 2;
  }

 private:
  std::array<std::uint64_t, kBuckets> counts_{};
  std::uint64_t total_ = 0;
};

static_assert(LatencyHistogram::bucket_of(15) == 15 && LatencyHistogram::bucket_of(16) == 16);
static_assert(LatencyHistogram::bucket_of(~std::uint64_t{0}) == LatencyHistogram::kBuckets - 1);
static_assert(LatencyHistogram::lower_bound(LatencyHistogram::bucket_of(1000)) <= 1000);

}  // namespace weir::shard_host
