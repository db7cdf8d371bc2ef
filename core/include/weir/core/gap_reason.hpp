#pragma once
// Why blocks are missing: the one list of gap reasons. Writers put the reason of the gap blocks they
// publish in the blocks' flags (ChannelWriter::skip); recorders write it in a recording's gaps table
// (h5 stores it as u8 and lists the names in the table's reason_names attribute, in this order);
// `weir audit`, /metrics and every summary of lost data read the same names.
// Append only: a value keeps its meaning in every recording ever written.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace weir::core {

enum class GapReason : std::uint8_t {
  lapped = 0,             // the writer overwrote blocks before a lossy reader (the recorder) read them
  dropped_at_source = 1,  // the writer dropped them because a lossless reader was full (no sequence numbers)
  recorder_restart = 2,   // a marker (blocks 0) where a restarted recorder continued its run
  recorder_stopped = 3,   // published while no recorder ran, after a clean stop of the run's previous recorder
  disk_error = 4,         // recording stopped: disk full or a failed write
  before_start = 5,       // published before the recorder began, no longer in the ring when it registered
  recorder_down = 6,      // published while no recorder ran (killed, restarting, given up)
  shutdown = 7,           // published after the recorder was told to stop and could no longer wait for them
  source_loss = 8,        // the source never delivered them (a digitizer's packets lost before the host)
  kernel_drop = 9,        // the host's socket buffer was full: the kernel dropped the packets
  malformed = 10,         // they arrived but could not be trusted (a bad header, timestamp or sample width)
  late = 11,              // they arrived after their block had been closed
  timeout = 12,           // an instrument did not answer in time
  driver_error = 13,      // the driver's own code failed (a Lua error, a parser error)
  sink_overflow = 14,     // a sink could not take them and dropped them on purpose (a lossy Kafka producer's full queue)
  disconnected = 15,      // the source was unreachable (an EPICS PV whose server went away): what it sent then is unknown
};
inline constexpr std::size_t kGapReasonCount = 16;
inline constexpr std::array<std::string_view, kGapReasonCount> kGapReasonNames{
    "lapped",       "dropped_at_source", "recorder_restart", "recorder_stopped", "disk_error",
    "before_start", "recorder_down",     "shutdown",         "source_loss",      "kernel_drop",
    "malformed",    "late",              "timeout",          "driver_error",     "sink_overflow",
    "disconnected"};
inline constexpr std::string_view kGapReasonList =
    "lapped,dropped_at_source,recorder_restart,recorder_stopped,disk_error,before_start,recorder_down,shutdown,"
    "source_loss,kernel_drop,malformed,late,timeout,driver_error,sink_overflow,disconnected";

/// The name of a reason (kGapReasonNames), "unknown" past the list. Thread: any.
[[nodiscard]] constexpr std::string_view gap_reason_name(GapReason reason) noexcept {
  const auto i = static_cast<std::size_t>(reason);
  return i < kGapReasonCount ? kGapReasonNames[i] : std::string_view("unknown");
}

/// The reason named `name`; false when no reason has that name. Thread: any.
[[nodiscard]] constexpr bool parse_gap_reason(std::string_view name, GapReason& out) noexcept {
  for (std::size_t i = 0; i < kGapReasonCount; ++i)
    if (kGapReasonNames[i] == name) {
      out = static_cast<GapReason>(i);
      return true;
    }
  return false;
}

}  // namespace weir::core
