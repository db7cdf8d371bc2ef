#pragma once
// A pipeline's EPICS parts, read and checked without EPICS: `driver "epics"` (a Channel Access client
// whose PVs become keys, a PV log channel and waveform channels) and `epics "serve"` (weir's status,
// keys, channels and run control as PVs). `weir check` and `weir run` use this library; the
// `weir-epics` program that runs the parts links EPICS base (epics/README.md).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "weir/config/pipeline.hpp"
#include "weir/controls/driver_settings.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/error.hpp"

namespace weir::epics {

inline constexpr std::uint32_t kMaxPvNameBytes = 60;  // EPICS's PVNAME_STRINGSZ less its NUL
inline constexpr std::uint32_t kMaxWaveformElements = controls::kMaxFrameElements;

/// One PV of a driver: a scalar (a key and the PV log) or, with `channel`, a waveform (a channel);
/// FrameSettings are the waveform's.
struct PvSpec : controls::FrameSettings {
  std::string pv;   // the PV's name as the IOC serves it
  std::string key;  // a scalar's key (default: the PV's name)
};

/// Channel Access client settings: EPICS's own environment variables, set by the pipeline when given.
struct CaSettings {
  std::map<std::string, std::string> env;  // EPICS_CA_ADDR_LIST, EPICS_CA_AUTO_ADDR_LIST, ...
};

/// `log` is "<part>.pvlog" unless given.
struct DriverOptions : controls::DriverSettings {
  std::vector<PvSpec> pvs;
  CaSettings ca;
};

/// Reads `driver "epics" { pvs = {...}, ... }`; errors are `file:line: driver "NAME": ...`.
[[nodiscard]] core::Result<DriverOptions> driver_options(const config::DriverDecl& driver);
/// For `weir check` (supervisor/driver_checks.cpp): driver_options() and the channels' names.
[[nodiscard]] core::Result<void> check_driver(const config::Pipeline& pipeline, const config::DriverDecl& driver);
/// The channels the driver makes: its PV log, and one per waveform PV.
[[nodiscard]] core::Result<std::vector<core::ChannelSpec>> driver_channels(const config::DriverDecl& driver);

/// Whether `name` is a valid EPICS PV name (1..60 bytes of letters, digits and _-:.[]<>;{}$+ ), with
/// `why` saying what is wrong when not.
[[nodiscard]] bool valid_pv_name(const std::string& name, std::string& why);

// --- epics "serve" -------------------------------------------------------------------------------

/// A key served as a PV: read-only unless `writable`.
struct KeyPv {
  std::string key;
  std::string pv;       // the name after the prefix (default: the key with '.' as ':')
  bool writable = false;
  std::string units;    // EGU; default: the key's `<key>_units` text key when the server starts
  double low = 0, high = 0;  // display and drive limits (DRVL/DRVH for writable PVs); both 0: none
  int precision = 3;
};

/// A channel served as a waveform PV: its newest block, or a min/max envelope of `elements` points.
struct ChannelPv {
  std::string channel;
  std::string pv;             // default: the channel's name with '.' as ':'
  std::string mode = "newest";  // "newest" or "envelope"
  std::uint32_t elements = 0;   // newest: at most this many samples (default: the block's); envelope: points (default 1000)
};

struct ServeOptions {
  std::string part;
  std::string prefix;                 // every PV's name begins with it ("BL1:WEIR:")
  std::vector<KeyPv> keys;
  std::vector<ChannelPv> channels;
  bool status = true;                 // per-channel rate, lost, dropped, lag; disk; parts
  bool run_control = true;            // the areaDetector-style run PVs (a pipeline with runs = "controlled")
  double update_hz = 10;              // how often status and waveform PVs are refreshed
  double stall_s = 2;                 // a channel with no new block for this long is a MAJOR alarm on its rate PV
  std::map<std::string, std::string> env;  // EPICS_CA_SERVER_PORT, EPICS_PVAS_SERVER_PORT, ...
  bool pva = true;                    // serve pvAccess too (where EPICS base has it)
  std::string record_dir;             // the recorders' directory (run-control PVs' FilePath)
};

/// Reads `epics "serve" { prefix = "...", ... }`; errors are `file:line: epics "NAME": ...`.
[[nodiscard]] core::Result<ServeOptions> serve_options(const config::Pipeline& pipeline, const config::EpicsDecl& decl);
[[nodiscard]] core::Result<void> check_serve(const config::Pipeline& pipeline);

/// A key or channel name as a PV name part: '.' becomes ':', anything else not allowed becomes '_'.
[[nodiscard]] std::string pv_part_of(const std::string& name);

}  // namespace weir::epics
