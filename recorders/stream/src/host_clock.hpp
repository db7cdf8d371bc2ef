#pragma once
// What the host says about its clock when a segment opens: the kernel's NTP state (adjtimex(2)),
// the synchronisation daemon if one can be named, and the offset between CLOCK_REALTIME and
// CLOCK_MONOTONIC. Written into /entry/clock so a sample's absolute time and its uncertainty can be
// stated later.
#include <cstdint>
#include <string>

namespace weir::rec {

struct HostClock {
  bool known = false;          // adjtimex answered
  std::int64_t state = -1;     // its return value: TIME_OK 0, TIME_INS 1, TIME_DEL 2, TIME_OOP 3, TIME_WAIT 4, TIME_ERROR 5
  std::uint64_t status = 0;    // its STA_* flags
  bool synchronised = false;   // known, state != TIME_ERROR and STA_UNSYNC clear
  std::int64_t est_error_us = -1;
  std::int64_t max_error_us = -1;
  std::string status_text;     // the set STA_* flags by name, "|"-separated
  std::string source;          // "chrony: ...", "systemd-timesyncd", "ptp: ptp0 ..." or "unknown"
};

/// Reads the host clock's synchronisation state; never fails (what cannot be read is "unknown" or
/// -1). Runs `chronyc -c tracking` when chronyc is installed: cold path only (a segment's open).
/// Thread: any.
[[nodiscard]] HostClock read_host_clock();

/// One look at both clocks, as close together as two vDSO reads are.
struct ClockPair {
  std::uint64_t realtime_ns = 0;
  std::uint64_t monotonic_ns = 0;
  [[nodiscard]] std::int64_t offset_ns() const noexcept {
    return static_cast<std::int64_t>(realtime_ns - monotonic_ns);
  }
};
[[nodiscard]] ClockPair read_clock_pair() noexcept;

}  // namespace weir::rec
