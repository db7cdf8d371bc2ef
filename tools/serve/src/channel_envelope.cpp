// A channel's envelope frame: min/max in buckets over the span a view asks for. Sources: the raw
// float history (the newest blocks), the serve's own min/max levels (MinMaxHistory, one entry per
// pyramid_factor^(k+1) samples, back to when the feed began) and the arena's pyramid levels (back as
// far as their entries go). The frame has as many columns as asked (or as the finest source there
// allows), each part of the span drawn from the coarsest source whose entries are no wider than a
// column, else from the finest that holds it: entries narrower than a column go to the column their
// first sample falls in (buckets may span a non-integer number of entries), wider ones to every
// column they overlap, so that old data only a coarse level still holds shows blocky rather than
// as missing columns. A bucket that no source fills (before the first sample, lost), or that holds
// a gap block's place in the stream, is NaN, and the frame says so (kFrameGap).
#include <algorithm>
#include <cmath>
#include <limits>

#include "channel_feed.hpp"

namespace weir::serve {

namespace {

constexpr std::uint64_t kPretriggerDivisor = 10;  // a triggered view starts span / 10 before the crossing
constexpr std::size_t kMaxParts = 8;              // parts of a span still to fill, while sources are tried
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

struct Part {
  std::uint64_t lo = 0, hi = 0;
};

}  // namespace

struct ChannelFeed::Source {
  enum class Kind : std::uint8_t { raw, mid, pyramid } kind = Kind::raw;
  std::uint32_t index = 0;           // which of mids_, or which pyramid level
  std::uint64_t begin = 0, end = 0;  // samples it holds (complete entries)
  std::uint64_t resolution = 1;      // samples per entry
  [[nodiscard]] bool holds(std::uint64_t lo, std::uint64_t hi) const noexcept {
    return std::max(lo, begin) < std::min(hi, end);
  }
};

struct ChannelFeed::Grid {
  std::uint64_t first = 0;  // sample where bucket 0 starts
  std::uint64_t count = 0;  // samples the buckets cover
  std::size_t buckets = 0;
  double step = 1;
  [[nodiscard]] std::size_t bucket(std::uint64_t sample) const noexcept {
    if (sample <= first) return 0;
    return std::min(buckets - 1, static_cast<std::size_t>(static_cast<double>(sample - first) / step));
  }
};

// Folds the entries of `src` that overlap samples [from, to) into the buckets.
void ChannelFeed::fold(const Grid& g, const Source& src, std::uint64_t from, std::uint64_t to) {
  const std::uint64_t r = src.resolution;
  const bool wide = static_cast<double>(r) > g.step;
  const auto put = [&](std::uint64_t at, float lo, float hi) {
    if (std::isnan(lo) || std::isnan(hi)) return;
    const std::size_t last = wide ? g.bucket(at + r - 1) : g.bucket(at);
    for (std::size_t b = g.bucket(at); b <= last; ++b) {
      mins_[b] = std::isnan(mins_[b]) ? lo : std::min(mins_[b], lo);
      maxs_[b] = std::isnan(maxs_[b]) ? hi : std::max(maxs_[b], hi);
    }
  };
  const std::uint64_t e_first = from / r;
  const std::uint64_t e_end = (to + r - 1) / r;
  switch (src.kind) {
    case Source::Kind::raw:
      for (std::uint64_t s = from; s < to; ++s) put(s, history_.at(s), history_.at(s));
      break;
    case Source::Kind::mid:
      for (std::uint64_t e = e_first; e < e_end; ++e) {
        float lo = 0, hi = 0;
        mids_[src.index].entry(e, lo, hi);
        put(e * r, lo, hi);
      }
      break;
    case Source::Kind::pyramid: {
      // One bucket per entry: core::envelope() then reads exactly this level (or a coarser one when
      // the writer overtook it: those entries stay NaN and the part is left to the next source).
      const auto n = static_cast<std::size_t>(e_end - e_first);
      entry_lo_.resize(n);
      entry_hi_.resize(n);
      core::envelope(*arena_, channel_, e_first * r, n * r, entry_lo_, entry_hi_);
      for (std::size_t i = 0; i < n; ++i) put((e_first + i) * r, entry_lo_[i], entry_hi_[i]);
      break;
    }
  }
}

void ChannelFeed::mark_gaps(const Grid& g) {
  const std::uint64_t held = std::min<std::uint64_t>(gap_count_, gaps_.size());
  for (std::uint64_t k = 0; k < held; ++k) {
    const std::uint64_t at = gaps_[k];
    if (at <= g.first || at >= g.first + g.count) continue;  // on an edge: nothing on one side to break
    const std::size_t b = g.bucket(at);
    mins_[b] = maxs_[b] = kNaN;
  }
}

std::string ChannelFeed::envelope_frame(const View& view) {
  const core::ChannelDesc& d = copier_.desc();
  const std::uint64_t span = std::clamp(view.span, kMinSpanSamples, reach());
  const auto columns = static_cast<std::size_t>(std::clamp(view.columns, kMinColumns, kMaxColumns));
  const std::uint64_t written = d.samples_written.load(std::memory_order_acquire);
  const std::uint64_t newest = history_.end() > history_.begin() ? history_.end() : written;
  const std::uint64_t end = newest > view.offset ? newest - view.offset : 0;

  // What each source holds, finest first (the serve's own level before the pyramid's of the same
  // resolution). A pyramid level keeps pyramid_entries entries, less one block that the writer may
  // be overwriting (as core::envelope() reads them).
  std::array<Source, 2 * core::kPyramidLevels> sources{};
  std::size_t n_sources = 0;
  sources[n_sources++] = Source{Source::Kind::raw, 0, history_.begin(), history_.end(), 1};
  std::uint64_t entry = 1;
  for (std::uint32_t level = 0; level < std::min(d.pyramid_levels, core::kPyramidLevels); ++level) {
    entry *= d.pyramid_factor;
    if (level < mids_.size()) {
      const MinMaxHistory& m = mids_[level];
      sources[n_sources++] = Source{Source::Kind::mid, level, m.begin(), m.end(), m.factor()};
    }
    const std::uint64_t reach_entries = (written + d.samples_per_block) / entry;
    const std::uint64_t oldest = reach_entries > d.pyramid_entries ? reach_entries - d.pyramid_entries + 1 : 0;
    sources[n_sources++] = Source{Source::Kind::pyramid, level, oldest * entry, written / entry * entry, entry};
  }
  std::uint64_t oldest = end;
  for (std::size_t i = 0; i < n_sources; ++i)
    if (sources[i].begin < sources[i].end) oldest = std::min(oldest, sources[i].begin);

  FrameHeader h;
  h.channel = channel_;
  h.newest_monotonic_ns = newest_mono_ns_;
  // A span longer than the history starts at the oldest sample there is: the frame covers less.
  std::uint64_t first = end > span ? end - span : 0;
  if (first < oldest && oldest < end) first = oldest;
  std::uint64_t last = end;
  h.anchor = static_cast<double>(end);
  if (view.trigger != Trigger::off && span - span / kPretriggerDivisor < end) {
    const std::uint64_t post = span - span / kPretriggerDivisor;
    const std::uint64_t before = end - post;
    const std::uint64_t window = std::max<std::uint64_t>(2 * span, 4ULL * d.samples_per_block);
    if (auto at = crossing(view, before > window ? before - window : 0, before)) {
      first = *at - std::min(*at, span / kPretriggerDivisor);
      last = first + span;
      h.anchor = static_cast<double>(*at);
      h.flags |= kFrameTriggered;
    }
  }

  // Columns: as asked, unless even the finest source holding part of the span is coarser; bucket 0
  // starts at an entry of the coarsest source no wider than a column, so they do not shimmer.
  const std::uint64_t wanted = std::max<std::uint64_t>(last - first, 1);
  const double nominal = static_cast<double>(wanted) / static_cast<double>(columns);
  std::uint64_t finest = 0, align = 1;
  for (std::size_t i = 0; i < n_sources; ++i) {
    if (!sources[i].holds(first, last)) continue;
    if (finest == 0) finest = sources[i].resolution;
    if (static_cast<double>(sources[i].resolution) <= nominal) align = std::max(align, sources[i].resolution);
  }
  Grid g;
  g.first = first - first % align;
  g.count = std::max<std::uint64_t>(last - g.first, 1);
  g.buckets = static_cast<std::size_t>(std::clamp<std::uint64_t>(g.count / std::max<std::uint64_t>(finest, 1), 1, columns));
  g.step = static_cast<double>(g.count) / static_cast<double>(g.buckets);
  // Never past the frame's end: bucket times stay at or before the anchor.
  while (static_cast<double>(g.first) + static_cast<double>(g.buckets) * g.step > static_cast<double>(g.first + g.count))
    g.step = std::nextafter(g.step, 0.0);
  mins_.assign(g.buckets, kNaN);
  maxs_.assign(g.buckets, kNaN);

  // Sources in order of preference: no wider than a column, coarsest first; then wider, finest first.
  std::array<std::size_t, 2 * core::kPyramidLevels> order{};
  std::size_t n_order = 0;
  for (std::size_t i = n_sources; i-- > 0;)
    if (static_cast<double>(sources[i].resolution) <= g.step) order[n_order++] = i;
  for (std::size_t i = 0; i < n_sources; ++i)
    if (static_cast<double>(sources[i].resolution) > g.step) order[n_order++] = i;
  // Same resolution: the serve's own level (listed first) before the pyramid's.
  for (std::size_t k = 0; k + 1 < n_order; ++k)
    if (sources[order[k]].resolution == sources[order[k + 1]].resolution &&
        sources[order[k]].kind == Source::Kind::pyramid && sources[order[k + 1]].kind == Source::Kind::mid)
      std::swap(order[k], order[k + 1]);
  std::array<Part, kMaxParts> todo{};
  std::size_t n_todo = 0;
  todo[n_todo++] = Part{g.first, g.first + g.count};
  bool raw_only = true, drawn = false;
  for (std::size_t k = 0; k < n_order && n_todo > 0; ++k) {
    const Source& src = sources[order[k]];
    std::array<Part, kMaxParts> left{};
    std::size_t n_left = 0;
    for (std::size_t p = 0; p < n_todo; ++p) {
      const Part part = todo[p];
      const std::uint64_t lo = std::max(part.lo, src.begin);
      const std::uint64_t hi = std::min(part.hi, src.end);
      if (lo >= hi || n_left + 2 > kMaxParts) {
        if (n_left < kMaxParts) left[n_left++] = part;
        continue;
      }
      fold(g, src, lo, hi);
      raw_only = raw_only && src.kind == Source::Kind::raw;
      drawn = true;
      if (part.lo < lo) left[n_left++] = Part{part.lo, lo};
      if (hi < part.hi) left[n_left++] = Part{hi, part.hi};
    }
    todo = left;
    n_todo = n_left;
  }
  if (raw_only && drawn) h.flags |= kFrameRaw;
  mark_gaps(g);
  if (std::any_of(mins_.begin(), mins_.end(), [](float v) { return std::isnan(v); })) h.flags |= kFrameGap;
  h.first = static_cast<double>(g.first);
  h.step = g.step;
  h.span = g.count;
  return encode_frame(h, mins_, maxs_);
}

}  // namespace weir::serve
