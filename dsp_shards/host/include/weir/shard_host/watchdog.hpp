#pragma once
// The hang watchdog: a thread of the host process that sees one process() call run past its limit
// and aborts the whole host, with a message naming the shard, its instance and the block. A hung
// shard cannot be cancelled safely (it may hold anything), so the process ends; the arena reaps its
// consumer row and its output channels get a new writer when the host is restarted.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>


namespace weir::shard_host {

class Watchdog {
 public:
  /// What the abort message says about the party at index `who` of arm().
  struct Party {
    std::string shard;     // "shard 'fft'" or "shard './libgain.so'"
    std::string instance;  // consumer name
    std::string input;     // input channel
  };

  /// Starts the thread; limit_ns <= 0 makes a watchdog that never fires (and starts no thread).
  /// Thread: control only.
  Watchdog(std::int64_t limit_ns, std::vector<Party> parties);
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  ~Watchdog();

  /// Marks the start of one process() call of party `who` on block `sequence`. Hot path: two
  /// relaxed stores and one release store, no syscall. Thread: the processing thread only.
  void arm(std::uint32_t who, std::uint64_t sequence, std::int64_t now_ns) noexcept {
    who_.store(who, std::memory_order_relaxed);            // published by the release store below
    sequence_.store(sequence, std::memory_order_relaxed);  // likewise
    since_ns_.store(now_ns, std::memory_order_release);    // the watchdog reads who/sequence after it
  }
  /// Marks the end of the call. Thread: the processing thread only.
  void disarm() noexcept { since_ns_.store(0, std::memory_order_relaxed); }  // a flag; nothing orders on it

  [[nodiscard]] std::int64_t limit_ns() const noexcept { return limit_ns_; }

 private:
  void run();
  [[noreturn]] void fire(std::int64_t stuck_ns) const noexcept;

  std::int64_t limit_ns_;
  std::vector<Party> parties_;
  std::atomic<std::int64_t> since_ns_{0};  // CLOCK_MONOTONIC start of the call in progress, 0 none
  std::atomic<std::uint32_t> who_{0};
  std::atomic<std::uint64_t> sequence_{0};
  std::mutex mutex_;  // only the watchdog thread and the destructor take it
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};


}  // namespace weir::shard_host
