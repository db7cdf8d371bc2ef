#pragma once
// One channel the lua driver feeds: samples from any number of calls accumulate in a claimed block
// slot until it is full, then it is published with the time of its first sample. A call that gave
// the channel nothing because it failed, or a tick skipped late, is a gap block.
#include <cstdint>
#include <span>
#include <string>
#include <utility>

#include "weir/acq_lua/lua_driver.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/gap_reason.hpp"

namespace weir::acq::lua_detail {

class Lane {
 public:
  Lane(core::ChannelWriter writer, std::string name, double rate_hz, bool created);

  /// Appends one sample taken at (realtime_ns, monotonic_ns): written in place into the claimed
  /// slot (claimed now if none is), converted to the channel's dtype; a full block is published. A
  /// claim the channel drops throws away the next block's worth of samples, counted.
  /// Thread: the driver's. Allocates nothing.
  void push(double value, std::uint64_t realtime_ns, std::uint64_t monotonic_ns) noexcept;
  /// Publishes a partly filled block (at the end of a run).
  void flush() noexcept;
  /// `calls` calls that gave this channel nothing (failed, or skipped late): the block being filled
  /// is published as it is (short), then one gap block per call, for `reason`.
  void miss(std::uint64_t calls, core::GapReason reason) noexcept;
  /// Marks the current call's samples for this channel as refused (a bad return); take_refused() reads and clears the mark.
  void refuse() noexcept { refused_ = true; }
  [[nodiscard]] bool take_refused() noexcept { return std::exchange(refused_, false); }

  [[nodiscard]] const std::string& name() const noexcept { return report_.name; }
  [[nodiscard]] double rate_hz() const noexcept { return rate_hz_; }
  [[nodiscard]] std::uint32_t block() const noexcept { return block_; }
  [[nodiscard]] core::Dtype dtype() const noexcept { return dtype_; }
  [[nodiscard]] const LuaChannelReport& report() const noexcept { return report_; }

 private:
  core::ChannelWriter writer_;
  core::Dtype dtype_;
  std::uint32_t sample_bytes_;
  std::uint32_t block_;
  double rate_hz_;
  std::span<std::byte> slot_;       // the claimed block while claimed_
  bool claimed_ = false;
  std::uint32_t filled_ = 0;        // samples in the claimed block
  std::uint32_t discard_ = 0;       // samples still to throw away for a dropped block
  bool refused_ = false;            // this call's entry for the channel was refused
  std::uint64_t block_realtime_ns_ = 0;
  std::uint64_t block_monotonic_ns_ = 0;
  LuaChannelReport report_;
};

}  // namespace weir::acq::lua_detail
