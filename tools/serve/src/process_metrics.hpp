#pragma once
// The standard process_* metrics of Prometheus's client libraries, for the serving process, read
// from /proc/self: CPU seconds, resident and virtual memory, open and maximum descriptors, start time.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace weir::serve {

struct ProcessStats {
  double cpu_seconds = 0;          // user + system
  std::uint64_t resident_bytes = 0;
  std::uint64_t virtual_bytes = 0;
  std::uint64_t open_fds = 0;
  std::uint64_t max_fds = 0;       // the soft RLIMIT_NOFILE
  double start_time_seconds = 0;   // since the Unix epoch
};

/// The fields of a /proc/<pid>/stat line after the command, and btime (seconds since the epoch the
/// system booted) from /proc/stat, as ProcessStats; nullopt if `stat` is not such a line.
/// open_fds and max_fds are left 0. Pure.
[[nodiscard]] std::optional<ProcessStats> parse_proc_stat(std::string_view stat, std::uint64_t boot_time_s,
                                                          long ticks_per_s, long page_bytes);

/// This process's figures from /proc/self; nullopt when /proc cannot be read. Thread: any.
[[nodiscard]] std::optional<ProcessStats> read_process_stats();

/// Appends the process_* families (HELP, TYPE, one sample each) for this process; nothing when /proc
/// cannot be read. Thread: any.
void append_process_metrics(std::string& out);

}  // namespace weir::serve
