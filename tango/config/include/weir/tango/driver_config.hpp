#pragma once
// `driver "tango"`: attributes of other Tango devices into keys (scalars) and channels (spectra),
// read and checked without libtango (tango/README.md, "driver").
#include <cstdint>
#include <string>
#include <vector>

#include "weir/config/pipeline.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/error.hpp"

namespace weir::tango {

inline constexpr std::uint32_t kDefaultAttrLogBlock = 256;      // attribute log entries a block holds
inline constexpr double kDefaultAttrFlushMs = 100;              // the log's blocks are published at least this often
inline constexpr std::uint32_t kMaxDriverSpectrumElements = 16U << 20;
inline constexpr std::uint32_t kDefaultSpectrumRing = 64;       // blocks (frames) a spectrum channel's ring holds
inline constexpr std::uint32_t kDefaultAttrQueueEntries = 65536;  // updates the Tango threads may queue ahead of the log
inline constexpr double kDefaultFallbackPollMs = 1000;          // an attribute whose device pushes no events is read this often
inline constexpr double kDefaultPingMs = 1000;                  // each device is pinged this often: a failed ping is a disconnect
inline constexpr double kDefaultTimeoutMs = 1000;               // a call to a device fails after this long

/// One attribute of a driver: a scalar (a key and the attribute log) or, with `channel`, a spectrum.
struct AttributeSpec {
  std::string name;     // as written: "dev/fam/mem/attr" or "tango://host:port/dev/fam/mem/attr[#dbase=no]"
  std::string trl;      // the device's full name for a DeviceProxy ("tango://host:port/dev/fam/mem#dbase=no", or "dev/fam/mem")
  std::string device;   // "dev/fam/mem"
  std::string attribute;  // "attr"
  std::string key;      // a scalar's key (default: "dev/fam/mem/attr")
  std::string channel;  // a spectrum's channel; empty for a scalar
  double poll_ms = 0;   // > 0: read at this period instead of subscribing to change events
  std::uint32_t elements = 0;   // a spectrum's frame length (elements past it are cut, and counted)
  core::Dtype dtype = core::Dtype::f64;
  double rate_hz = 10;  // a spectrum's nominal update rate (frames/s)
  std::uint32_t ring = kDefaultSpectrumRing;
  std::string units;    // a spectrum channel's units (a scalar's come from the device)
};

struct DriverOptions {
  std::string part;
  std::string log_channel;   // "<part>.attrlog" unless `log = "..."`
  std::uint32_t log_block = kDefaultAttrLogBlock;
  double flush_ms = kDefaultAttrFlushMs;
  double connect_timeout_s = 5;     // an attribute not connected after this long is reported (and still waited for)
  double fallback_poll_ms = kDefaultFallbackPollMs;
  double ping_ms = kDefaultPingMs;
  double timeout_ms = kDefaultTimeoutMs;
  std::uint32_t queue_entries = kDefaultAttrQueueEntries;
  std::vector<AttributeSpec> attributes;
  double duration_s = 0;     // 0: until stopped
};

/// Reads `driver "tango" { attributes = {...}, ... }`; errors are `file:line: driver "NAME": ...`.
[[nodiscard]] core::Result<DriverOptions> driver_options(const config::DriverDecl& driver);
/// For `weir check` (supervisor/driver_checks.cpp): refuses a bad declaration with `file:line: driver "NAME": ...`.
[[nodiscard]] core::Result<void> check_driver(const config::Pipeline& pipeline, const config::DriverDecl& driver);
/// The channels the driver makes from its settings (its attribute log, spectra), for config::resolve().
[[nodiscard]] core::Result<std::vector<core::ChannelSpec>> driver_channels(const config::DriverDecl& driver);
[[nodiscard]] core::ChannelSpec log_channel_spec(const DriverOptions& options);
[[nodiscard]] core::ChannelSpec spectrum_channel_spec(const AttributeSpec& attribute);

}  // namespace weir::tango
