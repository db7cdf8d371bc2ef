#include "channel_feed.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace weir::serve {

namespace {

constexpr std::size_t kHistoryBlocks = 64;            // the float history holds this many blocks ...
constexpr std::size_t kMinHistorySamples = 1U << 16;  // ... but at least this many samples
constexpr std::size_t kMaxHistorySamples = 1U << 22;  // ... and at most this many
constexpr std::uint64_t kMaxBlocksPerPoll = 256;      // bound on one poll; older blocks are skipped
constexpr std::uint64_t kPretriggerDivisor = 10;      // a triggered view starts span / 10 before the crossing

std::size_t history_capacity(const core::BlockCopier& c) {
  return std::clamp(std::size_t{c.samples_per_block()} * kHistoryBlocks, kMinHistorySamples, kMaxHistorySamples);
}

}  // namespace

core::Result<ChannelFeed> ChannelFeed::open(const core::Arena& arena, std::uint32_t channel) {
  auto copier = core::BlockCopier::open(arena, channel);
  if (!copier) return tl::make_unexpected(copier.error());
  return ChannelFeed(arena, channel, *copier);
}

ChannelFeed::ChannelFeed(const core::Arena& arena, std::uint32_t channel, core::BlockCopier copier)
    : arena_(&arena), channel_(channel), copier_(copier), dtype_(static_cast<core::Dtype>(copier.desc().dtype)),
      frame_(core::frame_shape(copier.desc())), history_(history_capacity(copier)) {
  raw_.resize(copier_.block_bytes());
  const std::uint64_t head = copier_.head();
  next_seq_ = head > kHistoryBlocks ? head - kHistoryBlocks : 0;  // start with what the history can hold
}

std::uint64_t ChannelFeed::reach() const noexcept {
  const core::ChannelDesc& d = copier_.desc();
  std::uint64_t reach = d.pyramid_entries;
  for (std::uint32_t level = 0; level < d.pyramid_levels; ++level) reach *= d.pyramid_factor;
  return std::max<std::uint64_t>(reach, kMinSpanSamples);
}

void ChannelFeed::poll() {
  if (frame_.framed()) poll_frames();
  else poll_samples();
}

void ChannelFeed::poll_samples() {
  const std::uint64_t head = copier_.head();
  const std::uint64_t ring = copier_.ring_blocks();
  if (head > next_seq_ + std::min(ring, kMaxBlocksPerPoll)) {  // too far behind: skip to what is still there
    next_seq_ = head - std::min(ring / 2, kMaxBlocksPerPoll);
    history_.reset();
  }
  for (; next_seq_ < head; ++next_seq_) {
    core::BlockRecord rec;
    const core::BlockStatus status = copier_.copy(next_seq_, raw_, rec);
    if (status == core::BlockStatus::unwritten) break;  // published head, state not yet committed: next poll
    if (status != core::BlockStatus::ok || (rec.flags & core::kBlockGapFlag) != 0 || rec.samples == 0) {
      history_.reset();
      continue;
    }
    scratch_.resize(rec.samples);
    for (std::size_t j = 0; j < rec.samples; ++j) scratch_[j] = scope::sample_as_float(dtype_, raw_.data(), j);
    history_.append(rec.first_sample, scratch_);
    newest_mono_ns_ = rec.monotonic_ns;
  }
}

void ChannelFeed::poll_frames() {
  const std::uint64_t head = copier_.head();
  if (head == 0 || head == next_seq_) return;
  core::BlockRecord rec;
  if (copier_.copy(head - 1, raw_, rec) != core::BlockStatus::ok || rec.samples < frame_.frame_elements) return;
  const std::uint32_t frames = rec.samples / frame_.frame_elements;
  const std::size_t at = std::size_t{frames - 1} * frame_.frame_elements;  // the block's newest frame
  spectrum_.resize(frame_.frame_elements);
  for (std::size_t j = 0; j < frame_.frame_elements; ++j)
    spectrum_[j] = scope::sample_as_float(dtype_, raw_.data(), at + j);
  spectrum_index_ = rec.first_sample / frame_.frame_elements + frames - 1;
  newest_mono_ns_ = rec.monotonic_ns;
  next_seq_ = head;
}

std::string ChannelFeed::frame(const View& view) {
  return view.kind == FrameKind::spectrum ? spectrum_frame() : envelope_frame(view);
}

std::string ChannelFeed::spectrum_frame() {
  FrameHeader h;
  h.kind = FrameKind::spectrum;
  h.channel = channel_;
  h.first = frame_.axis.start;
  h.step = frame_.axis.step;
  h.anchor = static_cast<double>(spectrum_index_);
  h.newest_monotonic_ns = newest_mono_ns_;
  h.span = spectrum_.empty() ? 0 : spectrum_index_ + 1;
  return encode_frame(h, spectrum_, {});
}

