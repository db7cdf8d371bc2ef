// Periodic snapshots: numbered files on absolute CLOCK_MONOTONIC deadlines.
#include "weir/snapshot/periodic.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "weir/core/clock.hpp"

namespace weir::rec {

namespace {

constexpr int kNumberRaces = 3;  // numbers tried when another process takes the one we picked

// The number in "NAME_snap<digits>.h5", or 0 when the file name is not one of ours.
std::uint64_t number_in(std::string_view file, const std::string& prefix) {
  constexpr std::string_view kSuffix = ".h5";
  if (file.size() <= prefix.size() + kSuffix.size() || file.substr(0, prefix.size()) != prefix ||
      file.substr(file.size() - kSuffix.size()) != kSuffix)
    return 0;
  const std::string_view digits = file.substr(prefix.size(), file.size() - prefix.size() - kSuffix.size());
  std::uint64_t n = 0;
  for (const char c : digits) {
    if (c < '0' || c > '9' || n > (UINT64_MAX - 9) / 10) return 0;
    n = n * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return n;
}

}  // namespace

std::string numbered_snapshot_path(const std::string& dir, const std::string& arena_name, std::uint64_t number) {
  std::array<char, 32> digits{};
  std::snprintf(digits.data(), digits.size(), "%0*llu", static_cast<int>(kSnapshotNumberDigits),
                static_cast<unsigned long long>(number));
  const bool slash = !dir.empty() && dir.back() == '/';
  return dir + (slash ? "" : "/") + arena_name + "_snap" + digits.data() + ".h5";
}

core::Result<std::uint64_t> next_snapshot_number(const std::string& dir, const std::string& arena_name) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr)
    return core::fail(core::Errc::io_error, "snapshot directory '" + dir + "': " + std::strerror(errno));
  const std::string prefix = arena_name + "_snap";
  std::uint64_t highest = 0;
  while (const dirent* e = ::readdir(d)) highest = std::max(highest, number_in(e->d_name, prefix));
  ::closedir(d);
  return highest + 1;
}

SnapshotSchedule::SnapshotSchedule(std::string dir, std::string arena_name, std::int64_t every_ns,
                                   SnapshotOptions options) noexcept
    : dir_(std::move(dir)), arena_name_(std::move(arena_name)), every_ns_(every_ns), options_(options) {
  options_.overwrite = false;  // numbered files are never overwritten
}

core::Result<SnapshotSchedule> SnapshotSchedule::create(std::string dir, std::string arena_name, std::int64_t every_ns,
                                                        SnapshotOptions options) {
  const std::string what = "periodic snapshots into '" + dir + "'";
  if (every_ns <= 0) return core::fail(core::Errc::invalid_argument, what + ": the period must be positive");
  if (arena_name.empty()) return core::fail(core::Errc::invalid_argument, what + ": no arena name for the file names");
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return core::fail(core::Errc::not_found, what + ": " + std::strerror(errno));
  if (!S_ISDIR(st.st_mode)) return core::fail(core::Errc::invalid_argument, what + ": not a directory");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    return core::fail(core::Errc::permission_denied, what + ": " + std::strerror(errno));
  return SnapshotSchedule(std::move(dir), std::move(arena_name), every_ns, options);
}

core::Result<PeriodicShot> SnapshotSchedule::poll(const core::Arena& arena, std::int64_t now_ns) {
  if (next_due_ns_ == 0) next_due_ns_ = now_ns;  // the first one is due at once
  if (now_ns < next_due_ns_) return PeriodicShot{};
  core::Result<PeriodicShot> out = core::fail(core::Errc::io_error, "no snapshot attempted");
  for (int race = 0; race < kNumberRaces; ++race) {
    auto number = next_snapshot_number(dir_, arena_name_);
    if (!number) {
      out = tl::make_unexpected(number.error());
      break;
    }
    const std::string path = numbered_snapshot_path(dir_, arena_name_, *number);
    auto stats = snapshot_to_hdf5(arena, path, options_);
    if (stats) {
      out = PeriodicShot{path, *number, *stats};
      break;
    }
    out = tl::make_unexpected(stats.error());
    if (stats.error().code != core::Errc::already_exists) break;  // only a taken number is worth another try
  }
  // Absolute deadlines: the next one is a whole number of periods after the first, past now.
  next_due_ns_ += every_ns_;
  const std::int64_t after = std::max(now_ns, core::monotonic_ns());  // a caller's clock may run ahead of ours
  if (after >= next_due_ns_) {
    const std::int64_t behind = (after - next_due_ns_) / every_ns_ + 1;
    missed_ += static_cast<std::uint64_t>(behind);
    next_due_ns_ += behind * every_ns_;
  }
  return out;
}

core::Result<PeriodicReport> run_periodic_snapshots(const core::Arena& arena, const PeriodicOptions& options,
                                                    const std::atomic<bool>& stop,
                                                    const std::function<void(const PeriodicShot&)>& on_file,
                                                    const std::function<void(const core::Error&)>& on_error) {
  auto schedule = SnapshotSchedule::create(options.dir, arena.location().name, options.every_ns, options.snapshot);
  if (!schedule) return tl::make_unexpected(schedule.error());
  PeriodicReport report;
  for (;;) {
    if (stop.load(std::memory_order_relaxed)) {  // a flag: nothing is ordered on it
      report.stopped = true;
      break;
    }
    auto shot = schedule->poll(arena, core::monotonic_ns());
    if (!shot) {
      ++report.failures;
      if (on_error) on_error(shot.error());
    } else if (shot->number != 0) {
      ++report.files;
      if (report.first_path.empty()) report.first_path = shot->path;
      report.last_path = shot->path;
      if (on_file) on_file(*shot);
    }
    if (options.max_files != 0 && report.files >= options.max_files) break;
    if (core::sleep_until(schedule->next_due_ns(), &stop, kPeriodicStopPollNs) == core::SleepStatus::stopped) {
      report.stopped = true;
      break;
    }
  }
  report.missed = schedule->missed();
  return report;
}

}  // namespace weir::rec
