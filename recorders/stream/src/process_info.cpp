// Clocks, host and process identity, free space.
#include "process_info.hpp"

#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>

#include "weir/core/arena.hpp"

namespace weir::rec {

namespace {
constexpr std::uint64_t kNsPerSecond = 1'000'000'000;
constexpr int kStartTimeField = 22;  // starttime in /proc/PID/stat (man 5 proc)
}  // namespace

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

std::uint64_t process_start_ticks(std::uint32_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  const std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Field 2 (the command) is in parentheses and may hold spaces: count fields after the last ')'.
  const std::size_t close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  int field = 2;
  std::size_t at = close + 1;
  while (at < stat.size() && field < kStartTimeField) {
    at = stat.find(' ', at);
    if (at == std::string::npos) return 0;
    ++at;
    ++field;
  }
  if (field != kStartTimeField) return 0;
  return std::strtoull(stat.c_str() + at, nullptr, 10);
}

bool same_process_alive(std::uint32_t pid, std::uint64_t start_ticks) {
  if (pid == 0 || pid > static_cast<std::uint32_t>(std::numeric_limits<pid_t>::max())) return false;
  if (!core::pid_alive(pid)) return false;  // a killed recorder its supervisor has not reaped yet is dead too
  const std::uint64_t now = process_start_ticks(pid);
  return start_ticks == 0 || now == 0 || now == start_ticks;  // unknown start times count as the same
}

core::Result<std::uint64_t> free_bytes(const std::filesystem::path& path) {
  struct statvfs fs {};
  if (statvfs(path.c_str(), &fs) != 0)
    return core::fail(core::Errc::io_error, "statvfs " + path.string() + ": " + std::strerror(errno));
  return std::uint64_t{fs.f_bavail} * fs.f_frsize;
}

}  // namespace weir::rec
