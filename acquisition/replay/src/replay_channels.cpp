// Replay lanes: attach-or-create checks, the writers, and publishing one recorded block or gap.
#include "replay_channels.hpp"

#include <algorithm>
#include <cstring>

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
}

core::Result<void> Lane::publish(std::uint64_t block, std::uint64_t realtime_shift_ns, std::uint64_t monotonic_ns,
                                 std::uint64_t read_bytes) {
  const RecordedBlock& r = channel->blocks[block];
  if (r.missing_before != 0) gap(r.missing_before);
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
  if (channel->missing_after != 0) gap(channel->missing_after);
}

void Lane::gap(std::uint64_t blocks) noexcept {
  ++report.gaps;
  report.blocks_missing += blocks;
  writer_.skip(blocks, core::GapReason::source_loss);  // every reader counts these sequence numbers lost, where they were lost
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
