// Top-k search: one streaming pass over the vector rows, each scored in place inside its seqlock window,
// a fixed-size heap kept in the caller's result buffer, and a short second pass over rows whose writers
// were inside. Nothing is allocated. Protocol: docs/design/vectors.md.
#include <algorithm>
#include <array>

#include "backing.hpp"
#include "vector_scan.hpp"

namespace weir::core {

namespace {

using detail::Deferred;
using detail::kRowPresent;
using detail::RowRead;
using detail::ScanContext;
using detail::Scored;
using detail::TopK;
using detail::finish;
using detail::inverse_norm;
using detail::query_norm;
using detail::rank_of;
using detail::score_row;

template <Metric M>
class Scan {
 public:
  Scan(const ScanContext& c, std::span<VectorHit> out) noexcept : c_(c), top_(out) {}

  std::size_t run(std::int64_t wait_ns, SearchStats& stats) noexcept {
    stats_ = &stats;
    for (std::uint32_t i = 0; i < c_.rows; ++i) {
      if constexpr (kVectorPrefetchRows > 0) prefetch_ahead(i);
      first_pass(i);
    }
    if (deferred_count_ != 0) second_pass(wait_ns);
    stats.rows_scanned += c_.rows;
    return top_.sort_best_first();
  }

 private:
  // Two stages: the header line of row i + 2P, then, once it has arrived, the floats of row i + P if
  // that row holds a vector. Rows without one cost a header line, never their floats.
  void prefetch_ahead(std::uint32_t i) const noexcept {
    if (i + 2 * kVectorPrefetchRows < c_.rows) __builtin_prefetch(&c_.row(i + 2 * kVectorPrefetchRows));
    if (i + kVectorPrefetchRows >= c_.rows) return;
    const VectorRowHeader& r = c_.row(i + kVectorPrefetchRows);
    if ((r.flags.load(std::memory_order_relaxed) & kRowPresent) == 0) return;  // a hint only: no ordering
    const auto* p = reinterpret_cast<const char*>(c_.row_data(i + kVectorPrefetchRows));
    for (std::uint64_t off = 0; off + sizeof(VectorRowHeader) < c_.row_stride; off += kCacheLine)
      __builtin_prefetch(p + off);
  }

  void consider(std::uint32_t i, const Scored& s) noexcept {
    ++stats_->rows_scored;
    const float rank = rank_of<M>(s.raw, s.norm, c_.inv_query_norm);
    // The slot check runs only for rows that would enter the heap: a deleted key's row, or one left by
    // an earlier incarnation of the slot, never does.
    if (top_.wants(rank) && detail::slot_holds(c_.slot(i), s.generation)) top_.push(i, s.generation, rank);
  }

  void first_pass(std::uint32_t i) noexcept {
    Scored s;
    for (int attempt = 1;; ++attempt) {
      switch (score_row(c_, i, s)) {
        case RowRead::scored: consider(i, s); return;
        case RowRead::absent: return;
        case RowRead::torn: ++stats_->skipped_torn; return;
        case RowRead::held: break;
      }
      if (attempt == kVectorScoreAttempts) break;
      ++stats_->retries;
      detail::cpu_relax();
    }
    if (deferred_count_ == deferred_.size()) {
      ++stats_->skipped_busy;  // more held rows than we remember: skip, counted
      return;
    }
    deferred_[deferred_count_++] = Deferred{i, s.epoch, core::monotonic_ns()};
  }

  // Rows whose writers were inside: most finish within nanoseconds. Waits at most wait_ns in all; a row
  // held by the same word for kStuckAfterNs whose writer is dead is recovered and skipped as torn.
  void second_pass(std::int64_t wait_ns) noexcept {
    const std::int64_t deadline = core::monotonic_ns() + std::max<std::int64_t>(wait_ns, 0);
    for (std::size_t d = 0; d < deferred_count_; ++d) {
      Deferred& held = deferred_[d];
      VectorRowHeader& r = c_.row(held.row);
      Scored s;
      for (int spins = 0;;) {
        const RowRead got = score_row(c_, held.row, s);
        if (got == RowRead::scored) {
          consider(held.row, s);
          break;
        }
        if (got == RowRead::absent) break;
        if (got == RowRead::torn) {
          ++stats_->skipped_torn;
          break;
        }
        const std::int64_t now = core::monotonic_ns();
        if (s.epoch != held.epoch) {  // a different writer (or version) than the one we timed
          held.epoch = s.epoch;
          held.seen_ns = now;
        }
        ++stats_->retries;
        if (epoch_odd(s.epoch) && c_.writable &&
            detail::recover_if_dead(*c_.header, r, s.epoch, held.seen_ns, now)) {
          ++stats_->recovered;
          continue;  // the next read sees the row torn
        }
        if (now >= deadline) {
          ++stats_->skipped_busy;
          break;
        }
        detail::row_backoff(spins);
      }
    }
  }

  const ScanContext& c_;
  TopK top_;
  SearchStats* stats_ = nullptr;
  std::array<Deferred, kVectorDeferredRows> deferred_{};
  std::size_t deferred_count_ = 0;
};

template <Metric M>
std::size_t run_scan(const ScanContext& c, std::span<VectorHit> out, std::int64_t wait_ns, SearchStats& stats) noexcept {
  Scan<M> scan(c, out);
  const std::size_t n = scan.run(wait_ns, stats);
  for (std::size_t i = 0; i < n; ++i) out[i].score = finish<M>(out[i].score);
  return n;
}

}  // namespace

VectorStatus VectorStore::search(std::span<const float> query, const SearchOptions& options, std::span<VectorHit> out,
                                 std::size_t& count, SearchStats* stats) const noexcept {
  count = 0;
  if (dim_ == 0) return VectorStatus::no_vectors;
  if (query.size() != dim_) return VectorStatus::wrong_length;
  const detail::KernelTable* table = detail::kernel_table(options.kernel);
  if (table == nullptr) return VectorStatus::no_kernel;
  double norm = 0.0;
  if (!query_norm(query, norm)) return VectorStatus::not_finite;
  if (out.empty()) return VectorStatus::ok;

  const ScanContext c{header_,
                      rows_base_,
                      slots_base_,
                      row_stride_,
                      slot_stride_,
                      rows_,
                      dim_,
                      !read_only_,
                      query.data(),
                      inverse_norm(norm),
                      options.metric == Metric::l2 ? table->l2sq : table->dot};
  SearchStats local;
  SearchStats& s = stats != nullptr ? *stats : local;
  s = SearchStats{};
  switch (options.metric) {
    case Metric::cosine: count = run_scan<Metric::cosine>(c, out, options.wait_ns, s); break;
    case Metric::dot: count = run_scan<Metric::dot>(c, out, options.wait_ns, s); break;
    case Metric::l2: count = run_scan<Metric::l2>(c, out, options.wait_ns, s); break;
  }
  return VectorStatus::ok;
}

}  // namespace weir::core
