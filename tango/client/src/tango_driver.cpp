// driver "tango": attributes of other Tango devices into keys, the attribute log channel (the PV log
// layout of core/pv_log.hpp) and spectrum channels.
// Threads: one per device (connects, pings, subscribes, reads the polled attributes); Tango's event
// consumer (change events of the subscribed attributes); the driver's thread drains the entry queue
// into log blocks every flush, publishes the counters and watches the clock. What the device and
// event threads change of an attribute, and every key and channel write, is under one mutex.
#include "weir/tango/tango_driver.hpp"

#include <tango.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <condition_variable>
#include <ctime>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "attr_meta.hpp"
#include "attr_values.hpp"
#include "entry_queue.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/counter_keys.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/json/json.hpp"
#include "weir/tango/driver_config.hpp"

namespace weir::tango {

namespace {

using core::PvLogEntry;
using core::Result;
using Clock = std::chrono::steady_clock;

constexpr auto kReconnectEvery = std::chrono::milliseconds(1100);  // past Tango's 1 s reconnection throttle

std::int64_t realtime_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

std::string reason_of(const ::Tango::DevFailed& e) {
  if (e.errors.length() == 0) return "DevFailed";
  return fmt::format("{}: {}", e.errors[0].reason.in(), e.errors[0].desc.in());
}

std::string reason_of(const ::Tango::DevErrorList& errors) {
  return errors.length() == 0 ? std::string("error") : std::string(errors[0].reason.in());
}

// A subscription that failed because the device cannot be reached (try again), not because it has
// no change events for the attribute (poll it).
bool unreachable(const ::Tango::DevFailed& e) {
  for (unsigned i = 0; i < e.errors.length(); ++i) {
    const std::string reason = e.errors[i].reason.in();
    for (const char* r : {"API_CantConnectToDevice", "API_DeviceNotExported", "API_ServerNotRunning", "API_CorbaException",
                          "API_DeviceTimedOut", "API_CommunicationFailed", "API_ConnectionFailed"})
      if (reason == r) return true;
  }
  return false;
}

bool same_reading(const PvLogEntry& a, const PvLogEntry& b) noexcept {
  return a.severity == b.severity && a.status == b.status && a.i64 == b.i64 && a.text_bytes == b.text_bytes &&
         std::memcmp(a.text, b.text, a.text_bytes) == 0 &&
         (a.f64 == b.f64 || (std::isnan(a.f64) && std::isnan(b.f64)));
}

struct Counters {
  std::uint64_t updates = 0, connects = 0, disconnects = 0, dropped = 0, truncated = 0, connected = 0, polled = 0;
};

class Driver;
struct Device;

enum class Mode : std::uint8_t { pending, events, polled, refused };

struct Attr;

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
  PvLogEntry last;            // a scalar's last update
  core::KeyHandle value_key{};
  std::string meta_key, state_key, units_key;
  std::uint32_t dropped = 0;  // updates dropped since the last `dropped` entry
  std::unique_ptr<core::ChannelWriter> writer;
  std::vector<double> values;
};

struct Device {
  std::string trl;
  std::unique_ptr<::Tango::DeviceProxy> proxy;
  std::vector<Attr*> attrs;
  bool reachable = false;
  std::string last_problem;
  std::thread thread;
};

class Driver {
 public:
  Driver(const core::Arena& arena, const DriverOptions& options)
      : arena_(arena), options_(options), kv_(arena), queue_(options.queue_entries),
        counters_keys_(arena, options.part + ".") {
    for (const char* f : {"pvs", "pvs_connected", "updates", "connects", "disconnects", "dropped", "truncated",
                          "log_blocks", "polled"})
      (void)counters_keys_.add(f);
  }

  Result<void> open();
  void run(const std::atomic<bool>& stop, DriverReport& report);
  void close();
  void on_event(Attr& a, ::Tango::EventData* ed);

 private:
  void device_loop(Device& d);
  void set_up(Device& d, Attr& a);
  void poll(Device& d, Attr& a);
  void on_value(Attr& a, ::Tango::DeviceAttribute& da);
  void connect(Attr& a);
  void disconnect(Attr& a);
  void push(Attr& a, const PvLogEntry& e);
  void write_spectrum(Attr& a, ::Tango::DeviceAttribute& da);
  void flush(bool all);
  void publish_counters();
  bool stopping() const { return stopping_.load(std::memory_order_relaxed); }

