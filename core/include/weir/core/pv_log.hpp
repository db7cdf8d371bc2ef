#pragma once
// PV log channels: every value update, alarm and connection change of a control-system driver's
// scalar process variables (an EPICS driver's PVs), as a frame channel of u8 whose frames are
// PvLogEntry records. A block holds the entries gathered in one flush (1 .. frames_per_block of
// them: block samples = entries x sizeof(PvLogEntry)), stamped with the flush's time; entries keep
// their own times (the IOC's timestamp for a value). The recorder writes each PV as an NXlog
// beside the channel's NXdata (docs/design/recording.md, "PV logs"). What each PV is (its name,
// key, type, units, limits, enum states) is the text key `<channel>.pv.<index>` (JSON), written by
// the driver at start and again at each connection, before the entry that says it connected.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "weir/core/channel.hpp"

namespace weir::core {

inline constexpr char kPvLogAxisName[] = "pvlog";  // a PV log channel's frame axis
inline constexpr char kPvLogVersion[] = "v1";      // its axis units: the entry layout below
inline constexpr std::uint32_t kPvTextBytes = 40;  // EPICS's MAX_STRING_SIZE: a string PV's value, an enum state

enum class PvEvent : std::uint8_t {
  value = 0,         // an update: value, alarm severity and status, the IOC's time
  connected = 1,     // the PV (re)connected; its meta key was rewritten just before
  disconnected = 2,  // the PV's server went away: no value holds until the next update
  dropped = 3,       // `count` updates of the PV were dropped (the driver's queue was full); time: when noticed
};

enum class PvType : std::uint8_t {
  unknown = 0,     // never connected
  f64 = 1,         // DBR_DOUBLE, DBR_FLOAT: the f64 field
  i64 = 2,         // DBR_LONG, DBR_SHORT, DBR_CHAR: the i64 field
  enumerated = 3,  // DBR_ENUM: i64 the state's index, text its string
  text = 4,        // DBR_STRING: text
};

/// One entry of a PV log, 80 bytes, native byte order.
struct PvLogEntry {
  std::int64_t time_ns = 0;       // ns since the Unix epoch: the IOC's stamp of a value; the local clock's of other events
  std::uint32_t pv = 0;           // the PV's index in the driver's list (its meta key `<channel>.pv.<index>`)
  std::uint8_t event = 0;         // PvEvent
  std::uint8_t type = 0;          // PvType of the value
  std::uint16_t severity = 0;     // EPICS alarm severity: 0 NO_ALARM, 1 MINOR, 2 MAJOR, 3 INVALID
  std::uint16_t status = 0;       // EPICS alarm status (epicsAlarmCondition: 0 NO_ALARM, 3 HIHI, ...)
  std::uint16_t text_bytes = 0;   // bytes of text used
  std::uint32_t count = 0;        // a dropped event: updates dropped; else 0
  double f64 = 0;                 // an f64 PV's value
  std::int64_t i64 = 0;           // an i64 PV's value, an enum's index
  char text[kPvTextBytes] = {};   // a string PV's value, an enum's state (not NUL-terminated when full)
};
static_assert(sizeof(PvLogEntry) == 80);
static_assert(offsetof(PvLogEntry, pv) == 8 && offsetof(PvLogEntry, event) == 12 && offsetof(PvLogEntry, type) == 13);
static_assert(offsetof(PvLogEntry, severity) == 14 && offsetof(PvLogEntry, status) == 16);
static_assert(offsetof(PvLogEntry, text_bytes) == 18 && offsetof(PvLogEntry, count) == 20);
static_assert(offsetof(PvLogEntry, f64) == 24 && offsetof(PvLogEntry, i64) == 32 && offsetof(PvLogEntry, text) == 40);

inline constexpr std::uint32_t kPvLogEntryBytes = sizeof(PvLogEntry);

/// The frame shape of a PV log channel holding at most `max_entries` entries a block.
[[nodiscard]] inline FrameShape pv_log_frame(std::uint32_t max_entries) {
  FrameShape f;
  f.frames_per_block = max_entries;
  f.frame_elements = kPvLogEntryBytes;
  f.axis.name = kPvLogAxisName;
  f.axis.units = kPvLogVersion;
  f.axis.start = 0;
  f.axis.step = 1;
  return f;
}

/// Whether a channel of this dtype and shape is a PV log channel (of this layout's version).
[[nodiscard]] inline bool is_pv_log_channel(Dtype dtype, const FrameShape& f) noexcept {
  return dtype == Dtype::u8 && f.framed() && f.frame_elements == kPvLogEntryBytes && f.axis.name == kPvLogAxisName &&
         f.axis.units == kPvLogVersion;
}

/// The meta key of PV `index` of the log channel `channel`: "<channel>.pv.<index>".
[[nodiscard]] inline std::string pv_meta_key(const std::string& channel, std::uint32_t index) {
  return channel + ".pv." + std::to_string(index);
}

/// A PV type's name in the meta key's "type": "f64", "i64", "enum", "text", "unknown".
[[nodiscard]] inline const char* pv_type_name(PvType type) noexcept {
  switch (type) {
    case PvType::f64: return "f64";
    case PvType::i64: return "i64";
    case PvType::enumerated: return "enum";
    case PvType::text: return "text";
    case PvType::unknown: break;
  }
  return "unknown";
}

/// The PvType a meta key's "type" names; unknown for any other text.
[[nodiscard]] inline PvType pv_type_of(std::string_view name) noexcept {
  for (const PvType t : {PvType::f64, PvType::i64, PvType::enumerated, PvType::text})
    if (name == pv_type_name(t)) return t;
  return PvType::unknown;
}

/// "NO_ALARM", "MINOR", "MAJOR", "INVALID" (EPICS's menuAlarmSevr), "?" past them.
[[nodiscard]] inline const char* pv_severity_name(std::uint16_t severity) noexcept {
  constexpr const char* kNames[] = {"NO_ALARM", "MINOR", "MAJOR", "INVALID"};
  return severity < 4 ? kNames[severity] : "?";
}

}  // namespace weir::core
