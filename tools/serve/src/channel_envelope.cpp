// A channel's envelope frame: min/max in buckets over the span a view asks for, from the finest data
// that reaches back far enough. Sources, finest first: the raw float history (the newest blocks),
// the serve's own min/max levels (MinMaxHistory, one entry per pyramid_factor^(k+1) samples) and the
// arena's pyramid levels, by resolution. The frame takes the coarsest source that still gives every column an
// entry, else the finest that reaches back (fewer columns: at least half the asked, since each
// source reaches back as far as the next coarser one needs to give half the widest view's columns).
// Buckets may span a non-integer number of entries: each entry goes to the column its first sample
// falls in. Newer data than a coarse source holds comes from the finer ones, so a peak shows as soon
// as its block. A bucket that no source fills (before the first sample, lost), or that holds a gap
// block's place in the stream, is NaN, and the frame says so (kFrameGap).
#include <algorithm>
#include <cmath>
#include <limits>

#include "channel_feed.hpp"

namespace weir::serve {

namespace {

constexpr std::uint64_t kPretriggerDivisor = 10;  // a triggered view starts span / 10 before the crossing
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

enum class SourceKind : std::uint8_t { raw, mid, pyramid };

struct Source {
  SourceKind kind = SourceKind::raw;
  std::size_t mid = 0;               // which of the serve's levels (kind mid)
  std::uint64_t begin = 0, end = 0;  // samples it holds (complete entries)
  std::uint64_t resolution = 1;      // samples per entry
  [[nodiscard]] bool empty() const noexcept { return end <= begin; }
  [[nodiscard]] bool reaches(std::uint64_t first) const noexcept {
    return !empty() && begin <= first - first % resolution;
  }
};

}  // namespace

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

// Folds what the serve's own data holds of samples [from, to) into the buckets: the entries of its
// min/max levels from `coarsest_mid` down, each going on where the coarser one ends (its newest
// entries are not complete yet), then raw samples from where the finest ends.
void ChannelFeed::fold_finer(const Grid& g, std::uint64_t from, std::uint64_t to, std::size_t coarsest_mid) {
  const auto fold = [&](std::uint64_t at, float lo, float hi) {
    const std::size_t b = g.bucket(at);
    mins_[b] = std::isnan(mins_[b]) ? lo : std::min(mins_[b], lo);
    maxs_[b] = std::isnan(maxs_[b]) ? hi : std::max(maxs_[b], hi);
  };
  std::uint64_t raw_from = from;
  for (std::size_t k = std::min(coarsest_mid + 1, mids_.size()); k-- > 0;) {
    const MinMaxHistory& m = mids_[k];
    if (!(m.begin() <= raw_from && raw_from < m.end())) continue;
    const std::uint64_t factor = m.factor();
    for (std::uint64_t e = raw_from / factor; e * factor < std::min(to, m.end()); ++e) {
      float lo = 0, hi = 0;
      m.entry(e, lo, hi);
      fold(e * factor, lo, hi);
    }
    raw_from = m.end();
  }
  for (std::uint64_t s = std::max(raw_from, history_.begin()); s < std::min(to, history_.end()); ++s) {
    const float v = history_.at(s);
    fold(s, v, v);
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

  // What each source holds. A pyramid level keeps pyramid_entries entries, less one block that the
  // writer may be overwriting (as core::envelope() reads them).
  // Finest first; the serve's own level before the pyramid's of the same resolution.
  std::array<Source, 2 * core::kPyramidLevels> sources{};
  std::size_t n_sources = 0;
  sources[n_sources++] = Source{SourceKind::raw, 0, history_.begin(), history_.end(), 1};
  std::uint64_t entry = 1;
  for (std::uint32_t level = 0; level < std::min(d.pyramid_levels, core::kPyramidLevels); ++level) {
    entry *= d.pyramid_factor;
    if (level < mids_.size())
      sources[n_sources++] = Source{SourceKind::mid, level, mids_[level].begin(), mids_[level].end(), mids_[level].factor()};
    const std::uint64_t reach_entries = (written + d.samples_per_block) / entry;
    const std::uint64_t oldest = reach_entries > d.pyramid_entries ? reach_entries - d.pyramid_entries + 1 : 0;
    sources[n_sources++] = Source{SourceKind::pyramid, 0, oldest * entry, written / entry * entry, entry};
  }
  const std::uint64_t top = entry;  // samples per entry of the coarsest level
  std::uint64_t oldest = end;
  for (std::size_t i = 0; i < n_sources; ++i)
    if (!sources[i].empty()) oldest = std::min(oldest, sources[i].begin);

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

  // The coarsest source that reaches back and gives every column an entry, else the finest that
  // reaches back (the coarsest level when none does: its buckets before its reach stay NaN).
  std::size_t pick = n_sources;
  for (std::size_t i = 0; i < n_sources; ++i) {
    const Source& s = sources[i];
    if (!s.reaches(first) || (s.kind == SourceKind::raw && s.end < last)) continue;
    if (pick == n_sources) pick = i;
    if ((last - (first - first % s.resolution)) / s.resolution >= columns) pick = i;
  }
  if (pick == n_sources) pick = n_sources - 1;
  const Source& src = sources[pick];
  Grid g;
  g.first = first - first % src.resolution;
  g.count = std::max<std::uint64_t>(last - g.first, 1);
  g.buckets = static_cast<std::size_t>(std::clamp<std::uint64_t>(g.count / src.resolution, 1, columns));
  g.step = static_cast<double>(g.count) / static_cast<double>(g.buckets);
  // Never past the frame's end: bucket times stay at or before the anchor.
  while (static_cast<double>(g.first) + static_cast<double>(g.buckets) * g.step > static_cast<double>(g.first + g.count))
    g.step = std::nextafter(g.step, 0.0);
  mins_.assign(g.buckets, kNaN);
  maxs_.assign(g.buckets, kNaN);
  switch (src.kind) {
    case SourceKind::raw:
      history_.envelope(g.first, g.count, mins_, maxs_);
      h.flags |= kFrameRaw;
      break;
    case SourceKind::mid: fold_finer(g, g.first, g.first + g.count, src.mid); break;
    case SourceKind::pyramid:
      core::envelope(*arena_, channel_, g.first, g.count, mins_, maxs_);
      // The pyramid holds only complete entries: what is newer comes from the finer sources.
      fold_finer(g, std::max(g.first, written - written % top), g.first + g.count, mids_.size());
      break;
  }
  mark_gaps(g);
  if (std::any_of(mins_.begin(), mins_.end(), [](float v) { return std::isnan(v); })) h.flags |= kFrameGap;
  h.first = static_cast<double>(g.first);
  h.step = g.step;
  h.span = g.count;
  return encode_frame(h, mins_, maxs_);
}

}  // namespace weir::serve
