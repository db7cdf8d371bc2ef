#include "attr_values.hpp"

#include <algorithm>
#include <bitset>
#include <cstring>
#include <limits>

namespace weir::tango {

namespace {

template <class T>
bool read_values(::Tango::DeviceAttribute& da, std::vector<T>& out) {
  out.clear();
  return da.extract_read(out) && !out.empty();
}

template <class T>
bool as_doubles(::Tango::DeviceAttribute& da, std::vector<double>& out) {
  std::vector<T> v;
  if (!read_values(da, v)) return false;
  out.resize(v.size());
  std::transform(v.begin(), v.end(), out.begin(), [](T x) { return static_cast<double>(x); });
  return true;
}

template <class T>
bool first_int(::Tango::DeviceAttribute& da, std::int64_t& out) {
  std::vector<T> v;
  if (!read_values(da, v)) return false;
  out = static_cast<std::int64_t>(v.front());
  return true;
}

void set_text(core::PvLogEntry& e, const std::string& s) noexcept {
  e.text_bytes = static_cast<std::uint16_t>(std::min<std::size_t>(s.size(), core::kPvTextBytes));
  std::memcpy(e.text, s.data(), e.text_bytes);
}

}  // namespace

core::PvType pv_type_of(int data_type) noexcept {
  switch (data_type) {
    case ::Tango::DEV_DOUBLE:
    case ::Tango::DEV_FLOAT: return core::PvType::f64;
    case ::Tango::DEV_BOOLEAN:
    case ::Tango::DEV_SHORT:
    case ::Tango::DEV_LONG:
    case ::Tango::DEV_LONG64:
    case ::Tango::DEV_USHORT:
    case ::Tango::DEV_ULONG:
    case ::Tango::DEV_ULONG64:
    case ::Tango::DEV_UCHAR: return core::PvType::i64;
    case ::Tango::DEV_ENUM:
    case ::Tango::DEV_STATE: return core::PvType::enumerated;
    case ::Tango::DEV_STRING: return core::PvType::text;
    default: return core::PvType::unknown;
  }
}

std::uint16_t severity_of(::Tango::AttrQuality quality) noexcept {
  switch (quality) {
    case ::Tango::ATTR_VALID: return 0;
    case ::Tango::ATTR_WARNING: return 1;
    case ::Tango::ATTR_ALARM: return 2;
    case ::Tango::ATTR_INVALID: return 3;
    case ::Tango::ATTR_CHANGING: return 0;  // moving as asked: no alarm; the status (3) says CHANGING
  }
  return 3;
}

std::int64_t unix_ns(const ::Tango::TimeVal& t) noexcept {
  return std::int64_t{t.tv_sec} * 1'000'000'000 + std::int64_t{t.tv_usec} * 1000 + std::int64_t{t.tv_nsec};
}

std::vector<std::string> state_names() {
  std::vector<std::string> out;
  for (int i = 0; i <= static_cast<int>(::Tango::UNKNOWN); ++i) out.emplace_back(::Tango::DevStateName[i]);
  return out;
}

bool scalar_value(::Tango::DeviceAttribute& da, const std::vector<std::string>& labels, core::PvLogEntry& e) {
  da.exceptions(std::bitset<::Tango::DeviceAttribute::numFlags>());  // extraction answers false, never throws
  if (da.has_failed() || da.get_quality() == ::Tango::ATTR_INVALID) return false;
  const int type = da.get_type();
  e.type = static_cast<std::uint8_t>(pv_type_of(type));
  switch (type) {
    case ::Tango::DEV_DOUBLE: {
      std::vector<double> v;
      if (!read_values(da, v)) return false;
      e.f64 = v.front();
      return true;
    }
    case ::Tango::DEV_FLOAT: {
      std::vector<float> v;
      if (!read_values(da, v)) return false;
      e.f64 = static_cast<double>(v.front());
      return true;
    }
    case ::Tango::DEV_BOOLEAN: {
      std::vector<bool> v;
      if (!da.extract_read(v) || v.empty()) return false;
      e.i64 = v.front() ? 1 : 0;
      return true;
    }
    case ::Tango::DEV_SHORT: return first_int<short>(da, e.i64);
    case ::Tango::DEV_LONG: return first_int<::Tango::DevLong>(da, e.i64);
    case ::Tango::DEV_LONG64: return first_int<::Tango::DevLong64>(da, e.i64);
    case ::Tango::DEV_USHORT: return first_int<unsigned short>(da, e.i64);
    case ::Tango::DEV_ULONG: return first_int<::Tango::DevULong>(da, e.i64);
    case ::Tango::DEV_ULONG64: return first_int<::Tango::DevULong64>(da, e.i64);
    case ::Tango::DEV_UCHAR: return first_int<unsigned char>(da, e.i64);
    case ::Tango::DEV_ENUM:
    case ::Tango::DEV_STATE: {
      bool ok = false;
      if (type == ::Tango::DEV_ENUM) {
        ok = first_int<short>(da, e.i64);
      } else {
        ::Tango::DevState state{};
        ok = static_cast<bool>(da >> state);
        e.i64 = static_cast<std::int64_t>(state);
      }
      if (ok && e.i64 >= 0 && static_cast<std::size_t>(e.i64) < labels.size()) set_text(e, labels[static_cast<std::size_t>(e.i64)]);
      return ok;
    }
    case ::Tango::DEV_STRING: {
      std::vector<std::string> v;
      if (!read_values(da, v)) return false;
      set_text(e, v.front());
      return true;
    }
    default: return false;
  }
}

bool spectrum_values(::Tango::DeviceAttribute& da, std::vector<double>& out) {
  da.exceptions(std::bitset<::Tango::DeviceAttribute::numFlags>());
  out.clear();
  if (da.has_failed() || da.get_quality() == ::Tango::ATTR_INVALID) return false;
  switch (da.get_type()) {
    case ::Tango::DEV_DOUBLE: return read_values(da, out);
    case ::Tango::DEV_FLOAT: return as_doubles<float>(da, out);
    case ::Tango::DEV_SHORT: return as_doubles<short>(da, out);
    case ::Tango::DEV_LONG: return as_doubles<::Tango::DevLong>(da, out);
    case ::Tango::DEV_LONG64: return as_doubles<::Tango::DevLong64>(da, out);
    case ::Tango::DEV_USHORT: return as_doubles<unsigned short>(da, out);
    case ::Tango::DEV_ULONG: return as_doubles<::Tango::DevULong>(da, out);
    case ::Tango::DEV_ULONG64: return as_doubles<::Tango::DevULong64>(da, out);
    case ::Tango::DEV_UCHAR: return as_doubles<unsigned char>(da, out);
    default: return false;
  }
}

}  // namespace weir::tango
