#pragma once
// Clocks, host and process identity, and free disk space: the facts the recorder stamps on files
// and checks before writing.
#include <cstdint>
#include <filesystem>
#include <string>

#include "weir/core/clock.hpp"
#include "weir/core/error.hpp"

namespace weir::rec {

using core::monotonic_ns;
/// CLOCK_REALTIME as the unsigned stamp the recorder's files hold.
[[nodiscard]] inline std::uint64_t realtime_ns() noexcept { return static_cast<std::uint64_t>(core::realtime_ns()); }

/// This machine's host name ("" if it cannot be read).
[[nodiscard]] std::string host_name();

/// When a process started, in clock ticks since boot (/proc/PID/stat field 22): with the pid it
/// names one process for the machine's uptime, where a pid alone may be reused. 0 if unknown.
[[nodiscard]] std::uint64_t process_start_ticks(std::uint32_t pid);

/// Whether process pid is alive and is the one that started at start_ticks.
[[nodiscard]] bool same_process_alive(std::uint32_t pid, std::uint64_t start_ticks);

/// Bytes an unprivileged writer may still use on the file system holding path.
[[nodiscard]] core::Result<std::uint64_t> free_bytes(const std::filesystem::path& path);

}  // namespace weir::rec
