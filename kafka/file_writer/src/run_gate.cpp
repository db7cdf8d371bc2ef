// The file-writer's gate: a channel's blocks in the run's window, from the staging arena into the
// run's arena, with every gap placed in time and kept or left out as the data around it.
#include "weir/kafka_file_writer/run_gate.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <span>
#include <utility>

#include <fmt/format.h>

#include "weir/core/clock.hpp"

namespace weir::kafka::fw {

RunGate::RunGate(std::string name, core::ChannelReader reader, core::ChannelWriter writer, double sample_ns,
                 std::vector<std::byte> bounce) noexcept
    : name_(std::move(name)), reader_(std::move(reader)), writer_(std::move(writer)), sample_ns_(sample_ns),
      block_ns_(sample_ns * static_cast<double>(writer_.samples_per_block())), bounce_(std::move(bounce)) {}

core::Result<RunGate> RunGate::open(const core::Arena& staging, const core::Arena& run, const std::string& channel,
                                    const std::string& consumer) {
  const std::vector<core::ChannelInfo> channels = core::list_channels(staging);
  const core::ChannelInfo* info = nullptr;
  for (const core::ChannelInfo& c : channels)
    if (c.name == channel) info = &c;
  if (info == nullptr) return core::fail(core::Errc::not_found, fmt::format("channel '{}': not in the staging arena", channel));
  core::ChannelSpec spec;
  spec.name = info->name;
  spec.dtype = info->dtype;
  spec.rate_hz = info->rate_hz;
  spec.units = info->units;
  spec.samples_per_block = info->samples_per_block;
  spec.ring_blocks = info->ring_blocks;
  spec.frame = info->frame;
  if (auto made = core::create_channel(run, spec); !made)
    return core::fail(made.error().code, fmt::format("channel '{}' of the run: {}", channel, made.error().what));
  auto reader = core::ChannelReader::open(staging, channel, core::ConsumerPolicy::lossless, consumer,
                                          core::StartAt::oldest);
  if (!reader) return tl::make_unexpected(reader.error());
  reader->set_kind("record:kafka");
  auto writer = core::ChannelWriter::open(run, channel);
  if (!writer) return tl::make_unexpected(writer.error());
  std::vector<std::byte> bounce(std::size_t{info->samples_per_block} * core::dtype_bytes(info->dtype));
  return RunGate(channel, std::move(*reader), std::move(*writer), static_cast<double>(core::kNsPerSecond) / info->rate_hz, std::move(bounce));
}

bool RunGate::step(const RunWindow& window) noexcept {
  core::BlockView view;
  std::uint64_t lost = 0;
  switch (reader_.next(view, lost)) {
    case core::NextStatus::empty: return false;
    case core::NextStatus::lost: on_gap(lost, core::lost_reason(view.flags), window); return true;
    case core::NextStatus::ok: break;
  }
  const auto t = static_cast<std::int64_t>(view.realtime_ns);
  if (t >= window.stop_ns) {
    passed_stop_ = true;
    place_pending(t, window);
    ++counts_.after;
    (void)reader_.done(view);
  } else if (t < window.start_ns) {
    place_pending(t, window);
    ++counts_.before;
    (void)reader_.done(view);
  } else {
    place_pending(t, window);
    copy(view, window);
  }
  next_ns_ = t + std::llround(static_cast<double>(view.samples) * sample_ns_);
  return true;
}

void RunGate::copy(const core::BlockView& view, const RunWindow& window) noexcept {
  const std::size_t bytes = std::size_t{view.samples} * writer_.desc().sample_bytes;
  std::memcpy(bounce_.data(), view.data, std::min(bytes, bounce_.size()));
  if (!reader_.done(view)) {  // overwritten while copied: lost here, as a lapped block of the run
    place_gap(static_cast<std::int64_t>(view.realtime_ns), 1, core::GapReason::lapped, window);
    return;
  }
  std::span<std::byte> slot;
  if (writer_.claim(slot) != core::ClaimStatus::ok) {
    ++counts_.dropped;
    return;
  }
  std::memcpy(slot.data(), bounce_.data(), std::min(bytes, slot.size()));
  writer_.publish(view.samples, view.realtime_ns, view.monotonic_ns, view.flags);
  ++counts_.copied;
}

void RunGate::on_gap(std::uint64_t blocks, core::GapReason reason, const RunWindow& window) noexcept {
  if (next_ns_) {
    place_gap(*next_ns_, blocks, reason, window);
    *next_ns_ += std::llround(static_cast<double>(blocks) * block_ns_);
    return;
  }
  if (pending_count_ < kMaxPending) {
    pending_[pending_count_++] = PendingGap{blocks, reason};
  } else {
    pending_[kMaxPending - 1].blocks += blocks;  // more runs than kept: the last one's reason
  }
}

void RunGate::finish() noexcept {
  for (std::size_t i = 0; i < pending_count_; ++i) counts_.unplaced += pending_[i].blocks;
  pending_count_ = 0;
}

// Pending gaps end where the block at next_ns begins.
void RunGate::place_pending(std::int64_t next_ns, const RunWindow& window) noexcept {
  if (pending_count_ == 0) return;
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < pending_count_; ++i) total += pending_[i].blocks;
  std::int64_t first = next_ns - std::llround(static_cast<double>(total) * block_ns_);
  for (std::size_t i = 0; i < pending_count_; ++i) {
    place_gap(first, pending_[i].blocks, pending_[i].reason, window);
    first += std::llround(static_cast<double>(pending_[i].blocks) * block_ns_);
  }
  pending_count_ = 0;
}

// `blocks` gap blocks, the first starting at first_ns: those in the window go into the run.
void RunGate::place_gap(std::int64_t first_ns, std::uint64_t blocks, core::GapReason reason,
                        const RunWindow& window) noexcept {
  // Block i starts at first_ns + i * block_ns: the first index at or after a time, within [0, blocks].
  const auto index_at = [&](std::int64_t t) {
    const double i = std::ceil((static_cast<double>(t) - static_cast<double>(first_ns)) / block_ns_);
    return i <= 0 ? std::uint64_t{0} : i >= static_cast<double>(blocks) ? blocks : static_cast<std::uint64_t>(i);
  };
  const std::uint64_t from = index_at(window.start_ns);
  const std::uint64_t to = window.stop_ns == kOpenStop ? blocks : std::max(from, index_at(window.stop_ns));
  counts_.before += from;
  counts_.after += blocks - to;
  const std::uint64_t in = to - from;
  if (in == 0) return;
  writer_.skip(in, reason);
  counts_.gap_blocks += in;
}

}  // namespace weir::kafka::fw
