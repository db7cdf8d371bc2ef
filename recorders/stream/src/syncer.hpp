#pragma once
// fsync off the recording thread: files closed at a rotation (and, for --fsync interval, the open
// file) are handed over as duplicated descriptors and fsynced, with their directory, by one thread
// of their own, so a sync never stalls the reading of blocks. Finish() waits for every sync handed
// over: when it returns, each closed file is on disk or its failure is known. A closed file written
// under a temporary name takes its final name here, after its fsync and before its directory's: the
// final name never holds a file that is not whole on the disk.
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "weir/core/error.hpp"

namespace weir::rec {

class Syncer {
 public:
  /// dir_fd: the output directory (not owned), fsynced after each closed file. synced(ns): called
  /// from the sync thread after each completed sync (the run record's synced_ns). on_disk(file): called
  /// from the sync thread once a closed file and its directory entry are on the disk (may be empty).
  Syncer(int dir_fd, std::function<void(std::uint64_t)> synced, std::function<void(const std::string&)> on_disk = {});
  Syncer(const Syncer&) = delete;
  Syncer& operator=(const Syncer&) = delete;
  ~Syncer();

  /// Hands over a descriptor (owned from here on) of the open `file` (fsync interval). Cold path.
  void add_open(int fd, std::string file);
  /// Hands over a descriptor (owned from here on) of the closed `file`, to be renamed `final_name`
  /// (never over another file) once on the disk, then its directory synced; `index` its place in the
  /// recorder's file list. on_disk gets final_name. Cold path.
  void add_closed(int fd, std::string file, std::string final_name, std::size_t index);
  /// The first sync that failed, if any (named: "fsync FILE: errno = N, reason"). Thread: any.
  [[nodiscard]] std::optional<core::Error> failure() const;
  /// Waits until every sync handed over is done, then stops the thread. Returns the indexes of the
  /// closed files that reached the disk. Thread: the one that adds.
  std::vector<std::size_t> finish();

 private:
  struct Job {
    int fd = -1;
    std::string file;
    std::string final_name;  // a closed file's: what it is renamed to
    bool closed = false;
    std::size_t index = 0;
  };
  void work();
  [[nodiscard]] std::string sync(const Job& job) const;  // closes job.fd; what failed ("" when nothing did)

  int dir_fd_;
  std::function<void(std::uint64_t)> synced_;
  std::function<void(const std::string&)> on_disk_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> jobs_;
  std::vector<std::size_t> done_;
  std::optional<core::Error> failure_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace weir::rec
