// How `weir scope` turns a channel into frames: blocks read in place feed a float history (trigger
// search, fine zoom); wider spans come from the channel's min/max pyramid via core::envelope().
#include "weir/scope/scope_display.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "weir/core/view_copy.hpp"

namespace weir::scope {

namespace {

constexpr std::uint64_t kDefaultSpanBlocks = 4;    // default span: this many blocks
constexpr std::uint64_t kMinSpanSamples = 16;      // '+' stops here
constexpr std::uint64_t kPretriggerDivisor = 10;   // a triggered view starts span / 10 before the crossing
constexpr std::uint64_t kTriggerWindowBlocks = 4;  // crossings older than 2 spans or this many blocks: auto
constexpr std::size_t kHistoryBlocks = 64;         // the float history holds this many blocks ...
constexpr std::size_t kMinHistorySamples = 1U << 16;  // ... but at least this many samples
constexpr std::size_t kMaxHistorySamples = 1U << 22;  // ... and at most this many
constexpr int kMaxBlocksPerRead = 8;               // bound on one read_blocks() call
constexpr double kLevelSteps = 20;                 // j/k move the level by 1/20 of the y range
constexpr std::size_t kLabelDigits = 8;            // "-1.23 m" and a space before the units

std::size_t history_capacity(const core::ChannelInfo& info) {
  const std::size_t wanted = std::size_t{info.samples_per_block} * kHistoryBlocks;
  return std::clamp(wanted, kMinHistorySamples, kMaxHistorySamples);
}

// How far back the pyramid's top level reaches: each level keeps pyramid_entries entries.
std::uint64_t pyramid_reach(const core::ChannelDesc& d) {
  std::uint64_t reach = d.pyramid_entries;
  for (std::uint32_t level = 0; level < d.pyramid_levels; ++level) reach *= d.pyramid_factor;
  return reach;
}

}  // namespace

ScopeDisplay::ScopeDisplay(const core::Arena& arena, core::ChannelReader& reader, core::ChannelInfo info,
                           const ScopeSettings& settings)
    : arena_(&arena), reader_(&reader), info_(std::move(info)),
      span_(settings.span_samples != 0 ? settings.span_samples
                                       : kDefaultSpanBlocks * std::uint64_t{info_.samples_per_block}),
      max_span_(std::max(kMinSpanSamples, pyramid_reach(reader.desc()))),
      trigger_on_(settings.trigger_level.has_value()), level_(settings.trigger_level.value_or(0)),
      level_set_(settings.trigger_level.has_value()), history_(history_capacity(info_)) {
  span_ = std::clamp(span_, kMinSpanSamples, max_span_);
}

std::uint64_t ScopeDisplay::pretrigger() const noexcept { return span_ / kPretriggerDivisor; }

bool ScopeDisplay::read_blocks() {
  bool any = false;
  for (int i = 0; i < kMaxBlocksPerRead; ++i) {
    core::BlockView block;
    std::uint64_t lost = 0;
    const core::NextStatus status = reader_->next(block, lost);
    if (status == core::NextStatus::empty) break;
    if (status == core::NextStatus::lost) continue;
    const std::uint64_t first = block.first_sample;
    // Copied out of the slot the one audited way, then validated: the writer may be reusing it.
    raw_.resize(std::size_t{block.samples} * reader_->desc().sample_bytes);
    core::copy_unvalidated(raw_.data(), block.data, raw_.size());
    if (!reader_->done(block)) {
      history_.reset();  // the writer reused the slot while we copied: what we read is torn
      continue;
    }
    scratch_.resize(block.samples);
    for (std::size_t j = 0; j < block.samples; ++j) scratch_[j] = sample_as_float(info_.dtype, raw_.data(), j);
    history_.append(first, scratch_);
    any = true;
  }
  return any;
}

bool ScopeDisplay::apply(Key key) {
  const double step = (range_.hi - range_.lo) / kLevelSteps;
  switch (key) {
    case Key::quit: return false;
    case Key::pause: paused_ = !paused_; break;
    case Key::zoom_in: span_ = std::max(kMinSpanSamples, span_ / 2); break;
    case Key::zoom_out: span_ = std::min(max_span_, span_ * 2); break;
    case Key::level_up:
      level_ += step;
      level_set_ = true;
      break;
    case Key::level_down:
      level_ -= step;
      level_set_ = true;
      break;
    case Key::toggle_trigger:
      trigger_on_ = !trigger_on_;
      if (trigger_on_ && !level_set_) level_ = (range_.lo + range_.hi) / 2;  // first time: mid-screen
      level_set_ = true;
      break;
  }
  return true;
}

ScopeDisplay::View ScopeDisplay::choose_view() const {
  const core::ChannelDesc& d = reader_->desc();
  // relaxed: a display position; envelope() validates the entries it reads
  const std::uint64_t written = d.samples_written.load(std::memory_order_relaxed);
  const std::uint64_t end = history_.end() > history_.begin() ? history_.end() : written;
  if (trigger_on_) {
    const std::uint64_t post = span_ - pretrigger();
    if (end > post) {
      const std::uint64_t last = end - post;
      const std::uint64_t window = std::max(2 * span_, kTriggerWindowBlocks * d.samples_per_block);
      const std::uint64_t first = last > window ? last - window : 0;
      if (auto crossing = history_.last_crossing(static_cast<float>(level_), first, last))
        return View{*crossing, TriggerState::triggered};
    }
    return View{end, TriggerState::free_running};
  }
  return View{end, TriggerState::off};
}

void ScopeDisplay::fill_envelope(std::uint64_t first, std::uint64_t count, std::size_t dots) {
  const core::ChannelDesc& d = reader_->desc();
  if (count < dots * d.pyramid_factor && history_.covers(first, count)) {  // finer than the pyramid: raw samples
    const std::size_t buckets = static_cast<std::size_t>(std::min<std::uint64_t>(dots, count));
    mins_.assign(buckets, 0);
    maxs_.assign(buckets, 0);
    history_.envelope(first, count, mins_, maxs_);
    return;
  }
  // The pyramid: its coarsest level no wider than a bucket, or a coarser one when that level no
  // longer reaches back to `first`; buckets aligned to that level's entries and never narrower
  // than one (core::envelope() would leave the buckets between entries empty).
  // relaxed: how far back the view starts decides the level; envelope() validates the entries
  const std::uint64_t written = d.samples_written.load(std::memory_order_relaxed);
  const std::uint64_t back = written > first ? written - first : 0;
  std::uint64_t entry = d.pyramid_factor;
  std::uint32_t level = 0;
  for (; level + 1 < d.pyramid_levels && entry * d.pyramid_factor * dots <= count; ++level) entry *= d.pyramid_factor;
  for (; level + 1 < d.pyramid_levels && entry * d.pyramid_entries < back; ++level) entry *= d.pyramid_factor;
  const std::size_t buckets = static_cast<std::size_t>(std::clamp<std::uint64_t>(count / entry, 1, dots));
  mins_.assign(buckets, 0);
  maxs_.assign(buckets, 0);
  core::envelope(*arena_, info_.index, first - first % entry, count, mins_, maxs_);
}

std::vector<std::string> ScopeDisplay::frame(TermSize size) {
  if (!paused_) view_ = choose_view();
  if (view_.trigger != TriggerState::off && !trigger_on_) view_.trigger = TriggerState::off;  // toggled while paused
  const core::ChannelDesc& d = reader_->desc();
  ScopeStatus status;
  status.channel = info_.name;
  status.rate_hz = info_.rate_hz;
  status.units = info_.units;
  status.dtype = core::dtype_name(info_.dtype);
  status.span_samples = span_;
  status.trigger = trigger_on_ && view_.trigger == TriggerState::off ? TriggerState::free_running : view_.trigger;
  status.trigger_level = level_;
  status.blocks_written = d.head.load(std::memory_order_relaxed);  // relaxed: counters for people
  status.blocks_dropped = d.dropped_at_source.load(std::memory_order_relaxed);
  status.paused = paused_;

  const FrameLayout layout = frame_layout(size.cols, size.rows, kLabelDigits + info_.units.size());
  BrailleCanvas canvas(layout.plot_cols, layout.plot_rows);
  const bool triggered = view_.trigger == TriggerState::triggered;
  const std::uint64_t before = triggered ? pretrigger() : span_;
  const std::uint64_t first = view_.anchor > before ? view_.anchor - before : 0;
  if (canvas.dot_width() > 0) {
    fill_envelope(first, span_, canvas.dot_width());
    range_ = auto_range(mins_, maxs_);
    plot_envelope(canvas, mins_, maxs_, range_);
  }
  const double rate = info_.rate_hz > 0 ? info_.rate_hz : 1;
  const double before_s = static_cast<double>(before) / rate;
  const double after_s = static_cast<double>(span_ - before) / rate;
  const std::string left = fmt::format("-{}", format_si(before_s, "s"));
  const std::string right = triggered ? fmt::format("+{}", format_si(after_s, "s")) : std::string("0 s");
  return compose_frame(status, canvas, range_, layout, size.cols, left, right);
}

}  // namespace weir::scope
