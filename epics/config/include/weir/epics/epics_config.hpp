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
#include "weir/core/channel.hpp"
#include "weir/core/error.hpp"

namespace weir::epics {

inline constexpr std::uint32_t kMaxPvNameBytes = 60;       // EPICS's PVNAME_STRINGSZ less its NUL
inline constexpr std::uint32_t kDefaultLogBlock = 256;     // PV log entries a block holds
inline constexpr double kDefaultFlushMs = 100;             // the PV log's blocks are published at least this often
inline constexpr std::uint32_t kMaxWaveformElements = 16U << 20;
inline constexpr std::uint32_t kDefaultWaveformRing = 64;  // blocks (frames) a waveform channel's ring holds
inline constexpr std::uint32_t kDefaultQueueEntries = 65536;  // updates the CA callbacks may queue ahead of the writer

/// One PV of a driver: a scalar (a key and the PV log) or, with `channel`, a waveform (a channel).
struct PvSpec {
  std::string pv;       // the PV's name as the IOC serves it
  std::string key;      // a scalar's key (default: the PV's name)
  std::string channel;  // a waveform's channel; empty for a scalar
  std::uint32_t elements = 0;   // a waveform's frame length (elements past it are cut, and counted)
  core::Dtype dtype = core::Dtype::f64;  // a waveform's element type in the channel
  double rate_hz = 10;  // a waveform's nominal update rate (frames/s)
  std::uint32_t ring = kDefaultWaveformRing;
  std::string units;    // a waveform channel's units (a scalar's come from the IOC)
};

/// Channel Access client settings: EPICS's own environment variables, set by the pipeline when given.
struct CaSettings {
  std::map<std::string, std::string> env;  // EPICS_CA_ADDR_LIST, EPICS_CA_AUTO_ADDR_LIST, ...
};

struct DriverOptions {
  std::string part;
  std::string log_channel;                 // "<part>.pvlog" unless `log = "..."`
  std::uint32_t log_block = kDefaultLogBlock;
  double flush_ms = kDefaultFlushMs;
  double connect_timeout_s = 5;            // a PV not connected after this long is reported (and still waited for)
  std::uint32_t queue_entries = kDefaultQueueEntries;
  std::vector<PvSpec> pvs;
  CaSettings ca;
  double duration_s = 0;                   // 0: until stopped
};

/// Reads `driver "epics" { pvs = {...}, ... }`; errors are `file:line: driver "NAME": ...`.
[[nodiscard]] core::Result<DriverOptions> driver_options(const config::DriverDecl& driver);
/// For `weir check` (supervisor/driver_checks.cpp): driver_options() and the channels' names.
[[nodiscard]] core::Result<void> check_driver(const config::Pipeline& pipeline, const config::DriverDecl& driver);
/// The channels the driver makes: its PV log, and one per waveform PV.
[[nodiscard]] core::Result<std::vector<core::ChannelSpec>> driver_channels(const config::DriverDecl& driver);
[[nodiscard]] core::ChannelSpec log_channel_spec(const DriverOptions& options);
[[nodiscard]] core::ChannelSpec waveform_channel_spec(const PvSpec& pv);

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
