#pragma once
// driver "epics", inside: the entry queue from CA's callbacks to the driver's thread, a PV's state,
// and the Driver whose members ca_driver.cpp (its thread: open, flush, run, close) and
// ca_callbacks.cpp (CA's callbacks: connections, DBR_CTRL answers, values, waveform frames) define.
#include <cadef.h>
#include <epicsTime.h>

#include <atomic>
#include <bit>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "weir/core/arena.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/counter_keys.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/pv_log.hpp"
#include "weir/epics/ca_driver.hpp"

namespace weir::epics::detail {

using core::PvLogEntry;
using core::Result;

inline std::int64_t realtime_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// An EPICS time stamp (seconds since 1990) as ns since the Unix epoch; a never-processed record's
// zero stamp stays 0.
inline std::int64_t unix_ns(const epicsTimeStamp& t) noexcept {
  if (t.secPastEpoch == 0 && t.nsec == 0) return 0;
  return (std::int64_t{t.secPastEpoch} + POSIX_TIME_AT_EPICS_EPOCH) * 1'000'000'000 + std::int64_t{t.nsec};
}


// Entries from the CA callbacks to the driver's thread: a bounded ring, one consumer. Producers
// are CA's callback threads, which the library serialises; the mutex only makes that a rule here
// and is never held by the consumer.
class EntryQueue {
 public:
  explicit EntryQueue(std::uint32_t capacity) : ring_(std::bit_ceil(capacity)), mask_(ring_.size() - 1) {}
  bool push(const PvLogEntry& e) noexcept {
    const std::lock_guard lock(producers_);
    const std::uint64_t head = head_.load(std::memory_order_relaxed);
    if (head - tail_.load(std::memory_order_acquire) >= ring_.size()) return false;
    ring_[head & mask_] = e;
    head_.store(head + 1, std::memory_order_release);
    return true;
  }
  /// Entries waiting. Thread: the consumer.
  [[nodiscard]] std::uint64_t size() const noexcept {
    return head_.load(std::memory_order_acquire) - tail_.load(std::memory_order_relaxed);
  }
  /// Copies up to `max` entries to out (as bytes) and removes them. Thread: the consumer.
  std::uint32_t pop(std::byte* out, std::uint32_t max) noexcept {
    const std::uint64_t tail = tail_.load(std::memory_order_relaxed);
    const auto n = static_cast<std::uint32_t>(std::min<std::uint64_t>(max, head_.load(std::memory_order_acquire) - tail));
    for (std::uint32_t i = 0; i < n; ++i)
      std::memcpy(out + std::size_t{i} * sizeof(PvLogEntry), &ring_[(tail + i) & mask_], sizeof(PvLogEntry));
    tail_.store(tail + n, std::memory_order_release);
    return n;
  }

 private:
  std::vector<PvLogEntry> ring_;
  std::uint64_t mask_;
  std::mutex producers_;
  alignas(64) std::atomic<std::uint64_t> head_{0};
  alignas(64) std::atomic<std::uint64_t> tail_{0};
};

struct Counters {
  std::atomic<std::uint64_t> updates{0}, connects{0}, disconnects{0}, dropped{0}, truncated{0}, connected{0};
};

class Driver;

struct Pv {
  Driver* driver = nullptr;
  PvSpec spec;
  std::uint32_t index = 0;
  chid channel = nullptr;
  evid subscription = nullptr;
  bool subscribed = false;
  bool connected = false;  // CA's view, in the callbacks
  bool ever_connected = false;
  core::PvType type = core::PvType::unknown;       // the CA callbacks'
  std::atomic<std::uint8_t> type_seen{0};           // the same, for the driver's thread (its dropped entries)
  std::vector<std::string> states;  // an enum's, from its DBR_CTRL_ENUM
  core::KeyHandle value_key{};
  std::string meta_key, state_key, units_key;  // `<key>_state` (enums) and `<key>_units`: written when there is one
  std::atomic<std::uint32_t> dropped{0};  // updates dropped since the last `dropped` entry
  // a waveform: its channel
  std::unique_ptr<core::ChannelWriter> writer;
  bool gap_pending = false;  // a disconnect not yet marked in the channel
};

class Driver {
 public:
  Driver(const core::Arena& arena, const DriverOptions& options)
      : arena_(arena), options_(options), kv_(arena), queue_(options.queue_entries),
        counters_keys_(arena, options.part + ".") {
    k_pvs_ = counters_keys_.add("pvs");
    k_connected_ = counters_keys_.add("pvs_connected");
    k_updates_ = counters_keys_.add("updates");
    k_connects_ = counters_keys_.add("connects");
    k_disconnects_ = counters_keys_.add("disconnects");
    k_dropped_ = counters_keys_.add("dropped");
    k_truncated_ = counters_keys_.add("truncated");
    k_log_blocks_ = counters_keys_.add("log_blocks");
  }

  Result<void> open();
  void run(const std::atomic<bool>& stop, DriverReport& report);
  void close();

  // CA callbacks
  void on_connection(Pv& pv, bool up);
  void on_ctrl(Pv& pv, const event_handler_args& args);
  void on_value(Pv& pv, const event_handler_args& args);

 private:
  void subscribe(Pv& pv);
  void push(Pv& pv, const PvLogEntry& e);
  void log_connection(Pv& pv, core::PvEvent event);
  void write_waveform(Pv& pv, const event_handler_args& args);
  void flush(bool all);
  void publish_counters();

  const core::Arena& arena_;
  const DriverOptions& options_;
  core::KvStore kv_;
  EntryQueue queue_;
  std::vector<std::unique_ptr<Pv>> pvs_;
  std::unique_ptr<core::ChannelWriter> log_;
  Counters counters_;
  std::atomic<bool> any_dropped_{false};
  std::uint64_t log_blocks_ = 0, log_lost_ = 0;
  core::CounterKeys counters_keys_;
  std::size_t k_pvs_ = 0, k_connected_ = 0, k_updates_ = 0, k_connects_ = 0, k_disconnects_ = 0, k_dropped_ = 0,
              k_truncated_ = 0, k_log_blocks_ = 0;
  ca_client_context* context_ = nullptr;
};

extern "C" {
void connection_cb(connection_handler_args args);
void ctrl_cb(event_handler_args args);
void value_cb(event_handler_args args);
}

}  // namespace weir::epics::detail
