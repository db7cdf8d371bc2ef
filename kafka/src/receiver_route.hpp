#pragma once
// One se00 source into one channel of the receiver's arena: the channel made or attached on the
// source's first message, far block = message_counter + offset, every missing counter a gap block,
// duplicates late, zero-value gap carriers. Private to the kafka module.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gap_header.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/kafka/codec.hpp"
#include "weir/kafka/receiver.hpp"

namespace weir::kafka {

/// What became of one message of the route's source.
enum class [[nodiscard]] Taken : std::uint8_t {
  published,  // a data block (and the gap blocks before it)
  carried,    // a gap carrier's runs as gap blocks
  held,       // a gap carrier before its channel could be made: its runs wait for the first data block
  late,       // its counter was already published
  dropped,    // the channel's writer could not claim a block
  refused,    // no channel for it
  mismatch,   // another dtype, or more samples than the channel's blocks
};

/// Whether `name` may be a channel's name: 1 to 63 bytes, printable, no blank, no '/'. Thread: any.
[[nodiscard]] bool channel_name_ok(std::string_view name) noexcept;

class SourceRoute {
 public:
  /// Requires: `source` and `channel` non-empty. Cold path.
  SourceRoute(const core::Arena& arena, const ReceiverOptions& options, std::string source, std::string channel);

  /// One message of this source with its weir.gaps runs; `carrier` when it has zero values and its
  /// runs cover its own counter. Hot path once the channel is attached (no allocation, no throw);
  /// the first message makes or attaches the channel (cold).
  Taken take(const SampleBlock& block, std::span<const GapRun> runs, bool carrier);

  [[nodiscard]] const ReceiverSourceReport& report() const noexcept { return report_; }

 private:
  bool attach(const SampleBlock& block);
  void hold(const SampleBlock& block, std::span<const GapRun> runs);
  void apply(std::span<const GapRun> runs, std::int64_t end) noexcept;
  void catch_up(std::int64_t target, core::GapReason reason) noexcept;
  void refuse(const std::string& why) const;

  const core::Arena& arena_;
  const ReceiverOptions& options_;
  core::KvStore kv_;
  std::string offset_key_;  // kafka.NAME.SOURCE.offset: the mapping, kept for a restart
  std::optional<core::ChannelWriter> writer_;
  bool refused_ = false;    // the channel could not be had: said once, later messages counted refused
  std::int64_t offset_ = 0;  // far sequence = message_counter + offset_, fixed once per channel
  std::int64_t dropped_unmarked_ = 0;  // blocks dropped at claim, their gap blocks not yet published
  std::vector<GapRun> held_;  // carriers' runs before the channel could be made
  std::int64_t held_from_ = -1, held_end_ = -1;  // the first held carrier's counter, the last one's + 1
  ReceiverSourceReport report_;
};

}  // namespace weir::kafka
