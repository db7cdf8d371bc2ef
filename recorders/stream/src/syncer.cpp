// fsync in a thread of its own (syncer.hpp).
#include "syncer.hpp"

#include <fcntl.h>  // AT_FDCWD
#include <stdio.h>  // renameat2
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "process_info.hpp"

namespace weir::rec {

Syncer::Syncer(int dir_fd, std::function<void(std::uint64_t)> synced, std::function<void(const std::string&)> on_disk)
    : dir_fd_(dir_fd), synced_(std::move(synced)), on_disk_(std::move(on_disk)), thread_([this] { work(); }) {}

Syncer::~Syncer() { (void)finish(); }

void Syncer::add_open(int fd, std::string file) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back(Job{fd, std::move(file), {}, false, 0});
  }
  wake_.notify_one();
}

void Syncer::add_closed(int fd, std::string file, std::string final_name, std::size_t index) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back(Job{fd, std::move(file), std::move(final_name), true, index});
  }
  wake_.notify_one();
}

std::optional<core::Error> Syncer::failure() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return failure_;
}

std::vector<std::size_t> Syncer::finish() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
  const std::lock_guard<std::mutex> lock(mutex_);
  return done_;
}

void Syncer::work() {
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stopping, and every job done
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    const std::string what = sync(job);
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (!what.empty() && !failure_) failure_ = core::Error{core::Errc::io_error, what};
      if (what.empty() && job.closed) done_.push_back(job.index);
    }
    if (what.empty() && synced_) synced_(realtime_ns());
    if (what.empty() && job.closed && on_disk_) on_disk_(job.final_name);
  }
}

std::string Syncer::sync(const Job& job) const {
  const auto failed = [](const std::string& call, int e) {
    return call + ": errno = " + std::to_string(e) + ", " + std::strerror(e);
  };
  // Closed before the rename: no close of a descriptor open for writing is ever seen under the final name.
  const bool synced = ::fsync(job.fd) == 0;
  const int e = errno;
  ::close(job.fd);
  if (!synced) return failed("fsync " + job.file, e);
  if (!job.closed) return {};
  if (::renameat2(AT_FDCWD, job.file.c_str(), AT_FDCWD, job.final_name.c_str(), RENAME_NOREPLACE) != 0)
    return failed("rename " + job.file + " to " + job.final_name, errno);
  if (dir_fd_ < 0) return failed("fsync of the directory of " + job.final_name, EBADF);
  if (::fsync(dir_fd_) != 0) return failed("fsync of the directory of " + job.final_name, errno);  // the new name
  return {};
}

}  // namespace weir::rec
