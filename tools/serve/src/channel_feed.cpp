#include "channel_feed.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace weir::serve {

namespace {

constexpr std::size_t kHistoryBlocks = 64;            // the float history holds this many blocks ...
constexpr std::size_t kMinHistorySamples = 1U << 17;  // ... but at least this many samples (64 mid entries' worth
                                                      // for half the widest view)
constexpr std::size_t kMaxHistorySamples = 1U << 22;  // ... and at most this many
constexpr std::uint64_t kMaxBlocksPerPoll = 256;      // bound on one poll; older blocks are skipped

std::size_t history_capacity(const core::BlockCopier& c) {
  return std::clamp(std::size_t{c.samples_per_block()} * kHistoryBlocks, kMinHistorySamples, kMaxHistorySamples);
}

// The serve's own min/max levels, at the resolutions of the pyramid's levels below the top, each
// reaching back as far as the next level needs to give half the widest view's columns: the arena's
// pyramid reaches only pyramid_entries entries back, which may be less (a small ring).
std::vector<MinMaxHistory> mid_levels(const core::ChannelDesc& d) {
  std::vector<MinMaxHistory> levels;
  const std::uint32_t factor = std::max<std::uint32_t>(d.pyramid_factor, 2);
  std::uint64_t entry = 1;
  for (std::uint32_t level = 0; level + 1 < std::min(d.pyramid_levels, core::kPyramidLevels); ++level) {
    entry *= factor;
    if (entry > std::numeric_limits<std::uint32_t>::max()) break;
    levels.emplace_back(static_cast<std::uint32_t>(entry), std::size_t{kMaxColumns} / 2 * factor);
  }
  return levels;
}

}  // namespace

core::Result<ChannelFeed> ChannelFeed::open(const core::Arena& arena, std::uint32_t channel) {
  auto copier = core::BlockCopier::open(arena, channel);
  if (!copier) return tl::make_unexpected(copier.error());
  return ChannelFeed(arena, channel, *copier);
}

ChannelFeed::ChannelFeed(const core::Arena& arena, std::uint32_t channel, core::BlockCopier copier)
    : arena_(&arena), channel_(channel), copier_(copier), dtype_(static_cast<core::Dtype>(copier.desc().dtype)),
      frame_(core::frame_shape(copier.desc())), history_(history_capacity(copier)),
      mids_(mid_levels(copier.desc())) {
  raw_.resize(copier_.block_bytes());
  // Start with what the ring still safely holds (half of it: the writer goes on meanwhile).
  const std::uint64_t head = copier_.head();
  next_seq_ = head - std::min({head, std::uint64_t{copier_.ring_blocks()} / 2, kMaxBlocksPerPoll});
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
    for (MinMaxHistory& m : mids_) m.reset();
  }
  for (; next_seq_ < head; ++next_seq_) {
    core::BlockRecord rec;
    const core::BlockStatus status = copier_.copy(next_seq_, raw_, rec);
    if (status == core::BlockStatus::unwritten) break;  // published head, state not yet committed: next poll
    if (status != core::BlockStatus::ok) {  // lost to us (the pyramid still has it): both histories restart
      history_.reset();
      for (MinMaxHistory& m : mids_) m.reset();
      continue;
    }
    if ((rec.flags & core::kBlockGapFlag) != 0) {  // no samples: the stream goes on at the same index
      if (gap_count_ == 0 || gaps_[(gap_count_ - 1) % gaps_.size()] != rec.first_sample)
        gaps_[gap_count_++ % gaps_.size()] = rec.first_sample;
      continue;
    }
    if (rec.samples == 0) continue;
    scratch_.resize(rec.samples);
    for (std::size_t j = 0; j < rec.samples; ++j) scratch_[j] = scope::sample_as_float(dtype_, raw_.data(), j);
    history_.append(rec.first_sample, scratch_);
    for (MinMaxHistory& m : mids_) m.append(rec.first_sample, scratch_);
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

}  // namespace weir::serve
