#include "process_metrics.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <fmt/format.h>

namespace weir::serve {

namespace {

std::string read_text(const char* path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

template <typename T>
bool to_number(std::string_view text, T& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size();
}

}  // namespace

std::optional<ProcessStats> parse_proc_stat(std::string_view stat, std::uint64_t boot_time_s, long ticks_per_s,
                                            long page_bytes) {
  // "pid (comm) state ppid ...": the command may hold spaces and parentheses, so split after the last ')'.
  const std::size_t close = stat.rfind(')');
  if (close == std::string_view::npos || ticks_per_s <= 0 || page_bytes <= 0) return std::nullopt;
  std::vector<std::string_view> fields;  // fields[0] is field 3 (state) of proc(5)
  for (std::size_t at = close + 1; at < stat.size();) {
    while (at < stat.size() && (stat[at] == ' ' || stat[at] == '\n')) ++at;
    const std::size_t end = stat.find_first_of(" \n", at);
    if (at < stat.size()) fields.push_back(stat.substr(at, end == std::string_view::npos ? end : end - at));
    at = end;
  }
  constexpr std::size_t kUtime = 14 - 3, kStime = 15 - 3, kStart = 22 - 3, kVsize = 23 - 3, kRss = 24 - 3;
  if (fields.size() <= kRss) return std::nullopt;
  std::uint64_t utime = 0, stime = 0, start = 0, vsize = 0;
  std::int64_t rss = 0;
  if (!to_number(fields[kUtime], utime) || !to_number(fields[kStime], stime) || !to_number(fields[kStart], start) ||
      !to_number(fields[kVsize], vsize) || !to_number(fields[kRss], rss))
    return std::nullopt;
  ProcessStats p;
  const auto ticks = static_cast<double>(ticks_per_s);
  p.cpu_seconds = static_cast<double>(utime + stime) / ticks;
  p.start_time_seconds = static_cast<double>(boot_time_s) + static_cast<double>(start) / ticks;
  p.virtual_bytes = vsize;
  p.resident_bytes = rss > 0 ? static_cast<std::uint64_t>(rss) * static_cast<std::uint64_t>(page_bytes) : 0;
  return p;
}

std::optional<ProcessStats> read_process_stats() {
  std::uint64_t boot_time_s = 0;
  std::istringstream proc_stat(read_text("/proc/stat"));
  for (std::string line; std::getline(proc_stat, line);)
    if (line.starts_with("btime ") && to_number(std::string_view(line).substr(6), boot_time_s)) break;
  if (boot_time_s == 0) return std::nullopt;
  auto p = parse_proc_stat(read_text("/proc/self/stat"), boot_time_s, sysconf(_SC_CLK_TCK), sysconf(_SC_PAGESIZE));
  if (!p) return std::nullopt;
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end; it.increment(ec))
    ++p->open_fds;
  if (p->open_fds > 0) --p->open_fds;  // the directory's own descriptor, open while it is listed
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) p->max_fds = limit.rlim_cur;
  return p;
}

void append_process_metrics(std::string& out) {
  const auto p = read_process_stats();
  if (!p) return;
  const auto family = [&](std::string_view name, std::string_view type, std::string_view help, auto value) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n{} {}\n", name, help, name, type, name, value);
  };
  family("process_cpu_seconds_total", "counter", "User and system CPU time the process has spent, in seconds.",
         p->cpu_seconds);
  family("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", p->resident_bytes);
  family("process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", p->virtual_bytes);
  family("process_open_fds", "gauge", "Open file descriptors.", p->open_fds);
  if (p->max_fds != 0) family("process_max_fds", "gauge", "Maximum open file descriptors (the soft limit).", p->max_fds);
  family("process_start_time_seconds", "gauge", "Start time of the process since the Unix epoch, in seconds.",
         p->start_time_seconds);
}

}  // namespace weir::serve
