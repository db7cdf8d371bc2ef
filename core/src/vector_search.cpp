// Top-k search: one streaming pass over the vector rows, each scored in place inside its seqlock window,
// a fixed-size heap kept in the caller's result buffer, and a short second pass over rows whose writers
// were inside. Nothing is allocated. Protocol: docs/design/vectors.md.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>

#include "backing.hpp"
#include "vector_rows.hpp"
#include "weir/core/vector_store.hpp"

namespace weir::core {

namespace {

using detail::kRowPresent;
using detail::kRowTorn;

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
float rank_of(float raw, float norm, float inv_query_norm) noexcept {
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
float finish(float rank) noexcept {
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

// The batch's queries and their norms, as search() computes them for each query alone.
struct BatchQueries {
  const float* data;       // n queries of dim floats, back to back
  const float* inv_norms;  // 1 / |q| (0 for a zero query), as ScanContext::inv_query_norm
  const float* norms;      // |q|
  const float* squares;    // |q|^2
  std::uint32_t n;
};

// A batched pass: every block of kSearchBatchRows rows is scored against every query of the batch
// between one epoch load and one re-check per row, then offered to each query's heap in row order, as
// Scan offers them: the heaps see the same ranks in the same order, so they end the same. Where the
// code path has a panel kernel, it estimates every pair (sixteen queries by eight rows at a time); a
// pair whose estimate, plus the bound on how far it can be from the row kernel's result, still beats
// its query's worst hit is scored again by the row kernel, in the same window, and only that exact
// score is offered. Other pairs cannot enter the heap (it only gets harder to enter), so skipping them
// changes nothing. Without a panel, tiles of four by four (bit-identical to the row kernel) score every
// pair. Rows held by a writer take the one-row path of Scan (a few attempts, then the second pass).
template <Metric M>
class BatchScan {
 public:
  BatchScan(const ScanContext& c, const BatchQueries& queries, const detail::KernelTable& table,
            std::span<VectorHit> out, std::size_t k) noexcept
      : c_(c),
        inv_norms_(queries.inv_norms),
        norms_(queries.norms),
        squares_(queries.squares),
        n_(queries.n),
        all_(queries.n == 32 ? ~std::uint32_t{0} : (std::uint32_t{1} << queries.n) - 1U),
        tile_(M == Metric::l2 ? table.l2sq_tile : table.dot_tile),
        panel_(c.dim <= kSearchPanelDims ? table.dot_panel : nullptr),
        slack_(detail::panel_slack(c.dim)) {
    for (std::uint32_t q = 0; q < n_; ++q) {
      queries_[q] = queries.data + std::size_t{q} * c.dim;
      tops_[q] = TopK(out.subspan(q * k, k));
    }
    if (panel_ == nullptr) return;
    // A panel costs as much for one query as for sixteen: a short last group goes to the tiles.
    const std::uint32_t rest = n_ % detail::kPanelQueries;
    panel_n_ = n_ - (rest < kSearchPanelMinQueries ? rest : 0);
    const std::uint32_t groups = (panel_n_ + detail::kPanelQueries - 1) / detail::kPanelQueries;
    for (std::uint32_t g = 0; g < groups; ++g) {
      float* qt = qt_.data() + std::size_t{g} * detail::kPanelQueries * c.dim;
      for (std::uint32_t j = 0; j < detail::kPanelQueries; ++j) {
        const std::uint32_t q = g * detail::kPanelQueries + j;
        for (std::uint32_t i = 0; i < c.dim; ++i)
          qt[std::size_t{i} * detail::kPanelQueries + j] = q < panel_n_ ? queries_[q][i] : 0.0F;
        set_bound_terms(bounds_[g], j, q < panel_n_ ? q : kNoQuery);
      }
    }
  }

  void run(std::int64_t wait_ns, SearchStats& stats, std::span<std::size_t> counts) noexcept {
    stats_ = &stats;
    for (std::uint32_t first = 0; first < c_.rows; first += kSearchBatchRows)
      block(first, std::min(c_.rows, first + kSearchBatchRows));
    if (deferred_count_ != 0) second_pass(wait_ns);
    stats.rows_scanned += c_.rows;
    for (std::uint32_t q = 0; q < n_; ++q) counts[q] = tops_[q].sort_best_first();
  }

 private:
  enum class Kind : std::uint8_t { absent, torn, live, retry };
  struct RowState {
    Kind kind = Kind::absent;
    std::uint32_t live = 0;  // index among the block's live rows
    Scored seen;
  };

  void block(std::uint32_t first, std::uint32_t end) noexcept {
    if (panel_ != nullptr) {  // the next block's header lines and first rows load while this one is scored
      const std::uint32_t ahead_end = std::min(c_.rows, end + kSearchBatchRows);
      for (std::uint32_t i = end; i < ahead_end; ++i) __builtin_prefetch(&c_.row(i));
      for (std::uint32_t r = 0; r < detail::kPanelRows; ++r) next_block_[r] = c_.row_data(std::min(end + r, c_.rows - 1));
    }
    std::uint32_t live = 0;
    for (std::uint32_t i = first; i < end; ++i) {
      RowState& st = states_[i - first];
      const VectorRowHeader& r = c_.row(i);
      st.seen.epoch = r.epoch.load(std::memory_order_acquire);  // pairs with the writer's release
      if (epoch_odd(st.seen.epoch)) {
        st.kind = Kind::retry;
        continue;
      }
      const std::uint32_t flags = r.flags.load(std::memory_order_relaxed);
      if ((flags & kRowPresent) == 0) {
        st.kind = Kind::absent;
      } else if ((flags & kRowTorn) != 0) {
        st.kind = Kind::torn;
      } else {
        st.kind = Kind::live;
        st.seen.generation = r.generation.load(std::memory_order_relaxed);
        st.seen.norm = std::bit_cast<float>(r.norm_bits.load(std::memory_order_relaxed));
        st.live = live;
        live_norms_[live] = st.seen.norm;
        live_rows_[live++] = c_.row_data(i);
      }
    }
    score_live(live);
    std::atomic_thread_fence(std::memory_order_acquire);  // the kernels' reads happen before the re-checks
    for (std::uint32_t i = first; i < end; ++i) {
      RowState& st = states_[i - first];
      switch (st.kind) {
        case Kind::absent: break;
        case Kind::torn: ++stats_->skipped_torn; break;
        case Kind::live:
          if (c_.row(i).epoch.load(std::memory_order_relaxed) == st.seen.epoch) {
            consider(i, st.seen, &raw_[st.live], kSearchBatchRows, wanted_[st.live]);
          } else {
            one_row(i);
          }
          break;
        case Kind::retry: one_row(i); break;
      }
    }
  }

  // raw_[q * kSearchBatchRows + l]: query q against the block's live row l, for the queries in
  // wanted_[l]; the row kernel's result (or one bit-identical to it).
  void score_live(std::uint32_t live) noexcept {
    const std::uint32_t tiled = panel_n_ == 32 ? 0U : all_ & ~((std::uint32_t{1} << panel_n_) - 1U);
    std::fill_n(wanted_.begin(), live, tiled);
    if (panel_n_ != 0) score_panels(live);
    float tile_out[detail::kTileSide * detail::kTileSide];
    for (std::uint32_t q = panel_n_; q < n_; q += detail::kTileSide) {
      const bool whole_q = q + detail::kTileSide <= n_;
      for (std::uint32_t l = 0; l < live; l += detail::kTileSide) {
        if (tile_ != nullptr && whole_q && l + detail::kTileSide <= live) {
          tile_(&queries_[q], &live_rows_[l], c_.dim, tile_out);
          for (std::uint32_t r = 0; r < detail::kTileSide; ++r)
            for (std::uint32_t j = 0; j < detail::kTileSide; ++j)
              raw_[(q + j) * kSearchBatchRows + l + r] = tile_out[r * detail::kTileSide + j];
          continue;
        }
        for (std::uint32_t j = q; j < std::min(n_, q + detail::kTileSide); ++j)
          for (std::uint32_t r = l; r < std::min(live, l + detail::kTileSide); ++r)
            raw_[j * kSearchBatchRows + r] = c_.kernel(queries_[j], live_rows_[r], c_.dim);
      }
    }
  }

  static constexpr std::uint32_t kNoQuery = ~std::uint32_t{0};  // a panel lane without a query

  // The highest rank the row kernel can give a pair whose panel dot product is d, as PanelBound's
  // terms: cosine d / (|q| |x|) + slack; dot d + slack |q| |x|; l2 minus the squared distance by
  // norms, |q|^2 - 2d + |x|^2, plus slack (|q| + |x|)^2 (plus, for both, room for underflow).
  void set_bound_terms(detail::PanelBound& b, std::uint32_t j, std::uint32_t q) const noexcept {
    constexpr float kUnderflow = std::numeric_limits<float>::min() * static_cast<float>(kSearchPanelDims);
    b.worst[j] = std::numeric_limits<float>::infinity();  // an empty lane never wants a row
    b.a[j] = b.b[j] = b.c[j] = 0.0F;
    if (q == kNoQuery) return;
    if constexpr (M == Metric::cosine) {
      b.a[j] = inv_norms_[q];
      b.b[j] = slack_;
    } else if constexpr (M == Metric::dot) {
      b.a[j] = 1.0F;
      b.b[j] = kUnderflow;
      b.c[j] = slack_ * norms_[q];
    } else {
      b.a[j] = 2.0F;
      b.b[j] = (slack_ - 1.0F) * squares_[q] + kUnderflow;
      b.c[j] = 2.0F * slack_ * norms_[q];
    }
  }

  [[nodiscard]] detail::PanelRowTerms row_terms(std::uint32_t l, std::uint32_t m) const noexcept {
    detail::PanelRowTerms t{};
    for (std::uint32_t r = 0; r < m; ++r) {
      const float norm = live_norms_[l + r];
      if constexpr (M == Metric::cosine) {
        t.a[r] = norm > 0.0F ? 1.0F / norm : 0.0F;  // cosine ranks of zero rows are 0 either way
      } else {
        t.a[r] = 1.0F;
        t.c[r] = norm;
        if constexpr (M == Metric::l2) t.d[r] = (slack_ - 1.0F) * norm * norm;
      }
    }
    return t;
  }

  void score_panels(std::uint32_t live) noexcept {
    std::array<const float*, detail::kPanelRows> rows{};
    std::array<const float*, detail::kPanelRows> next{};
    std::array<std::uint16_t, detail::kPanelRows> panel_wanted{};
    for (std::uint32_t q = 0; q < panel_n_; ++q)
      bounds_[q / detail::kPanelQueries].worst[q % detail::kPanelQueries] = tops_[q].worst();
    for (std::uint32_t l = 0; l < live; l += detail::kPanelRows) {
      const std::uint32_t m = std::min(detail::kPanelRows, live - l);
      for (std::uint32_t r = 0; r < detail::kPanelRows; ++r) {
        rows[r] = live_rows_[l + std::min(r, m - 1)];  // a short panel repeats its last row
        const std::uint32_t ahead = l + detail::kPanelRows + r;
        next[r] = ahead < live ? live_rows_[ahead] : next_block_[r];
      }
      const detail::PanelRowTerms terms = row_terms(l, m);
      for (std::uint32_t g = 0; g < panel_n_; g += detail::kPanelQueries) {
        panel_(qt_.data() + std::size_t{g} * c_.dim, rows.data(), next.data(), c_.dim, bounds_[g / detail::kPanelQueries],
               terms, panel_wanted.data());
        const std::uint32_t lanes = std::min(detail::kPanelQueries, panel_n_ - g);
        const std::uint32_t lane_mask = (std::uint32_t{1} << lanes) - 1U;
        for (std::uint32_t r = 0; r < m; ++r) {
          for (std::uint32_t bits = panel_wanted[r] & lane_mask; bits != 0; bits &= bits - 1) {
            const std::uint32_t q = g + static_cast<std::uint32_t>(std::countr_zero(bits));
            raw_[q * kSearchBatchRows + l + r] = c_.kernel(queries_[q], rows[r], c_.dim);
            wanted_[l + r] |= std::uint32_t{1} << q;
          }
        }
      }
    }
  }

  // raw[q * stride]: query q's raw score of row i, for the queries in `wanted`. The slot check runs
  // once per row, and only when some query would take it.
  void consider(std::uint32_t i, const Scored& s, const float* raw, std::size_t stride, std::uint32_t wanted) noexcept {
    ++stats_->rows_scored;
    int holds = -1;  // unknown
    for (std::uint32_t q = 0; q < n_; ++q) {
      if ((wanted >> q & 1U) == 0) continue;
      const float rank = rank_of<M>(raw[q * stride], s.norm, inv_norms_[q]);
      if (!tops_[q].wants(rank)) continue;
      if (holds < 0) holds = detail::slot_holds(c_.slot(i), s.generation) ? 1 : 0;
      if (holds == 1) tops_[q].push(i, s.generation, rank);
    }
  }

  // One seqlock read of row i, scoring every query in place.
  RowRead read_one(std::uint32_t i, Scored& s) noexcept {
    const VectorRowHeader& r = c_.row(i);
    s.epoch = r.epoch.load(std::memory_order_acquire);  // pairs with the writer's release
    if (epoch_odd(s.epoch)) return RowRead::held;
    const std::uint32_t flags = r.flags.load(std::memory_order_relaxed);
    if ((flags & kRowPresent) == 0) return RowRead::absent;
    if ((flags & kRowTorn) != 0) return RowRead::torn;
    s.generation = r.generation.load(std::memory_order_relaxed);
    s.norm = std::bit_cast<float>(r.norm_bits.load(std::memory_order_relaxed));
    for (std::uint32_t q = 0; q < n_; ++q) one_raw_[q] = c_.kernel(queries_[q], c_.row_data(i), c_.dim);
    std::atomic_thread_fence(std::memory_order_acquire);  // the kernels' reads happen before the re-check
    return r.epoch.load(std::memory_order_relaxed) == s.epoch ? RowRead::scored : RowRead::held;
  }

  // Scan::first_pass for one row, every query at once.
  void one_row(std::uint32_t i) noexcept {
    Scored s;
    for (int attempt = 1;; ++attempt) {
      switch (read_one(i, s)) {
        case RowRead::scored: consider(i, s, one_raw_.data(), 1, all_); return;
        case RowRead::absent: return;
        case RowRead::torn: ++stats_->skipped_torn; return;
        case RowRead::held: break;
      }
      if (attempt == kVectorScoreAttempts) break;
      ++stats_->retries;
      detail::cpu_relax();
    }
    if (deferred_count_ == deferred_.size()) {
      ++stats_->skipped_busy;
      return;
    }
    deferred_[deferred_count_++] = Deferred{i, s.epoch, core::monotonic_ns()};
  }

  // Scan::second_pass, every query at once.
  void second_pass(std::int64_t wait_ns) noexcept {
    const std::int64_t deadline = core::monotonic_ns() + std::max<std::int64_t>(wait_ns, 0);
    for (std::size_t d = 0; d < deferred_count_; ++d) {
      Deferred& held = deferred_[d];
      VectorRowHeader& r = c_.row(held.row);
      Scored s;
      for (int spins = 0;;) {
        const RowRead got = read_one(held.row, s);
        if (got == RowRead::scored) {
          consider(held.row, s, one_raw_.data(), 1, all_);
          break;
        }
        if (got == RowRead::absent) break;
        if (got == RowRead::torn) {
          ++stats_->skipped_torn;
          break;
        }
        const std::int64_t now = core::monotonic_ns();
        if (s.epoch != held.epoch) {
          held.epoch = s.epoch;
          held.seen_ns = now;
        }
        ++stats_->retries;
        if (epoch_odd(s.epoch) && c_.writable &&
            detail::recover_if_dead(*c_.header, r, s.epoch, held.seen_ns, now)) {
          ++stats_->recovered;
          continue;
        }
        if (now >= deadline) {
          ++stats_->skipped_busy;
          break;
        }
        detail::row_backoff(spins);
      }
    }
  }

  static_assert(kSearchBatchQueries <= 32, "wanted_ holds one bit per query");
  const ScanContext& c_;
  const float* inv_norms_;
  const float* norms_;
  const float* squares_;
  std::uint32_t n_;
  std::uint32_t all_;  // a bit for every query of the pass
  detail::TileKernel tile_;
  detail::PanelKernel panel_;
  std::uint32_t panel_n_ = 0;  // queries [0, panel_n_) go through the panels, the rest through the tiles
  float slack_;
  SearchStats* stats_ = nullptr;
  alignas(64) std::array<float, std::size_t{kSearchBatchQueries} * kSearchPanelDims> qt_;  // filled for panel_ only
  std::array<const float*, kSearchBatchQueries> queries_{};
  std::array<TopK, kSearchBatchQueries> tops_{};
  std::array<const float*, kSearchBatchRows> live_rows_{};
  std::array<float, kSearchBatchRows> live_norms_{};
  std::array<const float*, detail::kPanelRows> next_block_{};  // the next block's first rows, to prefetch
  std::array<detail::PanelBound, (kSearchBatchQueries + detail::kPanelQueries - 1) / detail::kPanelQueries> bounds_{};
  std::array<std::uint32_t, kSearchBatchRows> wanted_{};
  std::array<RowState, kSearchBatchRows> states_{};
  std::array<float, std::size_t{kSearchBatchQueries} * kSearchBatchRows> raw_{};
  std::array<float, kSearchBatchQueries> one_raw_{};
  std::array<Deferred, kVectorDeferredRows> deferred_{};
  std::size_t deferred_count_ = 0;
};

template <Metric M>
void run_batch(const ScanContext& c, const BatchQueries& queries, const detail::KernelTable& table,
               std::span<VectorHit> out, std::size_t k, std::span<std::size_t> counts, std::int64_t wait_ns,
               SearchStats& stats) noexcept {
  BatchScan<M> scan(c, queries, table, out, k);
  scan.run(wait_ns, stats, counts);
  for (std::uint32_t q = 0; q < queries.n; ++q)
    for (std::size_t i = 0; i < counts[q]; ++i) out[q * k + i].score = finish<M>(out[q * k + i].score);
}

// The query's norm, as search() checks it; false when not finite or past float range.
bool query_norm(std::span<const float> query, double& norm) noexcept {
  double sum = 0.0;
  for (const float x : query) sum += static_cast<double>(x) * static_cast<double>(x);
  norm = std::sqrt(sum);
  return std::isfinite(norm) && norm <= static_cast<double>(std::numeric_limits<float>::max());
}

float inverse_norm(double norm) noexcept { return norm > 0.0 ? static_cast<float>(1.0 / norm) : 0.0F; }

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

VectorStatus VectorStore::search_batch(std::span<const float> queries, const SearchOptions& options,
                                       std::span<VectorHit> out, std::span<std::size_t> counts,
                                       SearchStats* stats) const noexcept {
  std::fill(counts.begin(), counts.end(), std::size_t{0});
  if (dim_ == 0) return VectorStatus::no_vectors;
  const std::size_t n = queries.size() / dim_;
  if (n == 0 || queries.size() != n * dim_ || counts.size() != n || out.size() % n != 0)
    return VectorStatus::wrong_length;
  const detail::KernelTable* table = detail::kernel_table(options.kernel);
  if (table == nullptr) return VectorStatus::no_kernel;
  for (std::size_t q = 0; q < n; ++q) {
    double norm = 0.0;
    if (!query_norm(queries.subspan(q * dim_, dim_), norm)) return VectorStatus::not_finite;
  }
  const std::size_t k = out.size() / n;
  SearchStats local;
  SearchStats& s = stats != nullptr ? *stats : local;
  s = SearchStats{};
  if (k == 0) return VectorStatus::ok;

  const bool l2 = options.metric == Metric::l2;
  const ScanContext c{header_,     rows_base_, slots_base_, row_stride_, slot_stride_, rows_, dim_, !read_only_,
                      nullptr,     0.0F,       l2 ? table->l2sq : table->dot};
  std::array<float, kSearchBatchQueries> inv_norms{};
  std::array<float, kSearchBatchQueries> norms{};
  std::array<float, kSearchBatchQueries> squares{};
  for (std::size_t first = 0; first < n; first += kSearchBatchQueries) {
    const auto group = static_cast<std::uint32_t>(std::min<std::size_t>(kSearchBatchQueries, n - first));
    for (std::uint32_t q = 0; q < group; ++q) {
      double norm = 0.0;
      (void)query_norm(queries.subspan((first + q) * dim_, dim_), norm);  // finite: checked above
      inv_norms[q] = inverse_norm(norm);
      norms[q] = static_cast<float>(norm);
      squares[q] = static_cast<float>(norm * norm);
    }
    const BatchQueries at{queries.data() + first * dim_, inv_norms.data(), norms.data(), squares.data(), group};
    const std::span<VectorHit> hits = out.subspan(first * k, std::size_t{group} * k);
    const std::span<std::size_t> group_counts = counts.subspan(first, group);
    switch (options.metric) {
      case Metric::cosine:
        run_batch<Metric::cosine>(c, at, *table, hits, k, group_counts, options.wait_ns, s);
        break;
      case Metric::dot: run_batch<Metric::dot>(c, at, *table, hits, k, group_counts, options.wait_ns, s); break;
      case Metric::l2: run_batch<Metric::l2>(c, at, *table, hits, k, group_counts, options.wait_ns, s); break;
    }
  }
  return VectorStatus::ok;
}

}  // namespace weir::core
