#pragma once
// A PV log channel's NXlogs in one segment (core/include/weir/core/pv_log.hpp): /entry/<link>_pvs,
// an NXcollection beside the channel's NXdata (which keeps the blocks and their tables for exact
// accounting), with one NXlog per PV as the ESS file-writer's f144, al00 and ep01 modules write
// them: value and time, the alarm log, the connection log and the dropped updates
// (docs/design/recording.md, "PV logs").
//
// SWMR adds no object to an open file, so a segment makes the NXlog of every PV whose meta key
// (`<channel>.pv.<index>`) is in the arena when it opens, with the value dataset of the type the
// meta says. An entry of a PV the segment has no NXlog for, or whose value is of another type, is
// kept in PvLogSource::carried; the recorder then opens a new segment at once (wants_new_file()),
// which logs the carried entries first. Nothing is lost, and each NXlog keeps one value type.
#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "column.hpp"
#include "weir/core/error.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/pv_log.hpp"
#include "weir/h5/handle.hpp"

namespace weir::rec {

// The file's names (docs/design/recording.md, "PV logs").
inline constexpr char kPvLogsSuffix[] = "_pvs";              // /entry/<channel link>_pvs, NXcollection
inline constexpr char kAttrLogChannel[] = "log_channel";     // of _pvs: the channel's name (never `channel`:
                                                             // that attribute marks a channel's NXdata)
inline constexpr char kAttrMalformedEntries[] = "malformed_entries";  // of _pvs: u64, entries of no PV or event
inline constexpr char kAttrPvName[] = "pv_name";             // of an NXlog: the PV's name as it is
inline constexpr char kAttrPvKey[] = "key";                  // the PV's key in the arena
inline constexpr char kAttrPvType[] = "type";                // "f64", "i64", "enum", "text"
inline constexpr char kAttrPvHost[] = "host";                // its server, as the driver saw it
inline constexpr char kAttrPvIndex[] = "pv_index";           // u32: its index in the driver's list
inline constexpr char kAttrDropped[] = "dropped";            // u64: updates dropped in this segment
inline constexpr char kPvValue[] = "value";
inline constexpr char kPvValueString[] = "value_string";     // an enum's state strings
inline constexpr char kPvTime[] = "time";                    // i64 ns since the epoch
inline constexpr char kPvAlarmSeverity[] = "alarm_severity";  // i16
inline constexpr char kPvAlarmStatus[] = "alarm_status";      // i16, EPICS's menuAlarmStat
inline constexpr char kPvAlarmTime[] = "alarm_time";          // i64 ns
inline constexpr char kPvConnectionStatus[] = "connection_status";  // u8: 1 connected, 0 disconnected
inline constexpr char kPvConnectionTime[] = "connection_status_time";  // i64 ns
inline constexpr char kPvDroppedCount[] = "dropped_count";    // u32: updates one `dropped` entry reports
inline constexpr char kPvDroppedTime[] = "dropped_time";      // i64 ns: when they were noticed
inline constexpr char kAttrEnumStrings[] = "enum_strings";
inline constexpr char kAttrNames[] = "names";                 // a code dataset's names, comma-separated
inline constexpr char kPvSeverityNames[] = "NO_ALARM,MINOR,MAJOR,INVALID";
inline constexpr char kPvStatusNames[] =
    "NO_ALARM,READ,WRITE,HIHI,HIGH,LOLO,LOW,STATE,COS,COMM,TIMEOUT,HWLIMIT,CALC,SCAN,LINK,SOFT,BAD_SUB,UDF,"
    "DISABLE,SIMM,READ_ACCESS,WRITE_ACCESS";
inline constexpr char kPvConnectionNames[] = "disconnected,connected";
inline constexpr std::uint32_t kPvLogChunkRows = 256;   // rows per chunk of value, time
inline constexpr std::uint32_t kPvEventChunkRows = 64;  // rows per chunk of the alarm, connection and dropped logs
inline constexpr std::uint32_t kMaxPvIndex = 1 << 20;   // an entry naming a higher index is malformed

/// What a PV's meta key says (any field may be missing).
struct PvMeta {
  std::string pv, key, host, units;
  core::PvType type = core::PvType::unknown;
  std::optional<std::int64_t> precision;
  std::optional<double> display[2], control[2], alarm[2], warning[2];
  std::vector<std::string> states;  // an enum's
};

/// Parses a meta key's JSON. Unparsable text gives an empty meta (type unknown). Thread: any.
[[nodiscard]] PvMeta parse_pv_meta(std::string_view json);
/// The NXlog's link name for a PV name: each character but [A-Za-z0-9_.] becomes '_', and a '.'
/// at either end too (NeXus's name rule); "" gives "pv_<index>". Thread: any.
[[nodiscard]] std::string pv_link_name(std::string_view pv, std::uint32_t index);

/// A PV log channel's state that outlives a segment. Owned by the recorder (one per followed PV
/// log channel); a segment's PvLogGroup uses it while the segment is open.
struct PvLogSource {
  std::string channel;
  const core::KvStore* kv = nullptr;      // the arena's keys, for the meta keys (null: none)
  std::vector<core::PvLogEntry> carried;  // entries the last segment could not log: the next logs them first
};

class PvLogGroup {
 public:
  PvLogGroup() = default;  // none: not a PV log channel
  /// Creates /entry/<link>_pvs under `entry` and an NXlog for each PV whose meta key is in the
  /// arena now or of which an entry is carried. `max_entries`: the most one block holds.
  /// Thread: the recording thread (cold path).
  [[nodiscard]] static core::Result<PvLogGroup> create(hid_t entry, const std::string& link, std::uint32_t max_entries,
                                                       PvLogSource& source, const std::string& file);
  /// Logs the entries the last segment carried, before any block of this one: called once the
  /// segment is the recorder's (a segment made and given up leaves them carried). What this one
  /// cannot log either stays carried, in order. Cold path.
  void log_carried();

