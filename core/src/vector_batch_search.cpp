// Batched top-k search: one pass over the vector rows for up to kSearchBatchQueries queries, each row
// scored in place inside its seqlock window, each query answered as search() answers it alone.
// Nothing is allocated. Protocol: docs/design/vectors.md ("Batched search").
#include <algorithm>
#include <array>
#include <bit>
#include <limits>

#include "backing.hpp"
#include "vector_panel.hpp"
#include "vector_scan.hpp"

namespace weir::core {

namespace {

using detail::Deferred;
using detail::kRowPresent;
using detail::kRowTorn;
using detail::RowRead;
using detail::ScanContext;
using detail::Scored;
using detail::TopK;
using detail::finish;
using detail::inverse_norm;
using detail::query_norm;
using detail::rank_of;

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
    for (std::uint32_t bits = wanted; bits != 0; bits &= bits - 1) {
      const auto q = static_cast<std::uint32_t>(std::countr_zero(bits));
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

}  // namespace

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
  // One query: the one-query scan is that query's answer, and it prefetches for one query's pace.
  if (n == 1) return search(queries, options, out, counts[0], &s);

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
