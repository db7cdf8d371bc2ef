#pragma once
// What the one-query and the batched top-k scans share: the rows they read, ranks, the heap in the
// caller's buffer and one seqlock read of a row. Private to core. Protocol: docs/design/vectors.md.
#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>

#include "vector_rows.hpp"
#include "weir/core/vector_store.hpp"

namespace weir::core::detail {
// Everything one search reads, copied out of the VectorStore so the scan can be a free template.
struct ScanContext {
  ArenaHeader* header;
  std::byte* rows_base;
  const std::byte* slots_base;
  std::uint64_t row_stride;
  std::uint64_t slot_stride;
  std::uint32_t rows;
  std::uint32_t dim;
  bool writable;
  const float* query;
  float inv_query_norm;  // 0 for a zero query: every cosine is then 0
  detail::RowKernel kernel;

  [[nodiscard]] VectorRowHeader& row(std::uint32_t i) const noexcept {
    return *reinterpret_cast<VectorRowHeader*>(rows_base + std::uint64_t{i} * row_stride);
  }
  [[nodiscard]] const float* row_data(std::uint32_t i) const noexcept {
    return reinterpret_cast<const float*>(rows_base + std::uint64_t{i} * row_stride + sizeof(VectorRowHeader));
  }
  [[nodiscard]] const SlotHeader& slot(std::uint32_t i) const noexcept {
    return *reinterpret_cast<const SlotHeader*>(slots_base + std::uint64_t{i} * slot_stride);
  }
};

// Ranks are "larger is better" for every metric; finish() turns them into reported scores.
template <Metric M>
inline float rank_of(float raw, float norm, float inv_query_norm) noexcept {
  if constexpr (M == Metric::dot) {
    return raw;
  } else if constexpr (M == Metric::l2) {
    return -raw;  // raw is the squared distance
  } else {
    // A zero vector has no direction: similarity 0, never NaN.
    return norm > 0.0F ? std::clamp(raw * inv_query_norm / norm, -1.0F, 1.0F) : 0.0F;
  }
}

template <Metric M>
inline float finish(float rank) noexcept {
  if constexpr (M == Metric::l2) {
    return std::sqrt(std::max(-rank, 0.0F));
  } else {
    return rank;
  }
}

// A min-heap of the best k ranks so far, kept in the caller's buffer (score holds the rank meanwhile).
class TopK {
 public:
  TopK() noexcept = default;
  explicit TopK(std::span<VectorHit> buffer) noexcept : heap_(buffer) {}

  // NaN never enters; a full heap takes only what beats its worst.
  [[nodiscard]] bool wants(float rank) const noexcept {
    return size_ < heap_.size() ? !std::isnan(rank) : rank > heap_[0].score;
  }
  // The rank a newcomer must beat: -inf while the heap is not full.
  [[nodiscard]] float worst() const noexcept {
    return size_ < heap_.size() ? -std::numeric_limits<float>::infinity() : heap_[0].score;
  }
  void push(std::uint32_t slot, std::uint32_t generation, float rank) noexcept {
    if (size_ == heap_.size()) {
      std::pop_heap(heap_.begin(), heap_.end(), worse_first);
      heap_[size_ - 1] = VectorHit{slot, generation, rank};
    } else {
      heap_[size_++] = VectorHit{slot, generation, rank};
    }
    std::push_heap(heap_.begin(), heap_.begin() + static_cast<std::ptrdiff_t>(size_), worse_first);
  }
  // Best first; returns how many.
  std::size_t sort_best_first() noexcept {
    std::sort_heap(heap_.begin(), heap_.begin() + static_cast<std::ptrdiff_t>(size_), worse_first);
    return size_;
  }

 private:
  static bool worse_first(const VectorHit& a, const VectorHit& b) noexcept { return a.score > b.score; }
  std::span<VectorHit> heap_;
  std::size_t size_ = 0;
};

enum class RowRead : std::uint8_t { scored, absent, torn, held };

struct Scored {
  std::uint64_t epoch = 0;  // the word loaded first: odd (held), or even
  float raw = 0.0F;
  float norm = 0.0F;
  std::uint32_t generation = 0;
};

// One seqlock read of row i, scoring the floats in place between the epoch load and the re-check.
inline RowRead score_row(const ScanContext& c, std::uint32_t i, Scored& out) noexcept {
  const VectorRowHeader& r = c.row(i);
  out.epoch = r.epoch.load(std::memory_order_acquire);  // pairs with the writer's release
  if (epoch_odd(out.epoch)) return RowRead::held;
  const std::uint32_t flags = r.flags.load(std::memory_order_relaxed);
  if ((flags & kRowPresent) == 0) return RowRead::absent;  // nothing to validate: skipping is always safe
  if ((flags & kRowTorn) != 0) return RowRead::torn;
  out.generation = r.generation.load(std::memory_order_relaxed);
  out.norm = std::bit_cast<float>(r.norm_bits.load(std::memory_order_relaxed));
  out.raw = c.kernel(c.query, c.row_data(i), c.dim);
  std::atomic_thread_fence(std::memory_order_acquire);  // the kernel's reads happen before the re-check
  return r.epoch.load(std::memory_order_relaxed) == out.epoch ? RowRead::scored : RowRead::held;
}

struct Deferred {
  std::uint32_t row;
  std::uint64_t epoch;    // the odd word seen (or an even one that changed under the kernel)
  std::int64_t seen_ns;   // when that word was first seen
};

// The query's norm, as search() checks it; false when not finite or past float range.
inline bool query_norm(std::span<const float> query, double& norm) noexcept {
  double sum = 0.0;
  for (const float x : query) sum += static_cast<double>(x) * static_cast<double>(x);
  norm = std::sqrt(sum);
  return std::isfinite(norm) && norm <= static_cast<double>(std::numeric_limits<float>::max());
}

inline float inverse_norm(double norm) noexcept { return norm > 0.0 ? static_cast<float>(1.0 / norm) : 0.0F; }

}  // namespace weir::core::detail