  [[nodiscard]] bool valid() const noexcept { return group_.valid(); }
  /// Logs `count` entries (a block's). An entry the segment cannot log is carried (wants_new_file()).
  /// Hot path: no allocation in steady state (a carried entry may allocate).
  void commit(const std::byte* entries, std::uint32_t count) noexcept;
  /// A chunk is ready, or a reconnection's meta or a count is to be written.
  [[nodiscard]] bool pending() const noexcept;
  /// Writes whole chunks and what a reconnection changed in the NXlogs' attributes. Cold path.
  [[nodiscard]] core::Result<void> write_chunks();
  /// A flush: hands every staged row to HDF5, with the counters, when `final` (the segment's close) or
  /// kPvLogPartialEveryNs since the last time; else whole chunks only (see format.hpp). The PV log
  /// channel's own NXdata holds every entry at every flush: a killed recorder's NXlogs may lag it by
  /// up to that period.
  [[nodiscard]] core::Result<void> write_partial(bool final);
  void mark_durable() noexcept;
  void roll_back() noexcept;
  /// Entries are carried (or a PV's meta changed in a way this file's attributes cannot show): the
  /// recorder should open a new segment.
  [[nodiscard]] bool wants_new_file() const noexcept { return !source_->carried.empty() || meta_stale_; }
  /// Rows logged in this segment (value, alarm, connection and dropped rows).
  [[nodiscard]] std::uint64_t rows() const noexcept { return rows_; }

 private:
  struct Pv {
    std::uint32_t index = 0;
    core::PvType type = core::PvType::unknown;  // of value; an entry of another type is carried
    std::string what;
    h5::Group group;
    PvMeta shown;  // what its attributes say
    Column value, value_string, time, severity, status, alarm_time, connection, connection_time, dropped_count,
        dropped_time;
    bool any_alarm = false;  // a value was logged in this segment: last_severity/last_status hold
    std::uint16_t last_severity = 0, last_status = 0;
    std::uint64_t dropped = 0, dropped_written = 0, dropped_durable = 0;
    bool reconnected = false;  // a `connected` entry since its meta was last read
  };
  [[nodiscard]] core::Result<void> add_pv(std::uint32_t index, const PvMeta& meta, core::PvType type);
  [[nodiscard]] core::Result<void> write_meta(Pv& pv, const PvMeta& meta, bool rewrite);
  [[nodiscard]] core::Result<void> reread_meta();
  [[nodiscard]] core::Result<void> write_counts();
  /// Logs one entry, or says false when this segment cannot (no NXlog of the PV, another type).
  bool log(const core::PvLogEntry& e) noexcept;
  [[nodiscard]] std::optional<PvMeta> read_meta(std::uint32_t index) const;

  h5::Group group_;
  std::string what_;
  std::uint32_t max_entries_ = 1;
  PvLogSource* source_ = nullptr;  // the recorder's; outlives the segment
  h5::Type text_type_;             // fixed kPvTextBytes strings (value of a text PV, value_string)
  std::vector<Pv> pvs_;
  std::vector<std::int32_t> slot_of_;  // PV index -> its place in pvs_, -1: none
  std::uint64_t rows_ = 0;
  std::uint64_t malformed_ = 0, malformed_written_ = 0;
  bool ready_ = false;        // a column has a whole chunk staged
  std::int64_t last_partial_ns_ = 0;  // monotonic time of the last write_partial that handed over everything
  bool reconnected_ = false;  // some Pv::reconnected
  bool meta_stale_ = false;   // a reconnection's meta cannot be shown by this file's attributes
};

}  // namespace weir::rec
