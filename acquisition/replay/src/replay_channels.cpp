// Replay lanes: attach-or-create checks, the writers, and publishing one recorded block or gap.
#include "replay_channels.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <utility>

namespace weir::acq::detail {

namespace {

std::string shape(core::Dtype dtype, std::uint32_t block, const core::FrameShape& frame) {
  std::string text =
      std::string("dtype ") + core::dtype_name(dtype) + " and blocks of " + std::to_string(block) + " samples";
  if (frame.framed())
    text += " in " + std::to_string(frame.frames_per_block) + " frames of " + std::to_string(frame.frame_elements);
  return text;
}

// Whether a channel found in the arena takes the recorded blocks as they are: same dtype, block size
// and frame shape (a plain channel and a framed one of the same size are not the same stream).
bool same_shape(const RecordedChannel& c, core::Dtype dtype, std::uint32_t block, const core::FrameShape& frame) {
  return dtype == c.dtype && block == c.samples_per_block && frame.frames_per_block == c.frame.frames_per_block &&
         frame.frame_elements == c.frame.frame_elements;
}

// A gap row's reason as a writer publishes it: a reason this build does not know is source_loss.
core::GapReason reason_of(std::uint32_t reason) {
  return reason < core::kGapReasonCount ? static_cast<core::GapReason>(reason) : core::GapReason::source_loss;
}

// The file a channel first appears in, for messages.
const std::string& file_of(const Recording& recording, const RecordedChannel& c) {
  return recording.files[c.blocks.empty() ? 0 : c.blocks.front().file];
}

}  // namespace

Lane::Lane(const Recording& recording, const RecordedChannel& recorded, core::ChannelWriter writer, bool created)
    : channel(&recorded), writer_(std::move(writer)), reader_(recording, recorded) {
  report.name = recorded.name;
  report.created = created;
  report.gap_row_blocks = recorded.gap_row_blocks;
  report.recorded_drops = recorded.dropped_at_source;
  pieces_ = gap_pieces(recorded);
}

std::vector<Lane::GapPiece> gap_pieces(const RecordedChannel& c) {
  std::vector<Lane::GapPiece> out;
  const auto add = [&](std::uint64_t before, std::uint64_t blocks, core::GapReason reason) {
    if (blocks == 0) return;
    if (!out.empty() && out.back().before == before && out.back().reason == reason) {
      out.back().blocks += blocks;
    } else {
      out.push_back(Lane::GapPiece{before, blocks, reason});
    }
  };
  std::vector<const RecordedGap*> rows;  // by file, then sequence
  for (const RecordedGap& g : c.gaps)
    if (g.blocks > 0) rows.push_back(&g);
  std::stable_sort(rows.begin(), rows.end(), [](const RecordedGap* a, const RecordedGap* b) {
    return a->file != b->file ? a->file < b->file : a->sequence < b->sequence;
  });
  const std::uint64_t n = c.blocks.size();
  // Before the first block and after the last: the rows open_recording counted there, as it did.
  if (n > 0)
    for (const RecordedGap* g : rows)
      if (g->sequence + g->blocks <= c.blocks.front().sequence && g->file == c.blocks.front().file)
        add(0, g->blocks, reason_of(g->reason));
  // Between blocks b - 1 and b: the jump in block_sequence, tiled by the rows of the files from
  // b - 1's to b's that overlap it.
  for (std::uint64_t b = 1; b < n; ++b) {
    if (c.blocks[b].missing_before == 0) continue;
    const RecordedBlock& prev = c.blocks[b - 1];
    const std::uint64_t hi = c.blocks[b].sequence;
    std::uint64_t at = prev.sequence + 1;
    auto it = std::lower_bound(rows.begin(), rows.end(), std::pair{prev.file, at},
                               [](const RecordedGap* g, const std::pair<std::uint32_t, std::uint64_t>& key) {
                                 return g->file != key.first ? g->file < key.first : g->sequence < key.second;
                               });
    if (it != rows.begin() && (*std::prev(it))->file == prev.file) --it;  // a row that began before may reach in
    for (; it != rows.end() && (*it)->file <= c.blocks[b].file; ++it) {
      const RecordedGap& g = **it;
      const std::uint64_t from = std::max(g.sequence, at), to = std::min(g.sequence + g.blocks, hi);
      if (to <= from) continue;
      add(b, from - at, core::GapReason::source_loss);
      add(b, to - from, reason_of(g.reason));
      at = to;
    }
    add(b, hi - at, core::GapReason::source_loss);
  }
  for (const RecordedGap* g : rows)
    if (n == 0 || (!(g->sequence + g->blocks <= c.blocks.front().sequence && g->file == c.blocks.front().file) &&
                   g->sequence > c.blocks.back().sequence && g->file == c.blocks.back().file))
      add(n, g->blocks, reason_of(g->reason));
  return out;
}

core::Result<void> Lane::publish(std::uint64_t block, std::uint64_t realtime_shift_ns, std::uint64_t monotonic_ns,
                                 std::uint64_t read_bytes) {
  const RecordedBlock& r = channel->blocks[block];
  if (r.missing_before != 0) gap(block);
  if ((r.flags & core::kBlockGapFlag) != 0) {  // recorded as a gap: no samples, a gap again
    ++report.gaps;
    ++report.blocks_missing;
    writer_.skip(1, h5::flagged_row_reason(r.flags));
    return {};
  }
  auto samples = reader_.block(block, read_bytes);
  if (!samples) return tl::make_unexpected(samples.error());
  std::span<std::byte> slot;
  switch (writer_.claim(slot)) {
    case core::ClaimStatus::ok: {
      std::memcpy(slot.data(), samples->data(), std::min(slot.size(), samples->size()));
      const std::uint64_t realtime = r.realtime_ns != 0 ? r.realtime_ns + realtime_shift_ns : 0;
      writer_.publish(r.samples, realtime, monotonic_ns, r.flags);
      ++report.blocks_published;
      report.samples_published += r.samples;
      break;
    }
    case core::ClaimStatus::dropped: ++report.blocks_dropped; break;  // counted at the source by the core too
  }
  return {};
}

void Lane::end_pass() noexcept {
  if (channel->missing_after != 0) gap(channel->blocks.size());
}

// Every reader counts these sequence numbers lost, where they were lost, for the recording's reasons.
void Lane::gap(std::uint64_t before) noexcept {
  auto it = std::lower_bound(pieces_.begin(), pieces_.end(), before,
                             [](const GapPiece& p, std::uint64_t b) { return p.before < b; });
  if (it == pieces_.end() || it->before != before) return;
  ++report.gaps;
  for (; it != pieces_.end() && it->before == before; ++it) {
    report.blocks_missing += it->blocks;
    writer_.skip(it->blocks, it->reason);
  }
}

core::Result<std::vector<Lane>> open_lanes(const core::Arena& arena, const Recording& recording,
                                           const std::vector<const RecordedChannel*>& chosen,
                                           const ReplayOptions& options) {
  const std::string where = arena.location().describe();
  const auto refuse = [&](const RecordedChannel& c, core::Dtype dtype, std::uint32_t block,
                          const core::FrameShape& frame) {
    return core::fail(core::Errc::invalid_argument,
                      "replay: channel '" + c.name + "' in " + where + " has " + shape(dtype, block, frame) +
                          "; the recording '" + file_of(recording, c) + "' has " +
                          shape(c.dtype, c.samples_per_block, c.frame));
  };
  // Every check before anything is created.
  const std::vector<core::ChannelInfo> existing = core::list_channels(arena);
  std::vector<bool> missing(chosen.size(), true);
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const RecordedChannel& c = *chosen[i];
    const auto found =
        std::find_if(existing.begin(), existing.end(), [&](const core::ChannelInfo& e) { return e.name == c.name; });
    if (found == existing.end()) continue;
    if (!same_shape(c, found->dtype, found->samples_per_block, found->frame))
      return refuse(c, found->dtype, found->samples_per_block, found->frame);
    missing[i] = false;
  }
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    if (!missing[i]) continue;
    const RecordedChannel& c = *chosen[i];
    core::ChannelSpec spec;
    spec.name = c.name;
    spec.dtype = c.dtype;
    spec.rate_hz = c.rate_hz;
    spec.units = c.units;
    spec.labels = c.labels;
    spec.samples_per_block = c.samples_per_block;
    spec.frame = c.frame;
    spec.ring_blocks = options.ring_blocks;
    spec.full_policy = options.full_policy;
    spec.wait_timeout_ns = options.wait_timeout_ns;
    if (auto created = core::create_channel(arena, spec); !created)
      return tl::make_unexpected(core::with_context(created.error(), "replay"));
  }
  std::vector<Lane> lanes;
  lanes.reserve(chosen.size());
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const RecordedChannel& c = *chosen[i];
    auto writer = core::ChannelWriter::open(arena, c.name);
    if (!writer) return tl::make_unexpected(core::with_context(writer.error(), "replay"));
    const core::ChannelDesc& d = writer->desc();  // re-checked: another process may have created it meanwhile
    if (const core::FrameShape frame = core::frame_shape(d); !same_shape(c, d.dtype, d.samples_per_block, frame))
      return refuse(c, d.dtype, d.samples_per_block, frame);
    lanes.emplace_back(recording, c, std::move(*writer), missing[i]);
  }
  return lanes;
}

}  // namespace weir::acq::detail
