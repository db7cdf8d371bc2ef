// Retention: the choice (weir/recorder/retention.hpp) and the thread that deletes (retention.hpp).
#include "retention.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <numeric>
#include <optional>

#include "process_info.hpp"
#include "weir/ledger/manifest.hpp"
#include "weir/ledger/run_record.hpp"
#include "weir/recorder/format.hpp"

namespace weir::rec {

namespace {

constexpr double kBytesPerGib = 1024.0 * 1024.0 * 1024.0;
constexpr double kNsPerDay = 86400.0 * 1e9;
constexpr char kHandPart[] = "record";

std::string mib_text(std::uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return text;
}

}  // namespace

std::string_view keep_after_name(KeepAfter after) noexcept {
  switch (after) {
    case KeepAfter::closed: return "closed";
    case KeepAfter::handed_over: return "handed_over";
  }
  return "closed";
}

core::Result<KeepAfter> parse_keep_after(std::string_view text) {
  for (const KeepAfter a : {KeepAfter::closed, KeepAfter::handed_over})
    if (keep_after_name(a) == text) return a;
  return core::fail(core::Errc::invalid_argument,
                    "keep after '" + std::string(text) + "': it is 'closed' or 'handed_over'");
}

std::string_view delete_reason_name(DeleteReason reason) noexcept {
  switch (reason) {
    case DeleteReason::free_space: return "free_space";
    case DeleteReason::max_total: return "max_total";
    case DeleteReason::max_age: return "max_age";
  }
  return "free_space";
}

std::uint64_t gib_bytes(double gib) noexcept {
  if (!(gib > 0)) return 0;
  return static_cast<std::uint64_t>(std::floor(gib * kBytesPerGib));
}

RetentionPlan plan_retention(const std::vector<KeptFile>& files, const KeepOptions& keep, bool handoff_required,
                             std::uint64_t free_bytes, std::int64_t now_ns) {
  RetentionPlan plan;
  std::vector<std::size_t> order(files.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const KeptFile &x = files[a], &y = files[b];
    if (x.run != y.run) return x.run < y.run;
    if (x.segment != y.segment) return x.segment < y.segment;
    return x.path < y.path;
  });
  const std::uint64_t floor = gib_bytes(keep.free_gib);
  const std::uint64_t cap = gib_bytes(keep.max_gib);
  const double max_age_ns = keep.max_age_days > 0 ? keep.max_age_days * kNsPerDay : 0;
  std::uint64_t total = 0;
  for (const KeptFile& f : files) total += f.bytes;
  std::uint64_t free = free_bytes;
  for (const std::size_t i : order) {
    const KeptFile& f = files[i];
    std::optional<DeleteReason> reason;
    if (floor > 0 && free < floor)
      reason = DeleteReason::free_space;
    else if (cap > 0 && total > cap)
      reason = DeleteReason::max_total;
    else if (max_age_ns > 0 && static_cast<double>(now_ns - f.closed_ns) > max_age_ns)
      reason = DeleteReason::max_age;
    if (!reason) continue;  // under every limit for this file; an older one further on may still be over the age
    if (f.open_run || (handoff_required && !f.handed)) {
      ++plan.kept_back;
      continue;
    }
    plan.deletions.push_back(DeleteChoice{i, *reason});
    free += f.bytes;
    total -= f.bytes;
  }
  plan.blocked = floor > 0 && free < floor;
  return plan;
}

RetentionCounters& retention_counters() noexcept {
  static RetentionCounters counters;
  return counters;
}

Retention::Retention(RetentionSetup setup, std::function<void(std::string_view)> notice)
    : setup_(std::move(setup)),
      prefix_(setup_.target.is_dir ? setup_.arena : setup_.target.stem),
      notice_(std::move(notice)),
      counters_(retention_counters()),
      thread_([this] { work(); }) {}

Retention::~Retention() { finish(); }

void Retention::poke() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    poked_ = true;
  }
  wake_.notify_one();
}

void Retention::finish() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void Retention::work() {
  for (;;) {
    pass();
    std::unique_lock<std::mutex> lock(mutex_);
    wake_.wait_for(lock, std::chrono::milliseconds(kRetentionPeriodMs), [this] { return poked_ || stopping_; });
    if (stopping_) return;
    poked_ = false;
  }
}

bool Retention::run_finished(std::uint64_t run) {
  if (finished_.count(run) != 0) return true;
  auto record = ledger::read_run_record(ledger::run_record_path(setup_.target.dir, prefix_, run));
  if (!record || !*record || (*record)->stopped_ns == 0) return false;  // no record, or a run not (known) stopped
  finished_.insert(run);
  return true;
}

