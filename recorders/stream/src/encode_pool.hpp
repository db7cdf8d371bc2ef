#pragma once
// The recorder's encoder threads: a channel's full data chunk is handed over here, encoded by a
// weir::codec::Encoder on one of N threads while the recording thread goes on reading blocks, and
// collected, in order, by the column that sealed it (column.cpp), which hands the encoded bytes to
// HDF5 with H5Dwrite_chunk. HDF5 itself is only ever called from the recording thread.
//
// A job is handed over and collected once per chunk (256 KiB of samples): a mutex and two condition
// variables, not a lock-free queue, since the per-sample path never comes here.
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "weir/codec/codec.hpp"
#include "weir/core/error.hpp"

namespace weir::rec {

/// One chunk to encode. Owned by its column; the pool only borrows it between submit() and done.
struct EncodeJob {
  codec::Codec codec{};
  std::size_t element_bytes = 0;       // a sample's bytes (the shuffle's element)
  std::span<const std::byte> in;       // the chunk's bytes, untouched until done
  std::vector<std::byte> out;          // the encoded bytes (capacity kept from chunk to chunk)
  std::optional<core::Error> error;    // the encoder's failure, if it failed
  std::atomic<bool> done{true};
};

class EncodePool {
 public:
  /// threads == 0: jobs are encoded by submit() itself, on the caller's thread.
  explicit EncodePool(unsigned threads);
  EncodePool(const EncodePool&) = delete;
  EncodePool& operator=(const EncodePool&) = delete;
  ~EncodePool();  // finishes the jobs handed over, then joins the threads

  /// Queues `job` (its codec, element_bytes and in set). Thread: the recording thread.
  void submit(EncodeJob& job);
  /// Waits until `job` is done: its out or error is then set. A job not done within kEncodeTimeout
  /// (an encoder thread stuck) is an error naming the wait. Thread: the recording thread.
  [[nodiscard]] core::Result<void> wait(EncodeJob& job);
  [[nodiscard]] unsigned threads() const noexcept { return static_cast<unsigned>(threads_.size()); }
  /// Chunks encoded so far, by all threads. Thread: any.
  [[nodiscard]] std::uint64_t encoded() const noexcept { return encoded_.load(std::memory_order_relaxed); }

  /// The number of encoder threads for `requested` (0: one per CPU this process may run on, at most 8).
  [[nodiscard]] static unsigned threads_for(unsigned requested) noexcept;

 private:
  struct Worker;
  void run(Worker& worker);
  static void encode(EncodeJob& job, std::vector<std::pair<codec::Codec, std::size_t>>& keys,
                     std::vector<codec::Encoder>& encoders);

  std::mutex mutex_;
  std::condition_variable work_;
  std::condition_variable finished_;
  std::deque<EncodeJob*> queue_;
  bool stopping_ = false;
  std::atomic<std::uint64_t> encoded_{0};
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<std::thread> threads_;
  std::unique_ptr<Worker> inline_;  // threads == 0: submit() encodes with this one
};

}  // namespace weir::rec
