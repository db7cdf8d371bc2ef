// driver "epics": Channel Access monitors into keys, the PV log channel and waveform channels.
// Threads: CA's own (preemptive callbacks, serialised by the CA client library) fill the entry
// queue, write keys and publish waveform frames; the driver's thread drains the queue into PV log
// blocks every flush, publishes the counters and watches the clock.
#include "weir/epics/ca_driver.hpp"

#include <cadef.h>
#include <epicsTime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "pv_meta.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/clock.hpp"
#include "weir/core/counter_keys.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/pv_log.hpp"
#include "weir/json/json.hpp"

namespace weir::epics {

namespace {

using core::PvLogEntry;
using core::Result;

std::int64_t realtime_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// An EPICS time stamp (seconds since 1990) as ns since the Unix epoch; a never-processed record's
// zero stamp stays 0.
std::int64_t unix_ns(const epicsTimeStamp& t) noexcept {
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

extern "C" void connection_cb(connection_handler_args args) {
  auto* pv = static_cast<Pv*>(ca_puser(args.chid));
  pv->driver->on_connection(*pv, args.op == CA_OP_CONN_UP);
}
extern "C" void ctrl_cb(event_handler_args args) {
  auto* pv = static_cast<Pv*>(args.usr);
  pv->driver->on_ctrl(*pv, args);
}
extern "C" void value_cb(event_handler_args args) {
  auto* pv = static_cast<Pv*>(args.usr);
  pv->driver->on_value(*pv, args);
}

// EPICS's client settings: the pipeline's (ca = {...}) over the environment's; a waveform larger
// than CA's 16 kB default raises EPICS_CA_MAX_ARRAY_BYTES unless someone set it.
void apply_ca_env(const DriverOptions& o) {
  for (const auto& [name, value] : o.ca.env) setenv(name.c_str(), value.c_str(), 1);
  std::uint64_t largest = 0;
  for (const PvSpec& pv : o.pvs) largest = std::max<std::uint64_t>(largest, std::uint64_t{pv.elements} * 8 + 4096);
  if (largest > 16384 && std::getenv("EPICS_CA_MAX_ARRAY_BYTES") == nullptr)
    setenv("EPICS_CA_MAX_ARRAY_BYTES", std::to_string(largest).c_str(), 1);
}

Result<void> Driver::open() {
  // The channels: made by weir run before its drivers start; made here when this driver runs alone.
  const auto make = [&](const core::ChannelSpec& spec) {
    if (!core::find_channel(arena_, spec.name)) (void)core::create_channel(arena_, spec);
  };
  make(log_channel_spec(options_));
  for (const PvSpec& pv : options_.pvs)
    if (!pv.channel.empty()) make(waveform_channel_spec(pv));
  auto log = core::ChannelWriter::open(arena_, options_.log_channel);
  if (!log)
    return core::fail(log.error().code, fmt::format("driver \"{}\": PV log channel '{}': {}", options_.part,
                                                    options_.log_channel, log.error().what));
  log_ = std::make_unique<core::ChannelWriter>(std::move(*log));
  for (std::size_t i = 0; i < options_.pvs.size(); ++i) {
    auto pv = std::make_unique<Pv>();
    pv->driver = this;
    pv->spec = options_.pvs[i];
    pv->index = static_cast<std::uint32_t>(i);
    if (!pv->spec.channel.empty()) {
      auto w = core::ChannelWriter::open(arena_, pv->spec.channel);
      if (!w)
        return core::fail(w.error().code, fmt::format("driver \"{}\": PV {}: channel '{}': {}", options_.part, pv->spec.pv,
                                                      pv->spec.channel, w.error().what));
      pv->writer = std::make_unique<core::ChannelWriter>(std::move(*w));
    } else {
      pv->meta_key = core::pv_meta_key(options_.log_channel, pv->index);
      PvMeta meta;
      meta.pv = pv->spec.pv;
      meta.key = pv->spec.key;
      if (auto s = kv_.set_text(pv->meta_key, meta_json(meta)); s != core::KvStatus::ok)
        return core::fail(core::Errc::invalid_argument, fmt::format("driver \"{}\": key '{}': {}", options_.part,
                                                                    pv->meta_key, core::kv_status_text(s)));
      if (auto s = kv_.resolve(pv->spec.key, pv->value_key, true); s != core::KvStatus::ok)
        return core::fail(core::Errc::invalid_argument, fmt::format("driver \"{}\": PV {}: key '{}': {}", options_.part,
                                                                    pv->spec.pv, pv->spec.key, core::kv_status_text(s)));
      pv->state_key = pv->spec.key + "_state";
      pv->units_key = pv->spec.key + "_units";
    }
    pvs_.push_back(std::move(pv));
  }
  apply_ca_env(options_);
  if (const int s = ca_context_create(ca_enable_preemptive_callback); s != ECA_NORMAL)
    return core::fail(core::Errc::io_error, fmt::format("driver \"{}\": Channel Access: {}", options_.part, ca_message(s)));
  context_ = ca_current_context();
  for (auto& pv : pvs_)
    if (const int s = ca_create_channel(pv->spec.pv.c_str(), &connection_cb, pv.get(), CA_PRIORITY_DEFAULT, &pv->channel);
        s != ECA_NORMAL)
      return core::fail(core::Errc::invalid_argument,
                        fmt::format("driver \"{}\": PV {}: {}", options_.part, pv->spec.pv, ca_message(s)));
  ca_flush_io();
  return {};
}

void Driver::push(Pv& pv, const PvLogEntry& e) {
  if (queue_.push(e)) return;
  pv.dropped.fetch_add(1, std::memory_order_relaxed);
  counters_.dropped.fetch_add(1, std::memory_order_relaxed);
  any_dropped_.store(true, std::memory_order_release);
}

void Driver::log_connection(Pv& pv, core::PvEvent event) {
  PvLogEntry e;
  e.time_ns = realtime_ns();
  e.pv = pv.index;
  e.event = static_cast<std::uint8_t>(event);
  e.type = static_cast<std::uint8_t>(pv.type);
  push(pv, e);
}

void Driver::on_connection(Pv& pv, bool up) {
  if (!up) {
    if (!pv.connected) return;
    pv.connected = false;
    counters_.disconnects.fetch_add(1, std::memory_order_relaxed);
    counters_.connected.fetch_sub(1, std::memory_order_relaxed);
    if (pv.writer) {
      pv.gap_pending = true;
      pv.writer->skip(1, core::GapReason::disconnected);  // a marker: what the IOC sent meanwhile is unknown
    } else {
      log_connection(pv, core::PvEvent::disconnected);
    }
    return;
  }
  pv.connected = true;
  pv.ever_connected = true;
  counters_.connects.fetch_add(1, std::memory_order_relaxed);
  counters_.connected.fetch_add(1, std::memory_order_relaxed);
  const short field = ca_field_type(pv.channel);
  switch (field) {
    case DBF_STRING: pv.type = core::PvType::text; break;
    case DBF_ENUM: pv.type = core::PvType::enumerated; break;
    case DBF_CHAR:
    case DBF_SHORT:
    case DBF_LONG: pv.type = core::PvType::i64; break;
    default: pv.type = core::PvType::f64; break;
  }
  pv.type_seen.store(static_cast<std::uint8_t>(pv.type), std::memory_order_relaxed);
  if (pv.writer) {  // a waveform: values only
    pv.gap_pending = false;
    subscribe(pv);
    return;
  }
  // A scalar: DBR_CTRL first (units, limits, states), whose answer writes the meta key and logs the
  // connection; then the monitor, once (CA re-establishes it after a reconnect).
  const chtype ctrl = pv.type == core::PvType::text         ? DBR_CTRL_STRING
                      : pv.type == core::PvType::enumerated ? DBR_CTRL_ENUM
                      : pv.type == core::PvType::i64        ? DBR_CTRL_LONG
                                                            : DBR_CTRL_DOUBLE;
  if (ca_array_get_callback(ctrl, 1, pv.channel, &ctrl_cb, &pv) != ECA_NORMAL) log_connection(pv, core::PvEvent::connected);
  subscribe(pv);
  ca_flush_io();
}

void Driver::subscribe(Pv& pv) {
  if (pv.subscribed) return;
  chtype type = DBR_TIME_DOUBLE;
  unsigned long count = 1;
  if (pv.writer) {
    count = 0;  // the IOC's current length (NORD), each update
  } else if (pv.type == core::PvType::text) {
    type = DBR_TIME_STRING;
  } else if (pv.type == core::PvType::enumerated) {
    type = DBR_TIME_ENUM;
  } else if (pv.type == core::PvType::i64) {
    type = DBR_TIME_LONG;
  }
  if (ca_create_subscription(type, count, pv.channel, DBE_VALUE | DBE_ALARM, &value_cb, &pv, &pv.subscription) == ECA_NORMAL)
    pv.subscribed = true;
  ca_flush_io();
}

void Driver::on_ctrl(Pv& pv, const event_handler_args& args) {
  PvMeta meta;
  meta.pv = pv.spec.pv;
  meta.key = pv.spec.key;
  meta.type = pv.type;
  if (const char* host = ca_host_name(pv.channel); host != nullptr) meta.host = host;
  if (args.status == ECA_NORMAL && args.dbr != nullptr) {
    if (args.type == DBR_CTRL_DOUBLE) {
      const auto* c = static_cast<const dbr_ctrl_double*>(args.dbr);
      meta.units.assign(c->units, strnlen(c->units, MAX_UNITS_SIZE));
      meta.precision = c->precision;
      meta.has_limits = true;
      meta.display_low = c->lower_disp_limit, meta.display_high = c->upper_disp_limit;
      meta.control_low = c->lower_ctrl_limit, meta.control_high = c->upper_ctrl_limit;
      meta.alarm_low = c->lower_alarm_limit, meta.alarm_high = c->upper_alarm_limit;
      meta.warning_low = c->lower_warning_limit, meta.warning_high = c->upper_warning_limit;
    } else if (args.type == DBR_CTRL_LONG) {
      const auto* c = static_cast<const dbr_ctrl_long*>(args.dbr);
      meta.units.assign(c->units, strnlen(c->units, MAX_UNITS_SIZE));
      meta.has_limits = true;
      meta.display_low = c->lower_disp_limit, meta.display_high = c->upper_disp_limit;
      meta.control_low = c->lower_ctrl_limit, meta.control_high = c->upper_ctrl_limit;
      meta.alarm_low = c->lower_alarm_limit, meta.alarm_high = c->upper_alarm_limit;
      meta.warning_low = c->lower_warning_limit, meta.warning_high = c->upper_warning_limit;
    } else if (args.type == DBR_CTRL_ENUM) {
      const auto* c = static_cast<const dbr_ctrl_enum*>(args.dbr);
      const int n = std::clamp<int>(c->no_str, 0, MAX_ENUM_STATES);
      for (int i = 0; i < n; ++i) meta.states.emplace_back(c->strs[i], strnlen(c->strs[i], MAX_ENUM_STRING_SIZE));
    }
  }
  pv.states = meta.states;
  (void)kv_.set_text(pv.meta_key, meta_json(meta));
  if (!meta.units.empty()) (void)kv_.set_text(pv.units_key, meta.units);
  log_connection(pv, core::PvEvent::connected);
}

void Driver::write_waveform(Pv& pv, const event_handler_args& args) {
  const auto* d = static_cast<const dbr_time_double*>(args.dbr);
  const auto* values = &d->value;
  const std::uint32_t elements = pv.writer->samples_per_block();
  const auto n = static_cast<std::uint32_t>(std::min<long>(args.count, elements));
  if (static_cast<unsigned long>(args.count) > elements) counters_.truncated.fetch_add(1, std::memory_order_relaxed);
  std::span<std::byte> out;
  if (pv.writer->claim(out) != core::ClaimStatus::ok) return;  // counted at source by the channel
  const core::Dtype dtype = pv.writer->desc().dtype;
  const auto put = [&]<class T>(T* dst) {
    for (std::uint32_t i = 0; i < n; ++i) dst[i] = static_cast<T>(values[i]);
    const T pad = std::numeric_limits<T>::has_quiet_NaN ? std::numeric_limits<T>::quiet_NaN() : T{};
    for (std::uint32_t i = n; i < elements; ++i) dst[i] = pad;
  };
  void* p = out.data();
  switch (dtype) {
    case core::Dtype::f64: put(static_cast<double*>(p)); break;
    case core::Dtype::f32: put(static_cast<float*>(p)); break;
    case core::Dtype::i32: put(static_cast<std::int32_t*>(p)); break;
    case core::Dtype::u32: put(static_cast<std::uint32_t*>(p)); break;
    case core::Dtype::i16: put(static_cast<std::int16_t*>(p)); break;
    case core::Dtype::u16: put(static_cast<std::uint16_t*>(p)); break;
    case core::Dtype::i8: put(static_cast<std::int8_t*>(p)); break;
    case core::Dtype::u8: put(static_cast<std::uint8_t*>(p)); break;
    case core::Dtype::i64: put(static_cast<std::int64_t*>(p)); break;
    default: std::memset(p, 0, out.size()); break;
  }
  const std::int64_t t = unix_ns(d->stamp);
  pv.writer->publish(elements, static_cast<std::uint64_t>(t > 0 ? t : realtime_ns()));
  counters_.updates.fetch_add(1, std::memory_order_relaxed);
}

void Driver::on_value(Pv& pv, const event_handler_args& args) {
  if (args.status != ECA_NORMAL || args.dbr == nullptr) return;
  if (pv.writer) {
    write_waveform(pv, args);
    return;
  }
  PvLogEntry e;
  e.pv = pv.index;
  e.event = static_cast<std::uint8_t>(core::PvEvent::value);
  switch (args.type) {
    case DBR_TIME_DOUBLE: {
      const auto* d = static_cast<const dbr_time_double*>(args.dbr);
      e.type = static_cast<std::uint8_t>(core::PvType::f64);
      e.f64 = d->value;
      e.time_ns = unix_ns(d->stamp), e.severity = static_cast<std::uint16_t>(d->severity), e.status = static_cast<std::uint16_t>(d->status);
      (void)kv_.set(pv.value_key, std::as_bytes(std::span(&e.f64, 1)), core::ValueType::f64);
      break;
    }
    case DBR_TIME_LONG: {
      const auto* d = static_cast<const dbr_time_long*>(args.dbr);
      e.type = static_cast<std::uint8_t>(core::PvType::i64);
      e.i64 = d->value;
      e.time_ns = unix_ns(d->stamp), e.severity = static_cast<std::uint16_t>(d->severity), e.status = static_cast<std::uint16_t>(d->status);
      (void)kv_.set(pv.value_key, std::as_bytes(std::span(&e.i64, 1)), core::ValueType::i64);
      break;
    }
    case DBR_TIME_ENUM: {
      const auto* d = static_cast<const dbr_time_enum*>(args.dbr);
      e.type = static_cast<std::uint8_t>(core::PvType::enumerated);
      e.i64 = d->value;
      if (d->value < pv.states.size()) {
        const std::string& s = pv.states[d->value];
        e.text_bytes = static_cast<std::uint16_t>(std::min<std::size_t>(s.size(), core::kPvTextBytes));
        std::memcpy(e.text, s.data(), e.text_bytes);
      }
      e.time_ns = unix_ns(d->stamp), e.severity = static_cast<std::uint16_t>(d->severity), e.status = static_cast<std::uint16_t>(d->status);
      (void)kv_.set(pv.value_key, std::as_bytes(std::span(&e.i64, 1)), core::ValueType::i64);
      (void)kv_.set_text(pv.state_key, std::string_view(e.text, e.text_bytes));
      break;
    }
    case DBR_TIME_STRING: {
      const auto* d = static_cast<const dbr_time_string*>(args.dbr);
      e.type = static_cast<std::uint8_t>(core::PvType::text);
      e.text_bytes = static_cast<std::uint16_t>(strnlen(d->value, MAX_STRING_SIZE));
      std::memcpy(e.text, d->value, e.text_bytes);
      e.time_ns = unix_ns(d->stamp), e.severity = static_cast<std::uint16_t>(d->severity), e.status = static_cast<std::uint16_t>(d->status);
      (void)kv_.set(pv.value_key, std::as_bytes(std::span(e.text, e.text_bytes)), core::ValueType::text);
      break;
    }
    default: return;
  }
  if (e.time_ns == 0) e.time_ns = realtime_ns();  // a record never processed: its stamp is zero
  counters_.updates.fetch_add(1, std::memory_order_relaxed);
  push(pv, e);
}

// Moves queued entries into PV log blocks: every full block at once, the rest when `all` (the flush).
void Driver::flush(bool all) {
  if (any_dropped_.exchange(false, std::memory_order_acq_rel))
    for (auto& pv : pvs_)
      if (const std::uint32_t n = pv->dropped.exchange(0, std::memory_order_relaxed); n > 0) {
        PvLogEntry e;
        e.time_ns = realtime_ns();
        e.pv = pv->index;
        e.event = static_cast<std::uint8_t>(core::PvEvent::dropped);
        e.type = pv->type_seen.load(std::memory_order_relaxed);
        e.count = n;
        if (!queue_.push(e)) pv->dropped.fetch_add(n, std::memory_order_relaxed), any_dropped_.store(true);
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
  counters_keys_.set(k_pvs_, pvs_.size());
  counters_keys_.set(k_connected_, counters_.connected.load(std::memory_order_relaxed));
  counters_keys_.set(k_updates_, counters_.updates.load(std::memory_order_relaxed));
  counters_keys_.set(k_connects_, counters_.connects.load(std::memory_order_relaxed));
  counters_keys_.set(k_disconnects_, counters_.disconnects.load(std::memory_order_relaxed));
  counters_keys_.set(k_dropped_, counters_.dropped.load(std::memory_order_relaxed) + log_lost_);
  counters_keys_.set(k_truncated_, counters_.truncated.load(std::memory_order_relaxed));
  counters_keys_.set(k_log_blocks_, log_blocks_);
  const std::uint64_t up = counters_.connected.load(std::memory_order_relaxed);
  counters_keys_.publish(up == pvs_.size() ? "connected" : fmt::format("connected {}/{}", up, pvs_.size()));
}

void Driver::run(const std::atomic<bool>& stop, DriverReport& report) {
  using clock = std::chrono::steady_clock;
  const auto started = clock::now();
  const auto flush_every = std::chrono::microseconds(static_cast<std::int64_t>(options_.flush_ms * 1000));
  auto next_flush = started + flush_every;
  auto next_counters = started;
  bool warned = false;
  // The poll: a block fills in log_block updates; at 20,000 updates/s and 256 a block that is 12.8 ms.
  const auto poll = std::min<clock::duration>(flush_every, std::chrono::milliseconds(2));
  while (!stop.load(std::memory_order_relaxed)) {
    const auto now = clock::now();
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
      for (const auto& pv : pvs_)
        if (ca_state(pv->channel) != cs_conn) {
          if (++count <= 10) missing += (missing.empty() ? "" : ", ") + pv->spec.pv;
        }
      if (count > 0)
        fmt::print(stderr, "driver \"{}\": {} of {} PVs not connected after {} s (still waiting): {}{}\n", options_.part,
                   count, pvs_.size(), options_.connect_timeout_s, missing, count > 10 ? ", ..." : "");
    }
    std::this_thread::sleep_for(poll);
  }
  report.stopped = stop.load(std::memory_order_relaxed);
  report.elapsed_s = std::chrono::duration<double>(clock::now() - started).count();
}

void Driver::close() {
  if (context_ != nullptr) {
    ca_attach_context(context_);
    for (auto& pv : pvs_)
      if (pv->channel != nullptr) ca_clear_channel(pv->channel);  // clears its subscription: no callback after this
    ca_flush_io();
    ca_context_destroy();
    context_ = nullptr;
  }
  if (!log_) return;  // open() failed before anything was written
  flush(true);
  publish_counters();
}

}  // namespace

std::string DriverReport::text() const {
  return fmt::format("epics driver: {:.3f} s{}: {} PVs ({} connected), {} updates, {} connects, {} disconnects, {} dropped, "
                     "{} truncated, {} log blocks",
                     elapsed_s, stopped ? ", stopped by a signal" : "", pvs, connected, updates, connects, disconnects,
                     dropped, truncated, log_blocks);
}

std::string DriverReport::json() const {
  json::JsonObject o;
  o.real("elapsed_s", elapsed_s)
      .boolean("stopped", stopped)
      .number("pvs", pvs)
      .number("connected", connected)
      .number("updates", updates)
      .number("connects", connects)
      .number("disconnects", disconnects)
      .number("dropped", dropped)
      .number("truncated", truncated)
      .number("log_blocks", log_blocks);
  return o.str();
}

Result<DriverReport> run_driver(const core::Arena& arena, const DriverOptions& options, const std::atomic<bool>& stop) {
  Driver driver(arena, options);
  DriverReport report;
  if (auto ok = driver.open(); !ok) {
    driver.close();
    return tl::make_unexpected(ok.error());
  }
  driver.run(stop, report);
  driver.close();
  report.pvs = options.pvs.size();
  const auto value = [&](const std::string& field) {
    std::uint64_t bits = 0;
    core::ValueType type{};
    return core::KvStore(arena).get_scalar(options.part + "." + field, bits, type) == core::KvStatus::ok ? bits : 0;
  };
  report.connected = value("pvs_connected");
  report.updates = value("updates");
  report.connects = value("connects");
  report.disconnects = value("disconnects");
  report.dropped = value("dropped");
  report.truncated = value("truncated");
  report.log_blocks = value("log_blocks");
  return report;
}

}  // namespace weir::epics