  const core::Arena& arena_;
  const DriverOptions& options_;
  core::KvStore kv_;
  EntryQueue queue_;
  std::vector<std::unique_ptr<Attr>> attrs_;
  std::vector<std::unique_ptr<Device>> devices_;
  std::unique_ptr<core::ChannelWriter> log_;
  std::mutex mu_;
  Counters counters_;  // under mu_
  bool any_dropped_ = false;  // under mu_
  std::uint64_t log_blocks_ = 0, log_lost_ = 0;
  core::CounterKeys counters_keys_;
  std::atomic<bool> stopping_{false};
  std::mutex wake_mu_;
  std::condition_variable wake_;
};

void EventSink::push_event(::Tango::EventData* ed) { driver_.on_event(attr_, ed); }

Result<void> Driver::open() {
  // The channels: made by weir run before its drivers start; made here when this driver runs alone.
  const auto make = [&](const core::ChannelSpec& spec) {
    if (!core::find_channel(arena_, spec.name)) (void)core::create_channel(arena_, spec);
  };
  make(log_channel_spec(options_));
  for (const AttributeSpec& a : options_.attributes)
    if (!a.channel.empty()) make(spectrum_channel_spec(a));
  auto log = core::ChannelWriter::open(arena_, options_.log_channel);
  if (!log)
    return core::fail(log.error().code, fmt::format("driver \"{}\": attribute log channel '{}': {}", options_.part,
                                                    options_.log_channel, log.error().what));
  log_ = std::make_unique<core::ChannelWriter>(std::move(*log));
  for (std::size_t i = 0; i < options_.attributes.size(); ++i) {
    auto a = std::make_unique<Attr>();
    a->spec = options_.attributes[i];
    a->index = static_cast<std::uint32_t>(i);
    a->sink = std::make_unique<EventSink>(*this, *a);
    a->meta.pv = a->spec.device + "/" + a->spec.attribute;
    a->meta.key = a->spec.key;
    if (const auto at = a->spec.trl.find("://"); at != std::string::npos)
      a->meta.host = a->spec.trl.substr(at + 3, a->spec.trl.find('/', at + 3) - at - 3);
    if (!a->spec.channel.empty()) {
      auto w = core::ChannelWriter::open(arena_, a->spec.channel);
      if (!w)
        return core::fail(w.error().code, fmt::format("driver \"{}\": attribute {}: channel '{}': {}", options_.part,
                                                      a->spec.name, a->spec.channel, w.error().what));
      a->writer = std::make_unique<core::ChannelWriter>(std::move(*w));
    } else {
      a->meta_key = core::pv_meta_key(options_.log_channel, a->index);
      if (auto s = kv_.set_text(a->meta_key, meta_json(a->meta)); s != core::KvStatus::ok)
        return core::fail(core::Errc::invalid_argument, fmt::format("driver \"{}\": key '{}': {}", options_.part,
                                                                    a->meta_key, core::kv_status_text(s)));
      if (auto s = kv_.resolve(a->spec.key, a->value_key, true); s != core::KvStatus::ok)
        return core::fail(core::Errc::invalid_argument, fmt::format("driver \"{}\": attribute {}: key '{}': {}",
                                                                    options_.part, a->spec.name, a->spec.key,
                                                                    core::kv_status_text(s)));
      a->state_key = a->spec.key + "_state";
      a->units_key = a->spec.key + "_units";
    }
    Device* device = nullptr;
    for (auto& d : devices_)
      if (d->trl == a->spec.trl) device = d.get();
    if (device == nullptr) {
      devices_.push_back(std::make_unique<Device>());
      device = devices_.back().get();
      device->trl = a->spec.trl;
    }
    a->device = device;
    device->attrs.push_back(a.get());
    attrs_.push_back(std::move(a));
  }
  for (auto& d : devices_) d->thread = std::thread([this, dev = d.get()] { device_loop(*dev); });
  return {};
}

// --- the device threads -----------------------------------------------------------------------------

void Driver::device_loop(Device& d) {
  const auto ping_every = std::chrono::microseconds(static_cast<std::int64_t>(options_.ping_ms * 1000));
  auto next_ping = Clock::now();
  while (!stopping()) {
    auto now = Clock::now();
    if (now >= next_ping) {
      next_ping = now + ping_every;
      bool ok = false;
      std::string problem;
      try {
        if (!d.proxy) {
          d.proxy = std::make_unique<::Tango::DeviceProxy>(d.trl);
          d.proxy->set_timeout_millis(static_cast<int>(options_.timeout_ms));
        }
        d.proxy->ping();
        ok = true;
      } catch (const ::Tango::DevFailed& e) {
        problem = reason_of(e);
      }
      // Tango refuses a reconnection within 1 s of the last try ("The connection request was delayed"),
      // and counts that refusal as a try: an unreachable device is tried again a little over 1 s later.
      if (!ok) next_ping = std::max(next_ping, now + kReconnectEvery);
      if (!ok && d.reachable) {
        d.reachable = false;
        const std::lock_guard lock(mu_);
        for (Attr* a : d.attrs) disconnect(*a);
      }
      if (!ok && problem != d.last_problem) {
        fmt::print(stderr, "driver \"{}\": device {}: {}\n", options_.part, d.trl, problem);
        d.last_problem = problem;
      }
      if (ok) {
        // Back after a failed ping, or an error event while the device answered: subscribe afresh (the
        // subscription's first read is the value now), rather than wait for Tango's keep-alive thread.
        for (Attr* a : d.attrs)
          if (a->mode == Mode::events && (!d.reachable || a->resubscribe.exchange(false))) {
            try {
              d.proxy->unsubscribe_event(a->event_id);
            } catch (const ::Tango::DevFailed&) {
            }
            a->event_id = -1;
            a->mode = Mode::pending;
          }
        d.reachable = true;
        d.last_problem.clear();
        for (Attr* a : d.attrs)
          if (a->mode == Mode::pending && !stopping()) set_up(d, *a);
      }
    }
    if (d.reachable)
      for (Attr* a : d.attrs)
        if (a->mode == Mode::polled && Clock::now() >= a->next_poll && !stopping()) poll(d, *a);
    auto until = next_ping;
    for (Attr* a : d.attrs)
      if (a->mode == Mode::polled && d.reachable) until = std::min(until, a->next_poll);
    std::unique_lock lock(wake_mu_);
    wake_.wait_until(lock, until, [this] { return stopping(); });
  }
}

// Learns what the attribute is, then subscribes to its change events or, where it has a poll_ms or
// the device pushes no events for it, polls it.
void Driver::set_up(Device& d, Attr& a) {
  ::Tango::AttributeInfoEx info;
  try {
    info = d.proxy->attribute_query(a.spec.attribute);
  } catch (const ::Tango::DevFailed& e) {
    if (const std::string p = reason_of(e); p != a.last_problem) {
      fmt::print(stderr, "driver \"{}\": attribute {}: {}\n", options_.part, a.spec.name, p);
      a.last_problem = p;
    }
    return;
  }
  const bool spectrum = info.data_format == ::Tango::SPECTRUM;
  std::string refusal;
  if (info.data_format == ::Tango::IMAGE) refusal = "is an image; the driver takes scalars and spectra";
  else if (spectrum && a.spec.channel.empty()) refusal = "is a spectrum: give it a channel (channel = \"...\", elements = N)";
  else if (!spectrum && !a.spec.channel.empty()) refusal = "is a scalar: give it a key, not a channel";
  else if (pv_type_of(info.data_type) == core::PvType::unknown ||
           (spectrum && pv_type_of(info.data_type) != core::PvType::f64 && pv_type_of(info.data_type) != core::PvType::i64))
    refusal = fmt::format("has the Tango data type {}, which the driver does not carry", info.data_type);
  if (!refusal.empty()) {
    fmt::print(stderr, "driver \"{}\": attribute {} {}; left out\n", options_.part, a.spec.name, refusal);
    a.mode = Mode::refused;
    return;
  }
  {
    const std::lock_guard lock(mu_);
    describe(info, a.meta);
  }
  double poll_ms = a.spec.poll_ms;
  if (poll_ms <= 0) {
    try {
      a.event_id = d.proxy->subscribe_event(a.spec.attribute, ::Tango::CHANGE_EVENT, a.sink.get(), false);
      a.mode = Mode::events;
      return;
    } catch (const ::Tango::DevFailed& e) {
      if (unreachable(e)) return;  // the next ping tries again
      fmt::print(stderr, "driver \"{}\": attribute {}: no change events ({}); read every {} ms\n", options_.part,
                 a.spec.name, reason_of(e), options_.fallback_poll_ms);
      poll_ms = options_.fallback_poll_ms;
    }
  }
  a.poll_every = std::chrono::microseconds(static_cast<std::int64_t>(poll_ms * 1000));
  a.next_poll = Clock::now();
  a.mode = Mode::polled;
  const std::lock_guard lock(mu_);
  ++counters_.polled;
}

void Driver::poll(Device& d, Attr& a) {
  a.next_poll += a.poll_every;
  if (const auto now = Clock::now(); a.next_poll < now) a.next_poll = now + a.poll_every;  // late: no burst
  try {
    ::Tango::DeviceAttribute da = d.proxy->read_attribute(a.spec.attribute);
    on_value(a, da);
  } catch (const ::Tango::DevFailed& e) {
    const std::lock_guard lock(mu_);
    disconnect(a);
  }
}

// --- values (the device threads and the event consumer's) -----------------------------------------

void Driver::on_event(Attr& a, ::Tango::EventData* ed) {
  if (ed == nullptr) return;
  if (ed->err || ed->attr_value == nullptr) {
    // The device went away (API_EventTimeout) or could not read the attribute: no value holds.
    const std::lock_guard lock(mu_);
    if (a.connected && !stopping())
      fmt::print(stderr, "driver \"{}\": attribute {}: {}\n", options_.part, a.spec.name, reason_of(ed->errors));
    disconnect(a);
    a.resubscribe.store(true);
    return;
  }
  on_value(a, *ed->attr_value);
}

void Driver::push(Attr& a, const PvLogEntry& e) {
  if (queue_.push(e)) return;
  ++a.dropped;
  ++counters_.dropped;
  any_dropped_ = true;
}

void Driver::connect(Attr& a) {
  a.connected = true;
  ++counters_.connects;
  ++counters_.connected;
  if (a.writer) return;
  (void)kv_.set_text(a.meta_key, meta_json(a.meta));
  if (!a.meta.units.empty()) (void)kv_.set_text(a.units_key, a.meta.units);
  PvLogEntry e;
  e.time_ns = realtime_ns();
  e.pv = a.index;
  e.event = static_cast<std::uint8_t>(core::PvEvent::connected);
  e.type = static_cast<std::uint8_t>(a.meta.type);
  push(a, e);
}

void Driver::disconnect(Attr& a) {
  if (!a.connected) return;
  a.connected = false;
  a.last_ns = -1;
  ++counters_.disconnects;
  --counters_.connected;
  if (a.writer) {
    a.writer->skip(1, core::GapReason::disconnected);  // a marker: what the device sent meanwhile is unknown
    return;
  }
  PvLogEntry e;
  e.time_ns = realtime_ns();
  e.pv = a.index;
  e.event = static_cast<std::uint8_t>(core::PvEvent::disconnected);
  e.type = static_cast<std::uint8_t>(a.meta.type);
  push(a, e);
}

void Driver::on_value(Attr& a, ::Tango::DeviceAttribute& da) {
  const std::lock_guard lock(mu_);
  if (stopping()) return;
  const std::int64_t t = unix_ns(da.get_date());
  if (a.writer) {
    if (a.connected && t == a.last_ns) return;  // the same reading again
    a.last_ns = t;
    if (!a.connected) connect(a);
    write_spectrum(a, da);
    return;
  }
  PvLogEntry e;
  e.pv = a.index;
  e.event = static_cast<std::uint8_t>(core::PvEvent::value);
  e.type = static_cast<std::uint8_t>(a.meta.type);
  e.time_ns = t > 0 ? t : realtime_ns();
  const ::Tango::AttrQuality quality = da.get_quality();
  e.severity = severity_of(quality);
  e.status = static_cast<std::uint16_t>(quality);
  if (scalar_value(da, a.meta.labels, e)) {
    switch (static_cast<core::PvType>(e.type)) {
      case core::PvType::f64: (void)kv_.set(a.value_key, std::as_bytes(std::span(&e.f64, 1)), core::ValueType::f64); break;
      case core::PvType::i64: (void)kv_.set(a.value_key, std::as_bytes(std::span(&e.i64, 1)), core::ValueType::i64); break;
      case core::PvType::enumerated:
        (void)kv_.set(a.value_key, std::as_bytes(std::span(&e.i64, 1)), core::ValueType::i64);
        (void)kv_.set_text(a.state_key, std::string_view(e.text, e.text_bytes));
        break;
      case core::PvType::text:
        (void)kv_.set(a.value_key, std::as_bytes(std::span(e.text, e.text_bytes)), core::ValueType::text);
        break;
      case core::PvType::unknown: break;
    }
  } else {
    // No value (INVALID quality): an entry that says so, NaN for a number; the key keeps its last value.
    e.f64 = std::numeric_limits<double>::quiet_NaN();
    e.severity = severity_of(::Tango::ATTR_INVALID);
  }
  // The same reading again (a polled device's buffer, the read that a (re)subscription delivers):
  // no update. A new value or quality at the same time stamp is one.
  if (a.connected && t == a.last_ns && same_reading(e, a.last)) return;
  a.last_ns = t;
  a.last = e;
  if (!a.connected) connect(a);
  ++counters_.updates;
  push(a, e);
}

void Driver::write_spectrum(Attr& a, ::Tango::DeviceAttribute& da) {
  if (!spectrum_values(da, a.values)) return;  // INVALID quality: no frame
  const std::uint32_t elements = a.writer->samples_per_block();
  const auto n = static_cast<std::uint32_t>(std::min<std::size_t>(a.values.size(), elements));
  if (a.values.size() > elements) ++counters_.truncated;
  std::span<std::byte> out;
  if (a.writer->claim(out) != core::ClaimStatus::ok) return;  // counted at source by the channel
  const auto put = [&]<class T>(T* dst) {
    for (std::uint32_t i = 0; i < n; ++i) dst[i] = static_cast<T>(a.values[i]);
    const T pad = std::numeric_limits<T>::has_quiet_NaN ? std::numeric_limits<T>::quiet_NaN() : T{};
    for (std::uint32_t i = n; i < elements; ++i) dst[i] = pad;
  };
  void* p = out.data();
  switch (a.writer->desc().dtype) {
    case core::Dtype::f64: put(static_cast<double*>(p)); break;
    case core::Dtype::f32: put(static_cast<float*>(p)); break;
    case core::Dtype::i64: put(static_cast<std::int64_t*>(p)); break;
    case core::Dtype::i32: put(static_cast<std::int32_t*>(p)); break;
    case core::Dtype::u32: put(static_cast<std::uint32_t*>(p)); break;
    case core::Dtype::i16: put(static_cast<std::int16_t*>(p)); break;
    case core::Dtype::u16: put(static_cast<std::uint16_t*>(p)); break;
    case core::Dtype::i8: put(static_cast<std::int8_t*>(p)); break;
    case core::Dtype::u8: put(static_cast<std::uint8_t*>(p)); break;
    default: std::memset(p, 0, out.size()); break;
  }
  const std::int64_t t = unix_ns(da.get_date());
  a.writer->publish(elements, static_cast<std::uint64_t>(t > 0 ? t : realtime_ns()));
  ++counters_.updates;
}

// --- the driver's thread ------------------------------------------------------------------------------

// Moves queued entries into log blocks: every full block at once, the rest when `all` (the flush).
void Driver::flush(bool all) {
  {
    const std::lock_guard lock(mu_);
    if (any_dropped_) {
      any_dropped_ = false;
      for (auto& a : attrs_)
        if (a->dropped > 0) {
          PvLogEntry e;
          e.time_ns = realtime_ns();
          e.pv = a->index;
          e.event = static_cast<std::uint8_t>(core::PvEvent::dropped);
          e.type = static_cast<std::uint8_t>(a->meta.type);
          e.count = a->dropped;
          if (queue_.push(e)) a->dropped = 0;
          else any_dropped_ = true;
        }
    }
  }
  const std::uint32_t per_block = options_.log_block;
  while (queue_.size() >= per_block || (all && queue_.size() > 0)) {
    std::span<std::byte> out;
    if (log_->claim(out) != core::ClaimStatus::ok) {  // a full lossless reader past its timeout: counted at source
      std::vector<std::byte> discard(std::size_t{per_block} * sizeof(PvLogEntry));
      log_lost_ += queue_.pop(discard.data(), per_block);
      continue;
    }
    const std::uint32_t n = queue_.pop(out.data(), per_block);
    log_->publish(n * core::kPvLogEntryBytes, static_cast<std::uint64_t>(realtime_ns()));
    ++log_blocks_;
  }
}

void Driver::publish_counters() {
  Counters c;
  {
    const std::lock_guard lock(mu_);
    c = counters_;
  }
  const std::uint64_t values[] = {attrs_.size(), c.connected, c.updates, c.connects, c.disconnects,
                                  c.dropped + log_lost_, c.truncated, log_blocks_, c.polled};
  for (std::size_t i = 0; i < std::size(values); ++i) counters_keys_.set(i, values[i]);
  counters_keys_.publish(c.connected == attrs_.size() ? "connected" : fmt::format("connected {}/{}", c.connected, attrs_.size()));
}

void Driver::run(const std::atomic<bool>& stop, DriverReport& report) {
  const auto started = Clock::now();
  const auto flush_every = std::chrono::microseconds(static_cast<std::int64_t>(options_.flush_ms * 1000));
  auto next_flush = started + flush_every;
  auto next_counters = started;
  bool warned = false;
  const auto tick = std::min<Clock::duration>(flush_every, std::chrono::milliseconds(2));
  while (!stop.load(std::memory_order_relaxed)) {
    const auto now = Clock::now();
    if (options_.duration_s > 0 && now - started >= std::chrono::duration<double>(options_.duration_s)) break;
    const bool due = now >= next_flush;
    flush(due);
    if (due) next_flush = now + flush_every;
    if (now >= next_counters) {
      publish_counters();
      next_counters = now + std::chrono::milliseconds(200);
    }
    if (!warned && now - started > std::chrono::duration<double>(options_.connect_timeout_s)) {
      warned = true;
      std::string missing;
      std::size_t count = 0;
      {
        const std::lock_guard lock(mu_);
        for (const auto& a : attrs_)
          if (!a->connected && ++count <= 10) missing += (missing.empty() ? "" : ", ") + a->spec.name;
      }
      if (count > 0)
        fmt::print(stderr, "driver \"{}\": {} of {} attributes not connected after {} s (still waiting): {}{}\n",
                   options_.part, count, attrs_.size(), options_.connect_timeout_s, missing, count > 10 ? ", ..." : "");
    }
    std::this_thread::sleep_for(tick);
  }
  report.stopped = stop.load(std::memory_order_relaxed);
  report.elapsed_s = std::chrono::duration<double>(Clock::now() - started).count();
}

void Driver::close() {
  stopping_.store(true);
  {
    const std::lock_guard lock(wake_mu_);
    wake_.notify_all();
  }
  for (auto& d : devices_)
    if (d->thread.joinable()) d->thread.join();
  for (auto& d : devices_) {
    for (Attr* a : d->attrs)
      if (a->event_id >= 0 && d->proxy) try {
          d->proxy->unsubscribe_event(a->event_id);  // no callback after this
        } catch (const ::Tango::DevFailed&) {
        }
    d->proxy.reset();
  }
  if (!log_) return;  // open() failed before anything was written
  flush(true);
  publish_counters();
}

}  // namespace