std::optional<std::uint64_t> ChannelFeed::crossing(const View& view, std::uint64_t first, std::uint64_t last) const {
  first = std::max(first, history_.begin() + 1);
  last = std::min(last, history_.end() > 0 ? history_.end() - 1 : 0);
  for (std::uint64_t s = last; s >= first && s > 0; --s) {  // newest first
    const float before = history_.at(s - 1);
    const float now = history_.at(s);
    if (view.trigger == Trigger::rising ? (before < view.level && now >= view.level)
                                        : (before > view.level && now <= view.level))
      return s;
  }
  return std::nullopt;
}

void ChannelFeed::fill_from_history(std::uint64_t first, std::uint64_t count, std::uint64_t tail) {
  // The pyramid holds only complete entries: samples past `tail` (the newest, in entries not complete
  // yet), and buckets it left empty, come from the raw history, so a peak shows as soon as its block.
  const std::size_t buckets = mins_.size();
  for (std::size_t i = 0; i < buckets; ++i) {
    const bool empty = std::isnan(mins_[i]);
    const std::uint64_t lo = std::max({first + count * i / buckets, history_.begin(), empty ? 0 : tail});
    const std::uint64_t hi = std::min(first + count * (i + 1) / buckets, history_.end());
    if (lo >= hi) continue;
    float mn = empty ? std::numeric_limits<float>::infinity() : mins_[i];
    float mx = empty ? -std::numeric_limits<float>::infinity() : maxs_[i];
    for (std::uint64_t s = lo; s < hi; ++s) {
      mn = std::min(mn, history_.at(s));
      mx = std::max(mx, history_.at(s));
    }
    mins_[i] = mn;
    maxs_[i] = mx;
  }
}

std::string ChannelFeed::envelope_frame(const View& view) {
  const core::ChannelDesc& d = copier_.desc();
  const std::uint64_t span = std::clamp(view.span, kMinSpanSamples, reach());
  const auto columns = static_cast<std::size_t>(std::clamp(view.columns, kMinColumns, kMaxColumns));
  // relaxed: a display position; envelope() and the history validate what they read
  const std::uint64_t written = d.samples_written.load(std::memory_order_relaxed);
  const std::uint64_t newest = history_.end() > history_.begin() ? history_.end() : written;
  const std::uint64_t end = newest > view.offset ? newest - view.offset : 0;
  FrameHeader h;
  h.channel = channel_;
  h.newest_monotonic_ns = newest_mono_ns_;
  h.span = span;
  std::uint64_t first = end > span ? end - span : 0;
  h.anchor = static_cast<double>(end);
  if (view.trigger != Trigger::off && span - span / kPretriggerDivisor < end) {
    const std::uint64_t post = span - span / kPretriggerDivisor;
    const std::uint64_t last = end - post;
    const std::uint64_t window = std::max<std::uint64_t>(2 * span, 4ULL * d.samples_per_block);
    if (auto at = crossing(view, last > window ? last - window : 0, last)) {
      first = *at - std::min(*at, span / kPretriggerDivisor);
      h.anchor = static_cast<double>(*at);
      h.flags |= kFrameTriggered;
    }
  }
  if (span < columns * d.pyramid_factor && history_.covers(first, span)) {  // finer than the pyramid: raw samples
    const std::size_t buckets = static_cast<std::size_t>(std::min<std::uint64_t>(columns, span));
    mins_.assign(buckets, 0);
    maxs_.assign(buckets, 0);
    history_.envelope(first, span, mins_, maxs_);
    h.flags |= kFrameRaw;
    h.first = static_cast<double>(first);
    h.step = static_cast<double>(span) / static_cast<double>(buckets);
    return encode_frame(h, mins_, maxs_);
  }
  // The pyramid's coarsest level no wider than a column, or a coarser one when that level no longer
  // reaches back to `first`; buckets aligned to that level's entries, never narrower than one.
  const std::uint64_t back = written > first ? written - first : 0;
  std::uint64_t entry = d.pyramid_factor;
  std::uint32_t level = 0;
  for (; level + 1 < d.pyramid_levels && entry * d.pyramid_factor * columns <= span; ++level) entry *= d.pyramid_factor;
  for (; level + 1 < d.pyramid_levels && entry * d.pyramid_entries < back; ++level) entry *= d.pyramid_factor;
  const std::uint64_t aligned = first - first % entry;
  const std::uint64_t count = span + (first - aligned);
  const std::size_t buckets = static_cast<std::size_t>(std::clamp<std::uint64_t>(count / entry, 1, columns));
  mins_.assign(buckets, 0);
  maxs_.assign(buckets, 0);
  core::envelope(*arena_, channel_, aligned, count, mins_, maxs_);
  std::uint64_t top = d.pyramid_factor;  // samples per entry of the coarsest level
  for (std::uint32_t l = 1; l < d.pyramid_levels; ++l) top *= d.pyramid_factor;
  fill_from_history(aligned, count, written - written % top);
  h.first = static_cast<double>(aligned);
  h.step = static_cast<double>(count) / static_cast<double>(buckets);
  return encode_frame(h, mins_, maxs_);
}

}  // namespace weir::serve
