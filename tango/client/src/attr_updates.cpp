// driver "tango", an attribute's updates: values and errors from Tango's event consumer and the
// polled reads of the device threads become keys, attribute log entries and spectrum frames;
// connections and disconnections are entries too. Everything here runs under Driver::mu_.
#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "attr_values.hpp"
#include "driver_impl.hpp"
#include "weir/controls/frame_writer.hpp"

namespace weir::tango::detail {

namespace {

using core::PvLogEntry;
using controls::realtime_ns;

bool same_reading(const PvLogEntry& a, const PvLogEntry& b) noexcept {
  return a.severity == b.severity && a.status == b.status && a.i64 == b.i64 && a.text_bytes == b.text_bytes &&
         std::memcmp(a.text, b.text, a.text_bytes) == 0 &&
         (a.f64 == b.f64 || (std::isnan(a.f64) && std::isnan(b.f64)));
}

}  // namespace

void EventSink::push_event(::Tango::EventData* ed) { driver_.on_event(attr_, ed); }

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

void Driver::log_connection(const Attr& a, core::PvEvent event) {
  PvLogEntry e;
  e.time_ns = realtime_ns();
  e.pv = a.index;
  e.event = static_cast<std::uint8_t>(event);
  e.type = static_cast<std::uint8_t>(a.meta.type);
  (void)queue_.push(e);  // a full queue counts it against the attribute: a `dropped` entry follows
}

void Driver::connect(Attr& a) {
  a.connected = true;
  counts_.connects.fetch_add(1, std::memory_order_relaxed);  // relaxed: statistics
  counts_.connected.fetch_add(1, std::memory_order_relaxed);
  if (a.writer) return;
  controls::set_meta_keys(kv_, a.keys, meta_json(a.meta), a.meta.units);
  log_connection(a, core::PvEvent::connected);
}

void Driver::disconnect(Attr& a) {
  if (!a.connected) return;
  a.connected = false;
  a.last_ns = -1;
  counts_.disconnects.fetch_add(1, std::memory_order_relaxed);  // relaxed: statistics
  counts_.connected.fetch_sub(1, std::memory_order_relaxed);
  if (a.writer) {
    a.writer->skip(1, core::GapReason::disconnected);  // a marker: what the device sent meanwhile is unknown
    return;
  }
  log_connection(a, core::PvEvent::disconnected);
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
    controls::set_value_keys(kv_, a.keys, e);
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
  counts_.updates.fetch_add(1, std::memory_order_relaxed);
  (void)queue_.push(e);
}

void Driver::write_spectrum(Attr& a, ::Tango::DeviceAttribute& da) {
  if (!spectrum_values(da, a.values)) return;  // INVALID quality: no frame
  const controls::FrameWrite w = controls::write_frame(*a.writer, a.values, unix_ns(da.get_date()));
  if (w.truncated) counts_.truncated.fetch_add(1, std::memory_order_relaxed);  // relaxed: statistics
  if (w.published) counts_.updates.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace weir::tango::detail
