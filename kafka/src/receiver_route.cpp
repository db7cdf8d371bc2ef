// One se00 source into one channel: the counter -> sequence mapping, gap blocks, late, carriers.
#include "receiver_route.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

namespace weir::kafka {

using core::GapReason;

bool channel_name_ok(std::string_view name) noexcept {
  if (name.empty() || name.size() > 63) return false;  // ChannelDesc::name holds 63 bytes and a NUL
  return std::all_of(name.begin(), name.end(), [](char c) { return c > ' ' && c < 0x7f && c != '/'; });
}

SourceRoute::SourceRoute(const core::Arena& arena, const ReceiverOptions& options, std::string source,
                         std::string channel)
    : arena_(arena), options_(options), kv_(arena), offset_key_("kafka." + options.name + "." + source + ".offset") {
  report_.name = std::move(source);
  report_.channel = std::move(channel);
}

Taken SourceRoute::take(const SampleBlock& block, std::span<const GapRun> runs, bool carrier) {
  if (!writer_) {
    if (refused_) {
      ++report_.refused;
      return Taken::refused;
    }
    if (carrier && options_.block_samples == 0 && !core::find_channel(arena_, report_.channel)) {
      hold(block, runs);  // no block size to make the channel with yet
      return Taken::held;
    }
    if (!attach(block)) {
      ++report_.refused;
      return Taken::refused;
    }
  }
  if (block.dtype != writer_->desc().dtype || block.samples > writer_->samples_per_block()) return Taken::mismatch;
  const std::int64_t target = block.counter + offset_;
  if (target < static_cast<std::int64_t>(writer_->next_sequence())) {
    ++report_.late;
    return Taken::late;
  }
  const std::int64_t end = carrier ? target + 1 : target;  // a carrier's runs cover its own counter
  if (dropped_unmarked_ > 0) {  // the blocks dropped here lie right at the head
    catch_up(std::min(static_cast<std::int64_t>(writer_->next_sequence()) + dropped_unmarked_, end),
             GapReason::dropped_at_source);
    dropped_unmarked_ = 0;
  }
  apply(runs, end);
  catch_up(end, GapReason::source_loss);
  if (carrier) {
    ++report_.carriers;
    return Taken::carried;
  }
  std::span<std::byte> out;
  if (writer_->claim(out) != core::ClaimStatus::ok) {
    ++report_.dropped;
    ++dropped_unmarked_;
    return Taken::dropped;
  }
  if (!block.values.empty()) std::memcpy(out.data(), block.values.data(), block.values.size());
  writer_->publish(block.samples, static_cast<std::uint64_t>(block.packet_timestamp_ns), 0, 0);
  ++report_.received;
  report_.bytes += block.values.size();
  return Taken::published;
}

void SourceRoute::hold(const SampleBlock& block, std::span<const GapRun> runs) {
  if (held_from_ < 0) {
    held_from_ = block.counter;
    held_.reserve(kMaxGapRuns);
  }
  for (const GapRun& r : runs) add_run(held_, r.first, r.count, r.reason);
  held_end_ = block.counter + 1;
  ++report_.carriers;
}

// The runs (in message counters) as gap blocks, none at or past far sequence `end`; what lies
// between them and before `end` is source_loss, left to the caller's catch_up.
void SourceRoute::apply(std::span<const GapRun> runs, std::int64_t end) noexcept {
  for (const GapRun& r : runs) {
    const std::int64_t first = static_cast<std::int64_t>(r.first) + offset_;
    catch_up(std::min(first, end), GapReason::source_loss);
    catch_up(std::min(first + static_cast<std::int64_t>(r.count), end), r.reason);
  }
}

// Far sequence `target` is next: everything before it not published becomes gap blocks.
void SourceRoute::catch_up(std::int64_t target, GapReason reason) noexcept {
  const auto head = static_cast<std::int64_t>(writer_->next_sequence());
  if (target <= head) return;
  const auto blocks = static_cast<std::uint64_t>(target - head);
  writer_->skip(blocks, reason);
  report_.gaps += blocks;
  report_.gaps_by_reason[static_cast<std::size_t>(reason)] += blocks;
}

// The channel for the source's first taken message: created from it, or attached if it matches.
// Said once if not. The mapping is the one kept in kafka.NAME.SOURCE.offset when the channel was
// not made now (a restart continues it), else the channel's head for this message's counter (or
// for the first held carrier's).
bool SourceRoute::attach(const SampleBlock& block) {
  refused_ = true;
  const std::string& channel = report_.channel;
  bool created = false;
  if (!core::find_channel(arena_, channel)) {
    if (block.time_delta_ns <= 0) {
      refuse("the source gives no time_delta, so no rate to create it with");
      return false;
    }
    core::ChannelSpec spec;
    spec.name = channel;
    spec.dtype = block.dtype;
    spec.rate_hz = 1e9 / block.time_delta_ns;
    spec.units = options_.units;
    spec.samples_per_block = options_.block_samples != 0 ? options_.block_samples : std::max(block.samples, 1U);
    spec.ring_blocks = options_.ring_blocks;
    if (auto made = core::create_channel(arena_, spec); made) {
      created = true;
    } else if (!core::find_channel(arena_, channel)) {
      refuse(made.error().what);
      return false;
    }
  }
  auto writer = core::ChannelWriter::open(arena_, channel);
  if (!writer) {
    refuse(writer.error().what);
    return false;
  }
  if (writer->desc().dtype != block.dtype || writer->samples_per_block() < block.samples) {
    refuse(fmt::format("it is {} with {} samples per block; the source sends {} blocks of {}",
                       core::dtype_name(writer->desc().dtype), writer->samples_per_block(),
                       core::dtype_name(block.dtype), block.samples));
    return false;
  }
  std::uint64_t bits = 0;
  core::ValueType type{};
  if (!created && kv_.get_scalar(offset_key_, bits, type) == core::KvStatus::ok && type == core::ValueType::i64) {
    offset_ = static_cast<std::int64_t>(bits);
    report_.resumed = true;
  } else {
    offset_ = static_cast<std::int64_t>(writer->next_sequence()) - (held_from_ >= 0 ? held_from_ : block.counter);
    if (const core::KvStatus st = kv_.set_i64(offset_key_, offset_); st != core::KvStatus::ok)
      fmt::print(stderr, "weir kafka recv {}: key {} not kept ({}): a restart cannot continue channel '{}' exactly\n",
                 options_.name, offset_key_, core::kv_status_text(st), channel);
  }
  report_.created = created;
  writer_.emplace(std::move(*writer));
  refused_ = false;
  if (held_from_ >= 0) {  // the carriers that came first
    apply(held_, held_end_ + offset_);
    catch_up(held_end_ + offset_, GapReason::source_loss);
    held_.clear();
    held_from_ = -1;
  }
  return true;
}

void SourceRoute::refuse(const std::string& why) const {
  fmt::print(stderr, "weir kafka recv {}: refusing channel '{}' for source '{}': {}\n", options_.name, report_.channel,
             report_.name, why);
}

}  // namespace weir::kafka