void Retention::pass() {
  counters_.passes.fetch_add(1, std::memory_order_relaxed);
  auto free = free_bytes(setup_.target.dir);
  if (!free) {
    counters_.failures.fetch_add(1, std::memory_order_relaxed);
    return;  // the recording thread meets the same fault and says so
  }
  std::vector<KeptFile> files;
  for (const SegmentName& s : existing_segments(setup_.target)) {
    if (setup_.target.is_dir && s.arena != setup_.arena) continue;  // another arena's recorder's
    KeptFile f;
    f.path = s.path.string();
    f.segment = s.number;
    f.run = s.run;
    if (!setup_.target.is_dir) {  // FILE form: the run is in the file, and in its manifest
      auto manifest = ledger::read_manifest(ledger::manifest_path(s.path));
      if (!manifest || manifest->run == 0) continue;  // not known to be of a finished run: never taken
      f.run = manifest->run;
    }
    struct stat st {};
    if (::stat(f.path.c_str(), &st) != 0) continue;
    f.bytes = static_cast<std::uint64_t>(st.st_size);
    f.closed_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
    // NAME.partial: being written, or left by a killed recorder until its run is continued: never taken.
    f.open_run = s.partial || f.run == setup_.own_run || !run_finished(f.run);
    f.handed = ledger::handed_over(s.path);
    files.push_back(std::move(f));
  }
  const RetentionPlan plan =
      plan_retention(files, setup_.keep, setup_.handoff_required, *free, static_cast<std::int64_t>(realtime_ns()));
  std::uint64_t free_now = *free;
  for (const DeleteChoice& d : plan.deletions) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) return;
    }
    if (remove(files[d.index], d.reason, free_now)) free_now += files[d.index].bytes;
  }
  counters_.kept_back.store(plan.kept_back, std::memory_order_relaxed);
  const bool blocked = plan.blocked;
  if (blocked && counters_.blocked.load(std::memory_order_relaxed) == 0 && notice_)
    notice_("retention blocked: " + mib_text(free_now) + " free in " + setup_.target.dir.string() + ", below keep.free_gib (" +
            mib_text(gib_bytes(setup_.keep.free_gib)) + "), and nothing more may be deleted (" +
            std::to_string(plan.kept_back) + " file(s) of the open run or not handed over yet)");
  else if (!blocked && counters_.blocked.load(std::memory_order_relaxed) != 0 && notice_)
    notice_("retention unblocked: " + mib_text(free_now) + " free in " + setup_.target.dir.string());
  counters_.blocked.store(blocked ? 1 : 0, std::memory_order_relaxed);
}

bool Retention::remove(const KeptFile& file, DeleteReason reason, std::uint64_t free_bytes) {
  const std::filesystem::path path(file.path);
  const std::string name = path.filename().string();
  std::string sha256;
  if (auto m = ledger::read_manifest(ledger::manifest_path(path))) sha256 = m->sha256;
  const std::uint64_t now = realtime_ns();
  // The deletion is on record before the file goes: a file is never gone without a word.
  auto recorded = ledger::update_run_record(ledger::run_record_path(setup_.target.dir, prefix_, file.run),
                                            [&](ledger::RunRecord& r) {
    const bool known = std::any_of(r.deleted.begin(), r.deleted.end(), [&](const ledger::DeletedFile& d) { return d.file == name; });
    if (!known)
      r.deleted.push_back(ledger::DeletedFile{name, file.segment, file.bytes, sha256, std::string(delete_reason_name(reason)),
                                              setup_.part.empty() ? kHandPart : setup_.part, now});
  });
  if (!recorded) {
    counters_.failures.fetch_add(1, std::memory_order_relaxed);
    if (notice_) notice_("retention: " + file.path + " kept: its deletion could not be recorded: " + recorded.error().what);
    return false;
  }
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    counters_.failures.fetch_add(1, std::memory_order_relaxed);
    if (notice_) notice_("retention: cannot delete " + file.path + ": " + std::strerror(errno));
    return false;
  }
  // Its manifest and hand-off marker go with it: the run record holds its digest and the deletion.
  (void)::unlink(ledger::manifest_path(path).c_str());
  (void)::unlink(ledger::handed_path(path).c_str());
  const int dir = ::open(setup_.target.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    (void)::fsync(dir);
    (void)::close(dir);
  }
  counters_.deleted_files.fetch_add(1, std::memory_order_relaxed);
  counters_.deleted_bytes.fetch_add(file.bytes, std::memory_order_relaxed);
  if (notice_) {
    std::string why;
    switch (reason) {
      case DeleteReason::free_space:
        why = mib_text(free_bytes) + " free, below keep.free_gib (" + mib_text(gib_bytes(setup_.keep.free_gib)) + ")";
        break;
      case DeleteReason::max_total: why = "the recorder's files over keep.max_gib (" + mib_text(gib_bytes(setup_.keep.max_gib)) + ")"; break;
      case DeleteReason::max_age: why = "older than keep.max_age_days (" + std::to_string(setup_.keep.max_age_days) + ")"; break;
    }
    notice_("retention deleted " + file.path + " (run " + std::to_string(file.run) + ", " + std::to_string(file.bytes) +
            " bytes), reason " + std::string(delete_reason_name(reason)) + ": " + why);
  }
  return true;
}

}  // namespace weir::rec
