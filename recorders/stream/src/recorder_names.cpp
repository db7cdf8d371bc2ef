// A segment's names on the disk: made under a hidden ".NAME.PID.making" and named NAME.partial once
// whole (open_segment, recorder.cpp); NAME at close (finish_name, recorder_ledger.cpp). Here: the
// making names and their clean-up, a killed recorder's NAME.partial named, and closed files of the
// recorder's other runs still owed a manifest or a hand-off, taken up at start.
#include <fcntl.h>
#include <stdio.h>  // renameat2
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <set>
#include <system_error>

#include "recorder_state.hpp"
#include "segment_scan.hpp"
#include "weir/ledger/manifest.hpp"

namespace weir::rec {

namespace {

constexpr char kMakingSuffix[] = ".making";

// The pid in a making name, 0 when the name is not one.
std::uint32_t making_pid(const std::string& name) {
  const std::string suffix = kMakingSuffix;
  if (name.size() <= suffix.size() + 1 || name[0] != '.' || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return 0;
  const std::string stem = name.substr(0, name.size() - suffix.size());
  const std::size_t dot = stem.rfind('.');
  if (dot == std::string::npos) return 0;
  std::uint64_t pid = 0;
  for (std::size_t i = dot + 1; i < stem.size(); ++i) {
    if (stem[i] < '0' || stem[i] > '9' || pid > UINT32_MAX / 10) return 0;
    pid = pid * 10 + static_cast<std::uint64_t>(stem[i] - '0');
  }
  return static_cast<std::uint32_t>(pid);
}

}  // namespace

std::filesystem::path making_path(const std::filesystem::path& path, std::uint32_t pid) {
  return path.parent_path() / ("." + path.filename().string() + "." + std::to_string(pid) + kMakingSuffix);
}

// A made segment takes its name: fsynced (unless --fsync never), renamed (never over another file:
// `taken` says another process has the name), and the directory entry fsynced.
core::Result<void> Recorder::name_segment(Segment& segment, const std::filesystem::path& making,
                                          const std::filesystem::path& path, bool& taken) {
  const bool sync = options_.fsync != FsyncPolicy::never;
  if (sync)
    if (auto ok = segment.sync(); !ok) return ok;
  if (::renameat2(AT_FDCWD, making.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE) != 0) {
    const int e = errno;
    taken = e == EEXIST;
    if (!taken) fault_errno_ = e;
    return core::fail(core::Errc::io_error, "rename " + making.string() + " to " + path.string() + ": " + std::strerror(e));
  }
  segment.renamed(path);
  if (sync && out_fd_ >= 0 && ::fsync(out_fd_) != 0) {
    fault_errno_ = errno;
    return core::fail(core::Errc::io_error, "fsync " + target_.dir.string() + ": " + std::strerror(errno));
  }
  return {};
}

// Segments an earlier recorder was making when it was killed (its pid is gone): nothing in them
// counts, and they are removed. One of a live recorder is left alone.
void Recorder::remove_stale_makings() {
  std::error_code ec;
  for (std::filesystem::directory_iterator it(target_.dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::uint32_t pid = making_pid(it->path().filename().string());
    if (pid == 0 || (pid != host_pid_ && core::pid_alive(pid))) continue;
    std::error_code gone;
    if (std::filesystem::remove(it->path(), gone)) notice("removed " + it->path().string() + ", a segment a killed recorder was making");
  }
}

// A killed recorder's NAME.partial (its marks cleared): renamed to NAME, never over another file,
// and the directory entry fsynced (unless --fsync never). error_number: the rename's errno.
core::Result<void> Recorder::take_final_name(const SegmentName& segment, int& error_number) {
  const std::filesystem::path final_name = final_path(segment);
  if (::renameat2(AT_FDCWD, segment.path.c_str(), AT_FDCWD, final_name.c_str(), RENAME_NOREPLACE) != 0) {
    error_number = errno;
    return core::fail(core::Errc::io_error, "cannot give " + segment.path.string() + ", which a killed recorder left, its final name " +
                                                final_name.filename().string() + ": " + std::strerror(error_number));
  }
  if (options_.fsync != FsyncPolicy::never)
    if (const int dir = ::open(target_.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dir >= 0) {
      (void)::fsync(dir);
      ::close(dir);
    }
  notice("named " + final_name.string() + ": the file a killed recorder left as " + segment.path.filename().string());
  return {};
}

// Every file of the recorder's naming (DIR form: its arena's; FILE form: its series) of a run other
// than its own, oldest first, that lacks its manifest (with checksums) or its FILE.handed (with a
// hand-off): queued for the closed-file thread with its own run. A NAME.partial among them whose
// writer is dead is cleared of its marks and named first; a run whose writer may still run (a live
// pid here, or another host) is left alone whole.
std::vector<OwedFile> Recorder::owed_files() {
  std::vector<OwedFile> owed;
  const bool handoff = !options_.on_close.command.empty();
  if (!options_.checksums && !handoff) return owed;
  struct Found {
    SegmentName name;
    std::uint64_t run = 0;
    bool marked = false;
  };
  std::vector<Found> found;
  std::set<std::uint64_t> live_runs;
  for (const SegmentName& s : existing_segments(target_)) {
    if (target_.is_dir && s.arena != arena_name_) continue;
    std::uint64_t run = s.run;
    std::optional<SegmentInfo> info;
    if (!target_.is_dir || s.partial) {  // FILE form: the run is in the file; a partial: its writer
      auto read = read_segment(s.path);
      if (!read) continue;  // unreadable: not this recorder's to touch (`weir audit` names it)
      info = std::move(*read);
      run = info->run;
    }
    if (run == run_ || live_runs.count(run) != 0) continue;
    if (s.partial) {
      if (const std::string live = live_writer(*info, host_); !live.empty()) {
        live_runs.insert(run);
        continue;
      }
    }
    found.push_back(Found{s, run, info && info->marked});
  }
  for (Found& f : found) {
    if (live_runs.count(f.run) != 0) continue;
    if (f.name.partial) {
      if (auto cleared = f.marked ? clear_marks(f.name.path) : core::Result<void>{}; !cleared) {
        notice("left " + f.name.path.string() + " as it is: " + cleared.error().what);
        continue;
      }
      int error_number = 0;
      if (auto named = take_final_name(f.name, error_number); !named) {
        notice(named.error().what);
        continue;
      }
      f.name.path = final_path(f.name);
      f.name.partial = false;
    }
    std::error_code ec;
    const bool unhashed = options_.checksums && !std::filesystem::exists(ledger::manifest_path(f.name.path), ec);
    if (unhashed || (handoff && !ledger::handed_over(f.name.path))) owed.push_back(OwedFile{f.name.path.string(), f.run});
  }
  if (!owed.empty())
    notice("taking up " + std::to_string(owed.size()) + " closed file(s) of earlier runs still owed a " +
           std::string(handoff ? "hand-off or manifest" : "manifest") + ", oldest first (" + owed.front().file + " ...)");
  return owed;
}

}  // namespace weir::rec
