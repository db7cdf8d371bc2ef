// tango "serve", values and events: a value set by the update thread and its change and archive events
// pushed when Tango's criteria (abs_change, rel_change, and their archive_ twins) say so, or when the
// quality changed; a client's read of the same value. Both under the device's monitor.
#include <cmath>
#include <string_view>

#include "server_impl.hpp"

namespace weir::tango::detail {

namespace {

bool same_number(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

// Tango's change criteria: |delta| >= abs, or |delta| / |last| * 100 >= rel (100 % when last is 0).
// Neither set: any change.
bool due(const Value::Last& last, double now, Tango::AttrQuality q, double abs_change, double rel_change) {
  if (!last.sent || last.quality != q) return true;
  if (q == Tango::ATTR_INVALID) return false;
  if (std::isnan(now) != std::isnan(last.number)) return true;
  if (std::isnan(now)) return false;
  const double delta = std::fabs(now - last.number);
  if (abs_change <= 0 && rel_change <= 0) return !same_number(now, last.number);
  if (abs_change > 0 && delta >= abs_change) return true;
  if (rel_change > 0) {
    const double rel = last.number == 0 ? (now == 0 ? 0 : 100) : delta / std::fabs(last.number) * 100;
    if (rel >= rel_change) return true;
  }
  return false;
}

}  // namespace

void Server::read(std::size_t i, Tango::Attribute& att) {
  Value& v = values_[i];
  switch (v.kind) {
    case Kind::f64: att.set_value_date_quality(&v.f64, v.time, v.quality); break;
    case Kind::i64: att.set_value_date_quality(&v.i64, v.time, v.quality); break;
    case Kind::text:
      v.text_ptr = const_cast<char*>(v.text.c_str());  // NOLINT: Tango's DevString is char*; it only reads it
      att.set_value_date_quality(&v.text_ptr, v.time, v.quality);
      break;
    case Kind::spectrum: att.set_value_date_quality(v.wave.data(), v.time, v.quality, v.wave_len); break;
  }
}

// Pushes the change and archive events of `v` that are due. `changed`: text and spectra, whose every
// change is an event.
void Server::publish(Value& v, bool changed) {
  if (device_ == nullptr) return;
  const double number = v.kind == Kind::f64 ? v.f64 : static_cast<double>(v.i64);
  const bool numeric = v.kind == Kind::f64 || v.kind == Kind::i64;
  const bool change = numeric ? due(v.change, number, v.quality, v.criteria.abs_change, v.criteria.rel_change)
                              : changed || !v.change.sent || v.change.quality != v.quality;
  const bool archive = numeric ? due(v.archive, number, v.quality, v.criteria.archive_abs_change, v.criteria.archive_rel_change)
                               : changed || !v.archive.sent || v.archive.quality != v.quality;
  for (const bool is_change : {true, false}) {
    if (is_change ? !change : !archive) continue;
    try {
      switch (v.kind) {
        case Kind::f64:
          if (is_change) device_->push_change_event(v.name, &v.f64, v.time, v.quality);
          else device_->push_archive_event(v.name, &v.f64, v.time, v.quality);
          break;
        case Kind::i64:
          if (is_change) device_->push_change_event(v.name, &v.i64, v.time, v.quality);
          else device_->push_archive_event(v.name, &v.i64, v.time, v.quality);
          break;
        case Kind::text:
          v.text_ptr = const_cast<char*>(v.text.c_str());  // NOLINT: as in read()
          if (is_change) device_->push_change_event(v.name, &v.text_ptr, v.time, v.quality);
          else device_->push_archive_event(v.name, &v.text_ptr, v.time, v.quality);
          break;
        case Kind::spectrum:
          if (is_change) device_->push_change_event(v.name, v.wave.data(), v.time, v.quality, v.wave_len);
          else device_->push_archive_event(v.name, v.wave.data(), v.time, v.quality, v.wave_len);
          break;
      }
    } catch (const Tango::DevFailed&) {
      continue;  // no subscriber's channel yet, or a client gone: the next value is pushed again
    }
    Value::Last& last = is_change ? v.change : v.archive;
    last.sent = true;
    last.number = number;
    last.quality = v.quality;
    pushed_.fetch_add(1, std::memory_order_relaxed);  // relaxed: a counter for the report
  }
}

void Server::set_f64(std::size_t i, double x, Tango::AttrQuality q) {
  Value& v = values_[i];
  if (v.quality == q && same_number(v.f64, x) && v.change.sent) return;
  v.f64 = x;
  v.quality = q;
  v.time = now_;
  publish(v, false);
}

void Server::set_i64(std::size_t i, Tango::DevLong64 x, Tango::AttrQuality q) {
  Value& v = values_[i];
  if (v.quality == q && v.i64 == x && v.change.sent) return;
  v.i64 = x;
  v.quality = q;
  v.time = now_;
  publish(v, false);
}

void Server::set_text(std::size_t i, std::string_view x, Tango::AttrQuality q) {
  Value& v = values_[i];
  if (v.quality == q && v.text == x && v.change.sent) return;
  v.text.assign(x);
  v.quality = q;
  v.time = now_;
  publish(v, true);
}

void Server::set_quality(std::size_t i, Tango::AttrQuality q) {
  Value& v = values_[i];
  if (v.quality == q && v.change.sent) return;
  v.quality = q;
  v.time = now_;
  publish(v, false);
}

void Server::publish_wave(std::size_t i, const timeval& t) {
  Value& v = values_[i];
  v.quality = Tango::ATTR_VALID;
  v.time = t;
  publish(v, true);
}

}  // namespace weir::tango::detail
