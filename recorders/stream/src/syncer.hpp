#pragma once
// fsync off the recording thread: files closed at a rotation (and, for --fsync interval, the open
// file) are handed over as duplicated descriptors and fsynced, with their directory, by one thread
// of their own, so a sync never stalls the reading of blocks. Finish() waits for every sync handed
// over: when it returns, each closed file is on disk or its failure is known.
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

  /// Hands over a descriptor (owned from here on) of `file`; closed: the file is closed (its
  /// directory entry is synced too), `index` its place in the recorder's file list. Cold path.
  void add(int fd, std::string file, bool closed, std::size_t index);
  /// The first sync that failed, if any (named: "fsync FILE: errno = N, reason"). Thread: any.
  [[nodiscard]] std::optional<core::Error> failure() const;
  /// Waits until every sync handed over is done, then stops the thread. Returns the indexes of the
  /// closed files that reached the disk. Thread: the one that adds.
  std::vector<std::size_t> finish();

 private:
  struct Job {
    int fd = -1;
    std::string file;
    bool closed = false;
    std::size_t index = 0;
  };
  void work();

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