std::string DriverReport::text() const {
  return fmt::format("tango driver: {:.3f} s{}: {} attributes ({} connected, {} polled), {} updates, {} connects, "
                     "{} disconnects, {} dropped, {} truncated, {} log blocks",
                     elapsed_s, stopped ? ", stopped by a signal" : "", attributes, connected, polled, updates, connects,
                     disconnects, dropped, truncated, log_blocks);
}

std::string DriverReport::json() const {
  json::JsonObject o;
  o.real("elapsed_s", elapsed_s)
      .boolean("stopped", stopped)
      .number("attributes", attributes)
      .number("connected", connected)
      .number("polled", polled)
      .number("updates", updates)
      .number("connects", connects)
      .number("disconnects", disconnects)
      .number("dropped", dropped)
      .number("truncated", truncated)
      .number("log_blocks", log_blocks);
  return o.str();
}

Result<DriverReport> run_driver(const core::Arena& arena, const config::Pipeline& /*pipeline*/,
                                const config::DriverDecl& decl, double duration_s, const std::atomic<bool>& stop) {
  auto options = driver_options(decl);
  if (!options) return tl::make_unexpected(options.error());
  if (duration_s > 0) options->duration_s = duration_s;
  DriverReport report;
  {
    Driver driver(arena, *options);
    if (auto ok = driver.open(); !ok) {
      driver.close();
      return tl::make_unexpected(ok.error());
    }
    driver.run(stop, report);
    driver.close();
  }
  report.attributes = options->attributes.size();
  const auto value = [&](const std::string& field) {
    std::uint64_t bits = 0;
    core::ValueType type{};
    return core::KvStore(arena).get_scalar(options->part + "." + field, bits, type) == core::KvStatus::ok ? bits : 0;
  };
  report.connected = value("pvs_connected");
  report.polled = value("polled");
  report.updates = value("updates");
  report.connects = value("connects");
  report.disconnects = value("disconnects");
  report.dropped = value("dropped");
  report.truncated = value("truncated");
  report.log_blocks = value("log_blocks");
  return report;
}

}  // namespace weir::tango
