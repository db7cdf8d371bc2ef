#pragma once
// Tango attribute values in weir's terms: the PvType of a Tango data type, the alarm severity of an
// attribute quality (tango/README.md, "Quality"), a Tango time stamp as ns since the Unix epoch, a
// scalar's value into an attribute log entry, a spectrum's values as doubles.
#include <cstdint>
#include <string>
#include <vector>

#include <tango.h>

#include "weir/core/pv_log.hpp"

namespace weir::tango {

/// f64 for DevDouble/DevFloat, i64 for the integer types and DevBoolean, enumerated for DevEnum and
/// DevState, text for DevString; unknown for anything else (DevEncoded, ...).
[[nodiscard]] core::PvType pv_type_of(int data_type) noexcept;
/// VALID 0 (NO_ALARM), WARNING 1 (MINOR), ALARM 2 (MAJOR), INVALID 3 (INVALID), CHANGING 0 (NO_ALARM).
[[nodiscard]] std::uint16_t severity_of(::Tango::AttrQuality quality) noexcept;
[[nodiscard]] std::int64_t unix_ns(const ::Tango::TimeVal& t) noexcept;
/// A DevState's name ("ON", "FAULT", ...), the labels of a DevState attribute.
[[nodiscard]] std::vector<std::string> state_names();

/// Fills e's type and value (f64, i64, text) from a scalar attribute's read value; `labels` name an
/// enum's or a state's values. False when the attribute holds no value (INVALID quality, an error,
/// a type the log does not carry).
bool scalar_value(::Tango::DeviceAttribute& da, const std::vector<std::string>& labels, core::PvLogEntry& e);
/// A spectrum's read values as doubles; false when it holds none.
bool spectrum_values(::Tango::DeviceAttribute& da, std::vector<double>& out);

}  // namespace weir::tango
