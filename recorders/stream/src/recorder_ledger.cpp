// The recorder's side of the run's ledger: the run record beside the files (read at start, updated
// at start and at every stop), the output directory watched for a vanished directory or a changed
// filesystem, disk faults classified with their errno, and fsync by the durability policy.
#include <fcntl.h>
#include <stdio.h>  // renameat2
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

#include "process_info.hpp"
#include "recorder_state.hpp"

namespace weir::rec {

namespace {

constexpr char kRecorderWriter[] = "weir record";
constexpr char kRecorderPart[] = "record";
constexpr char kErrnoMarker[] = "errno = ";  // how HDF5's file drivers name the errno of a failed call

// The errno an HDF5 error message names ("..., errno = 5, error message = ..."), 0 when none.
int errno_in(const std::string& text) {
  const std::size_t at = text.rfind(kErrnoMarker);
  if (at == std::string::npos) return 0;
  return std::atoi(text.c_str() + at + std::strlen(kErrnoMarker));
}

// The errno that explains a failure whose message names none (a strerror text in it).
int errno_from_text(const std::string& text) {
  for (const int e : {ENOSPC, EDQUOT, EROFS, EIO, ENOENT, ESTALE, ENOTDIR, EXDEV})
    if (text.find(std::strerror(e)) != std::string::npos) return e;
  return 0;
}

}  // namespace

std::string_view fsync_name(FsyncPolicy policy) noexcept {
  switch (policy) {
    case FsyncPolicy::rotation: return "rotation";
    case FsyncPolicy::interval: return "interval";
    case FsyncPolicy::never: return "never";
  }
  return "rotation";
}

core::Result<FsyncPolicy> parse_fsync(std::string_view text) {
  for (const FsyncPolicy p : {FsyncPolicy::rotation, FsyncPolicy::interval, FsyncPolicy::never})
    if (fsync_name(p) == text) return p;
  return core::fail(core::Errc::invalid_argument,
                    "--fsync " + std::string(text) + ": the policies are rotation, interval and never");
}

core::Result<bool> on_root_filesystem(const std::filesystem::path& dir) {
  // The nearest existing directory: --out may not exist yet.
  std::filesystem::path at = std::filesystem::absolute(dir);
  struct stat here {};
  while (::stat(at.c_str(), &here) != 0) {
    if (errno != ENOENT || !at.has_parent_path() || at.parent_path() == at)
      return core::fail(core::Errc::io_error, "--out " + dir.string() + ": " + std::strerror(errno));
    at = at.parent_path();
  }
  struct stat root {};
  if (::stat("/", &root) != 0) return core::fail(core::Errc::io_error, std::string("/: ") + std::strerror(errno));
  return here.st_dev == root.st_dev;
}

void Recorder::read_record() {
  record_path_ = ledger::run_record_path(target_.dir, target_.is_dir ? arena_name_ : target_.stem, run_);
  auto r = ledger::read_run_record(record_path_);
  if (!r) {
    notice(r.error().what + "; it is rewritten from what this recorder knows");
    return;
  }
  record_ = std::move(*r);
}

// At start: the run, the arena and each followed channel's mark (first_sequence only for a mark
// that is new; written only grows). At a stop: written, dropped_at_source, and the fault if any.
void Recorder::update_record(bool at_stop) {
  const std::uint64_t created = arena_.header().created_ns;
  auto ok = ledger::update_run_record(record_path_, [&](ledger::RunRecord& r) {
    r.run = run_;
    r.arena = arena_name_;
    if (r.arena_created_ns == 0) r.arena_created_ns = created;
    if (r.writer.empty()) r.writer = kRecorderWriter;
    if (r.started_ns == 0) r.started_ns = realtime_ns();
    r.fsync = std::string(fsync_name(options_.fsync));
    if (r.writer == kRecorderWriter) r.stopped_ns = at_stop ? realtime_ns() : 0;
    const bool run_stopped = at_stop && stopped_by_ == "run stop";  // a controlled run's end: every mark final
    if (run_stopped) r.stopped_ns = static_cast<std::uint64_t>(run_stop_ns_);
    for (const Follow& f : follows_) {
      if (f.awaiting_start) continue;  // its first block of the run is not known yet
      const bool known = r.find_channel(f.info.name) != nullptr;
      ledger::ChannelMark& m = r.channel(f.info.name);
      if (!known || m.arena_created_ns != created) {  // new to the run, or to this incarnation of the arena
        m.first_sequence = f.first_sequence;
        m.written = 0;
        m.arena_created_ns = created;
      }
      const core::ChannelDesc& d = f.reader.desc();
      const std::uint64_t head =
          at_stop && (f.stop_head != 0 || f.run_done) ? f.stop_head : d.head.load(std::memory_order_acquire);
      // A controlled run whose stop is known answers only up to the blocks read before it.
      m.written = std::max(m.written, options_.controlled && run_stop_ns_ != 0 && !run_stopped ? f.reader.cursor() : head);
      if (run_stopped) {
        m.written = head;
        m.final = true;
      }
      m.dropped_at_source = std::max(m.dropped_at_source, d.dropped_at_source.load(std::memory_order_relaxed));
    }
    if (run_stopped && !options_.pipeline_file.empty()) {  // the configuration in force at the run's end
      std::ifstream in(options_.pipeline_file, std::ios::binary);
      if (in) r.pipeline_at_end.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    if (at_stop && (disk_full_ || disk_fault_))
      r.faults.push_back(ledger::Fault{kRecorderPart, "disk_error", error_, fault_errno_, realtime_ns()});
  });
  if (!ok) notice(ok.error().what);
}

core::Result<void> Recorder::check_out_dir() {
  struct stat st {};
  const std::string dir = target_.dir.string();
  if (::stat(target_.dir.c_str(), &st) != 0) {
    const int e = errno;
    fault_errno_ = e;
    return core::fail(core::Errc::io_error, "--out " + dir + " is gone: " + std::strerror(e));
  }
  if (st.st_dev != out_dev_) {
    fault_errno_ = EXDEV;
    return core::fail(core::Errc::io_error, "--out " + dir + " is on another filesystem than when recording began "
                                            "(unmounted?): files written now would not go where the earlier ones are");
  }
  if (st.st_ino != out_ino_) {
    fault_errno_ = ENOENT;
    return core::fail(core::Errc::io_error, "--out " + dir + " was removed and made again while recording");
  }
  return {};
}

// Whether a file is still where the summary says: its directory is the one recording began in
// and the file is there. A file that cannot be looked at (EIO from a filesystem shut down) counts
// when it was fsynced after closing: it is on the disk.
bool Recorder::reachable(const std::string& file, bool synced) const noexcept {
  struct stat dir {};
  if (::stat(target_.dir.c_str(), &dir) == 0) {
    if (dir.st_dev != out_dev_ || dir.st_ino != out_ino_) return false;
  } else if (errno == ENOENT || errno == ENOTDIR || !synced) {
    return false;
  }
  struct stat st {};
  if (::stat(file.c_str(), &st) == 0) return true;
  return synced && errno != ENOENT && errno != ENOTDIR;
}

void Recorder::note_fault(const core::Error& error, bool disk_full) {
  error_ = error.what;
  if (fault_errno_ == 0) fault_errno_ = errno_in(error.what);
  if (fault_errno_ == 0) fault_errno_ = errno_from_text(error.what);
  if (fault_errno_ == 0 && disk_full) fault_errno_ = ENOSPC;  // below the reserve: ENOSPC is what came next
  disk_full_ = disk_full || fault_errno_ == ENOSPC || fault_errno_ == EDQUOT;
  disk_fault_ = !disk_full_;
}

bool Recorder::stop_at_start(const core::Error& error) {
  const int known = fault_errno_ != 0 ? fault_errno_ : errno_in(error.what);  // HDF5 names its driver's errno
  const StartFault f = classify_errno(known);
  if (!disk_low_ && !f.disk_full && !f.disk_fault) return false;
  fault_errno_ = known;
  stopped_by_ = "error";
  note_fault(error, disk_low_);
  if (!record_path_.empty()) update_record(true);  // the fault and where each channel was: the tail's reason
  return true;
}

Recorder::~Recorder() {
  syncer_.reset();  // every sync handed over is done before the directory closes
  if (out_fd_ >= 0) ::close(out_fd_);
}

// A closed segment, written as NAME.partial (`partial`), takes its final name (files_.back()) once
// on the disk: by the fsync policy, on the sync thread after its fsync (fd: a dup of its descriptor,
// owned here), then its directory's (a failure is seen at the next flush, and at the stop); with
// --fsync never (or `sync` false), at once. Its manifest and hand-off follow the rename.
core::Result<void> Recorder::finish_name(const std::string& partial, int fd, bool sync) {
  const std::string& final_name = files_.back();
  if (sync && options_.fsync != FsyncPolicy::never && syncer_) {
    if (fd < 0) {
      fault_errno_ = EBADF;
      return core::fail(core::Errc::io_error, "fsync " + partial + ": no descriptor to sync");
    }
    syncer_->add_closed(fd, partial, final_name, files_.size() - 1);
    return {};
  }
  if (fd >= 0) ::close(fd);
  if (::renameat2(AT_FDCWD, partial.c_str(), AT_FDCWD, final_name.c_str(), RENAME_NOREPLACE) != 0) {
    fault_errno_ = errno;
    return core::fail(core::Errc::io_error, "rename " + partial + " to " + final_name + ": " + std::strerror(errno));
  }
  named_closed(final_name);
  return {};
}

void Recorder::named_closed(const std::string& file) {
  if (closed_files_) closed_files_->add(file);
  if (retention_) retention_->poke();  // a file more on the disk: look at the limits now
}

core::Result<void> Recorder::sync_open() {
  if (options_.fsync != FsyncPolicy::interval || !segment_.is_open() || !syncer_) return {};
  const std::int64_t now = monotonic_ns();
  if (now < sync_at_) return {};
  sync_at_ = now + static_cast<std::int64_t>(options_.fsync_interval_s * 1e9);
  if (const int fd = segment_.duplicate_fd(); fd >= 0) syncer_->add_open(fd, segment_.path().string());
  return {};
}

core::Result<void> Recorder::sync_failure() {
  if (!syncer_) return {};
  auto failed = syncer_->failure();
  if (!failed) return {};
  if (fault_errno_ == 0) fault_errno_ = errno_in(failed->what);
  return tl::make_unexpected(*failed);
}

void Recorder::finish_syncs() {
  if (!syncer_) return;
  for (const std::size_t i : syncer_->finish())
    if (i < file_blocks_.size()) file_blocks_[i].synced = true;
  if (auto failed = syncer_->failure(); failed && error_.empty()) {
    stopped_by_ = "error";
    note_fault(*failed, false);
  }
}

void Recorder::finish_closed_files() {
  if (retention_) {  // the pass in progress ends; nothing is deleted after the stop, and the last counts are published
    retention_->finish();
    publish_counters();
    retention_.reset();
  }
  if (closed_files_) closed_files_->finish(monotonic_ns() + static_cast<std::int64_t>(kHandoffStopWaitS * 1e9));
}

void Recorder::note_synced(std::uint64_t now) {
  auto ok = ledger::update_run_record(record_path_, [&](ledger::RunRecord& r) { r.synced_ns = std::max(r.synced_ns, now); });
  if (!ok) notice(ok.error().what);
}

}  // namespace weir::rec
