#pragma once
// driver "tango", inside: an attribute's and a device's state, and the Driver whose members are
// defined by tango_driver.cpp (open, close, the driver thread's flush and counters),
// device_thread.cpp (a device's thread: pings, subscriptions, polled reads) and attr_updates.cpp
// (values and connection changes from the device threads and Tango's event consumer).
//
// Threads: one per device; Tango's event consumer (change events of the subscribed attributes); the
// driver's (controls::run_driver_loop). What the device and event threads change of an attribute,
// and every key and channel write, is under Driver::mu_; the entry queue and the counters are the
// controls library's, safe from any thread.
#include <tango.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "attr_meta.hpp"
#include "weir/controls/driver_counters.hpp"
#include "weir/controls/driver_loop.hpp"
#include "weir/controls/entry_queue.hpp"
#include "weir/controls/item_keys.hpp"
#include "weir/controls/pv_log_channel.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/pv_log.hpp"
#include "weir/tango/driver_config.hpp"

namespace weir::tango::detail {

using Clock = std::chrono::steady_clock;

class Driver;
struct Device;
struct Attr;

enum class Mode : std::uint8_t { pending, events, polled, refused };

class EventSink : public ::Tango::CallBack {
 public:
  EventSink(Driver& driver, Attr& attr) : driver_(driver), attr_(attr) {}
  void push_event(::Tango::EventData* ed) override;

 private:
  Driver& driver_;
  Attr& attr_;
};

struct Attr {
  AttributeSpec spec;
  std::uint32_t index = 0;
  Device* device = nullptr;
  // the device's thread
  Mode mode = Mode::pending;
  int event_id = -1;
  std::atomic<bool> resubscribe{false};  // set by an error event
  Clock::duration poll_every{};
  Clock::time_point next_poll{};
  std::string last_problem;
  std::unique_ptr<EventSink> sink;
  // under Driver::mu_
  AttrMeta meta;
  bool connected = false;
  std::int64_t last_ns = -1;  // the last update's device time stamp
  core::PvLogEntry last;      // a scalar's last update
  controls::ItemKeys keys;    // a scalar's
  std::unique_ptr<core::ChannelWriter> writer;  // a spectrum's
  std::vector<double> values;                   // a spectrum's last read, reused
};

struct Device {
  std::string trl;
  std::unique_ptr<::Tango::DeviceProxy> proxy;
  std::vector<Attr*> attrs;
  bool reachable = false;
  std::string last_problem;
  std::thread thread;
};

class Driver final : public controls::DriverThread {
 public:
  Driver(const core::Arena& arena, const DriverOptions& options)
      : arena_(arena), options_(options), kv_(arena), queue_(options.queue_entries, options.attributes.size()),
        counter_keys_(arena, options.part, true) {}

  core::Result<void> open();
  void close();

  // the driver's thread
  void flush(bool all) override;
  void publish_counters() override;
  std::size_t not_connected(std::string& names, std::size_t max) override;

  // Tango's event consumer
  void on_event(Attr& a, ::Tango::EventData* ed);

 private:
  // a device's thread (device_thread.cpp)
  void device_loop(Device& d);
  void set_up(Device& d, Attr& a);
  void poll(Device& d, Attr& a);
  // values and connections (attr_updates.cpp); connect, disconnect and write_spectrum under mu_
  void on_value(Attr& a, ::Tango::DeviceAttribute& da);
  void connect(Attr& a);
  void disconnect(Attr& a);
  void log_connection(const Attr& a, core::PvEvent event);
  void write_spectrum(Attr& a, ::Tango::DeviceAttribute& da);
  bool stopping() const { return stopping_.load(std::memory_order_relaxed); }  // relaxed: a flag

  const core::Arena& arena_;
  const DriverOptions& options_;
  core::KvStore kv_;
  controls::EntryQueue queue_;
  std::vector<std::unique_ptr<Attr>> attrs_;
  std::vector<std::unique_ptr<Device>> devices_;
  std::optional<controls::PvLogChannel> log_;
  std::mutex mu_;
  controls::DriverCounts counts_;
  controls::CounterPublisher counter_keys_;
  std::atomic<bool> stopping_{false};
  std::mutex wake_mu_;
  std::condition_variable wake_;
};

/// The first error's reason and description.
[[nodiscard]] std::string reason_of(const ::Tango::DevFailed& e);
/// The first error's reason.
[[nodiscard]] std::string reason_of(const ::Tango::DevErrorList& errors);
/// A subscription that failed because the device cannot be reached (try again), not because it has
/// no change events for the attribute (poll it).
[[nodiscard]] bool unreachable(const ::Tango::DevFailed& e);

}  // namespace weir::tango::detail
