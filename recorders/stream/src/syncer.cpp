// fsync in a thread of its own (syncer.hpp).
#include "syncer.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "process_info.hpp"

namespace weir::rec {

Syncer::Syncer(int dir_fd, std::function<void(std::uint64_t)> synced, std::function<void(const std::string&)> on_disk)
    : dir_fd_(dir_fd), synced_(std::move(synced)), on_disk_(std::move(on_disk)), thread_([this] { work(); }) {}

Syncer::~Syncer() { (void)finish(); }

void Syncer::add(int fd, std::string file, bool closed, std::size_t index) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back(Job{fd, std::move(file), closed, index});
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
    std::string what;
    if (::fsync(job.fd) != 0) {
      const int e = errno;
      what = "fsync " + job.file + ": errno = " + std::to_string(e) + ", " + std::strerror(e);
    } else if (job.closed && (dir_fd_ < 0 || ::fsync(dir_fd_) != 0)) {  // the new file's directory entry
      const int e = dir_fd_ < 0 ? EBADF : errno;
      what = "fsync of the directory of " + job.file + ": errno = " + std::to_string(e) + ", " + std::strerror(e);
    }
    ::close(job.fd);
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (!what.empty() && !failure_) failure_ = core::Error{core::Errc::io_error, what};
      if (what.empty() && job.closed) done_.push_back(job.index);
    }
    if (what.empty() && synced_) synced_(realtime_ns());
    if (what.empty() && job.closed && on_disk_) on_disk_(job.file);
  }
}

}  // namespace weir::rec
