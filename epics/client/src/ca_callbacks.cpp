// driver "epics", CA's side: what the callbacks do with a connection, a DBR_CTRL answer, a value
// (a key and a PV log entry) and a waveform update (a frame). Called from CA's callback threads,
// which the client library serialises.
#include <algorithm>
#include <cstring>
#include <limits>
#include <span>
#include <string_view>

#include "driver_impl.hpp"
#include "pv_meta.hpp"

namespace weir::epics::detail {

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

void Driver::log_connection(Pv& pv, core::PvEvent event) {
  PvLogEntry e;
  e.time_ns = realtime_ns();
  e.pv = pv.index;
  e.event = static_cast<std::uint8_t>(event);
  e.type = static_cast<std::uint8_t>(pv.type);
  (void)queue_.push(e);  // a full queue counts it against the PV: a `dropped` entry follows
}

void Driver::on_connection(Pv& pv, bool up) {
  if (!up) {
    if (!pv.connected) return;
    pv.connected = false;
    counts_.disconnects.fetch_add(1, std::memory_order_relaxed);
    counts_.connected.fetch_sub(1, std::memory_order_relaxed);
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
  counts_.connects.fetch_add(1, std::memory_order_relaxed);
  counts_.connected.fetch_add(1, std::memory_order_relaxed);
  const short field = ca_field_type(pv.channel);
  switch (field) {
    case DBF_STRING: pv.type = core::PvType::text; break;
    case DBF_ENUM: pv.type = core::PvType::enumerated; break;
    case DBF_CHAR:
    case DBF_SHORT:
    case DBF_LONG: pv.type = core::PvType::i64; break;
    default: pv.type = core::PvType::f64; break;
  }
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
  controls::set_meta_keys(kv_, pv.keys, meta_json(meta), meta.units);
  log_connection(pv, core::PvEvent::connected);
}

void Driver::write_waveform(Pv& pv, const event_handler_args& args) {
  const auto* d = static_cast<const dbr_time_double*>(args.dbr);
  const std::span<const double> values(&d->value, static_cast<std::size_t>(std::max<long>(args.count, 0)));
  const controls::FrameWrite w = controls::write_frame(*pv.writer, values, unix_ns(d->stamp));
  if (w.truncated) counts_.truncated.fetch_add(1, std::memory_order_relaxed);  // relaxed: a statistic
  if (w.published) counts_.updates.fetch_add(1, std::memory_order_relaxed);
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
      break;
    }
    case DBR_TIME_LONG: {
      const auto* d = static_cast<const dbr_time_long*>(args.dbr);
      e.type = static_cast<std::uint8_t>(core::PvType::i64);
      e.i64 = d->value;
      e.time_ns = unix_ns(d->stamp), e.severity = static_cast<std::uint16_t>(d->severity), e.status = static_cast<std::uint16_t>(d->status);
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
      break;
    }
    case DBR_TIME_STRING: {
      const auto* d = static_cast<const dbr_time_string*>(args.dbr);
      e.type = static_cast<std::uint8_t>(core::PvType::text);
      e.text_bytes = static_cast<std::uint16_t>(strnlen(d->value, MAX_STRING_SIZE));
      std::memcpy(e.text, d->value, e.text_bytes);
      e.time_ns = unix_ns(d->stamp), e.severity = static_cast<std::uint16_t>(d->severity), e.status = static_cast<std::uint16_t>(d->status);
      break;
    }
    default: return;
  }
  controls::set_value_keys(kv_, pv.keys, e);
  if (e.time_ns == 0) e.time_ns = realtime_ns();  // a record never processed: its stamp is zero
  counts_.updates.fetch_add(1, std::memory_order_relaxed);
  (void)queue_.push(e);  // a full queue counts it against the PV: a `dropped` entry follows
}


}  // namespace weir::epics::detail
