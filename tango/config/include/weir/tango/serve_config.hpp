#pragma once
// `tango "serve"`: weir as a Tango device server, read and checked without libtango (weir check and
// weir run use it; weir-tango runs the server). Settings and attributes: tango/server/README.md.
#include <cstdint>
#include <string>
#include <vector>

#include "weir/config/pipeline.hpp"
#include "weir/core/error.hpp"

namespace weir::tango {

inline constexpr std::uint32_t kMaxSpectrumElements = 16U << 20;  // a channel attribute's longest SPECTRUM
inline constexpr std::uint32_t kDefaultEnvelopePoints = 1000;     // an envelope's points unless `elements`

/// Change and archive criteria as Tango defines them (abs_change, rel_change in percent): weir pushes
/// an event when |new - last pushed| >= abs, or |new - last| / |last| * 100 >= rel (100 when last is 0),
/// or the quality changed. Neither set: any change. 0: not set.
struct EventCriteria {
  double abs_change = 0, rel_change = 0;
  double archive_abs_change = 0, archive_rel_change = 0;  // default: the change criteria
};

/// A key served as a scalar attribute: read-only unless `writable`.
struct KeyAttr {
  std::string key;
  std::string attribute;  // default: the key with every character not a letter, digit or '_' as '_'
  bool writable = false;
  std::string units;      // default: the key's `<key>_units` text key when the server starts
  std::string format;     // Tango's format property ("%.3f"); empty: Tango's default
  bool has_min = false, has_max = false;
  double min = 0, max = 0;  // writable: Tango refuses a write outside them (min_value, max_value)
  EventCriteria events;
};

/// A channel served as a SPECTRUM: its newest block, or a min/max envelope of `elements` points.
struct ChannelAttr {
  std::string channel;
  std::string attribute;          // default: the channel's name as above
  std::string mode = "newest";    // "newest" or "envelope" (attributes <attribute>_Min, <attribute>_Max)
  std::uint32_t elements = 0;     // newest: at most this many samples (default: the block's); envelope: points
};

/// A spectrum served as two SPECTRUMs, `<attribute>` and `<attribute>_Axis` (the axis value of each
/// element): a framed channel's newest frame (the fft shard's PSD: axis from the channel's frame
/// shape), or an array key (the mca shard's `<out>.spectrum`: axis from the array key `<key>_axis`,
/// its units from the text key `<key>_axis_units`).
struct SpectrumAttr {
  std::string channel;            // one of channel and key
  std::string key;
  std::string attribute;          // default: the channel's or key's name as above
};

/// Where the device is registered: nowhere (-nodb -dlist), a file database (-file=), or the Tango
/// database of TANGO_HOST.
enum class TangoDatabase : std::uint8_t { none, file, tango };

struct ServeOptions {
  std::string part;
  std::string device;             // domain/family/member
  TangoDatabase database = TangoDatabase::tango;
  std::string instance;           // the server's instance name (weir-tango/<instance>); default: the part
  std::string host;               // the CORBA endpoint's address ("" : every interface)
  std::uint32_t port = 0;         // the CORBA endpoint's port (0: chosen by omniORB; needed without a database)
  std::string file;               // database = "file": the file database's path (default: a private file)
  std::vector<KeyAttr> keys;
  std::vector<ChannelAttr> channels;
  std::vector<SpectrumAttr> spectra;
  bool status = true;             // per-channel rate, lost, dropped, lag; disk; parts
  bool run_control = true;        // RunState, RunNumber, ... and StartRun/StopRun/AbortRun (runs = "controlled")
  double update_hz = 10;          // how often the arena is read and events pushed
  double stall_s = 2;             // a channel with no new block for this long: ALARM
  std::string record_dir;         // the recorders' directory (disk status)
  EventCriteria rate_events{0, 1, 0, 1};  // the channels' rate attributes: 1 % by default
};

/// Reads `tango "serve" { device = "a/b/c", ... }`; errors are `file:line: tango "NAME": ...`.
[[nodiscard]] core::Result<ServeOptions> serve_options(const config::Pipeline& pipeline, const config::TangoDecl& decl);

/// Every `tango "serve"` of the pipeline, checked as weir-tango will read it: `file:line: tango "NAME": ...`.
[[nodiscard]] core::Result<void> check_serve(const config::Pipeline& pipeline);

/// Whether `name` is a Tango device name domain/family/member (three non-empty fields of letters,
/// digits and _-.+), with `why` saying what is wrong when not.
[[nodiscard]] bool valid_device_name(const std::string& name, std::string& why);

/// A key or channel name as an attribute name: characters other than letters, digits and '_' become '_'.
[[nodiscard]] std::string attribute_part_of(const std::string& name);

}  // namespace weir::tango
