#pragma once
// driver "epics", inside: a PV's state, and the Driver whose members ca_driver.cpp (its thread: open,
// flush, close; the loop and the queue are controls/client's) and
// ca_callbacks.cpp (CA's callbacks: connections, DBR_CTRL answers, values, waveform frames) define.
#include <cadef.h>
#include <epicsTime.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "weir/controls/driver_counters.hpp"
#include "weir/controls/driver_loop.hpp"
#include "weir/controls/entry_queue.hpp"
#include "weir/controls/frame_writer.hpp"
#include "weir/controls/item_keys.hpp"
#include "weir/controls/pv_log_channel.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/pv_log.hpp"
#include "weir/epics/ca_driver.hpp"

namespace weir::epics::detail {

using core::PvLogEntry;
using core::Result;
using controls::realtime_ns;

// An EPICS time stamp (seconds since 1990) as ns since the Unix epoch; a never-processed record's
// zero stamp stays 0.
inline std::int64_t unix_ns(const epicsTimeStamp& t) noexcept {
  if (t.secPastEpoch == 0 && t.nsec == 0) return 0;
  return (std::int64_t{t.secPastEpoch} + POSIX_TIME_AT_EPICS_EPOCH) * 1'000'000'000 + std::int64_t{t.nsec};
}


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
  std::vector<std::string> states;  // an enum's, from its DBR_CTRL_ENUM
  controls::ItemKeys keys;  // a scalar's
  // a waveform: its channel
  std::unique_ptr<core::ChannelWriter> writer;
  bool gap_pending = false;  // a disconnect not yet marked in the channel
};

// CA's callbacks fill the entry queue and count; the driver's thread (controls::run_driver_loop)
// moves the queue into the PV log and publishes the counters.
class Driver final : public controls::DriverThread {
 public:
  Driver(const core::Arena& arena, const DriverOptions& options)
      : arena_(arena), options_(options), kv_(arena), queue_(options.queue_entries, options.pvs.size()),
        counter_keys_(arena, options.part, false) {}

  Result<void> open();
  void close();

  // the driver's thread
  void flush(bool all) override;
  void publish_counters() override;
  std::size_t not_connected(std::string& names, std::size_t max) override;

  // CA callbacks
  void on_connection(Pv& pv, bool up);
  void on_ctrl(Pv& pv, const event_handler_args& args);
  void on_value(Pv& pv, const event_handler_args& args);

 private:
  void subscribe(Pv& pv);
  void log_connection(Pv& pv, core::PvEvent event);
  void write_waveform(Pv& pv, const event_handler_args& args);

  const core::Arena& arena_;
  const DriverOptions& options_;
  core::KvStore kv_;
  controls::EntryQueue queue_;
  std::vector<std::unique_ptr<Pv>> pvs_;
  std::optional<controls::PvLogChannel> log_;
  controls::DriverCounts counts_;
  controls::CounterPublisher counter_keys_;
  ca_client_context* context_ = nullptr;
};

extern "C" {
void connection_cb(connection_handler_args args);
void ctrl_cb(event_handler_args args);
void value_cb(event_handler_args args);
}

}  // namespace weir::epics::detail
