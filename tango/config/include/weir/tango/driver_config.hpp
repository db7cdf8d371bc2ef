#pragma once
// `driver "tango"`: attributes of other Tango devices into keys (scalars) and channels (spectra),
// read and checked without libtango (tango/README.md, "driver").
#include <cstdint>
#include <string>
#include <vector>

#include "weir/config/pipeline.hpp"
#include "weir/controls/driver_settings.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/error.hpp"

namespace weir::tango {

inline constexpr std::uint32_t kMaxDriverSpectrumElements = controls::kMaxFrameElements;
inline constexpr double kDefaultFallbackPollMs = 1000;  // an attribute whose device pushes no events is read this often
inline constexpr double kDefaultPingMs = 1000;          // each device is pinged this often: a failed ping is a disconnect
inline constexpr double kDefaultTimeoutMs = 1000;       // a call to a device fails after this long

/// One attribute of a driver: a scalar (a key and the attribute log) or, with `channel`, a spectrum.
/// FrameSettings are the spectrum's.
struct AttributeSpec : controls::FrameSettings {
  std::string name;       // as written: "dev/fam/mem/attr" or "tango://host:port/dev/fam/mem/attr[#dbase=no]"
  std::string trl;        // the device's full name for a DeviceProxy ("tango://host:port/dev/fam/mem#dbase=no", or "dev/fam/mem")
  std::string device;     // "dev/fam/mem"
  std::string attribute;  // "attr"
  std::string key;        // a scalar's key (default: "dev/fam/mem/attr")
  double poll_ms = 0;     // > 0: read at this period instead of subscribing to change events
};

/// `log` is "<part>.attrlog" unless given.
struct DriverOptions : controls::DriverSettings {
  double fallback_poll_ms = kDefaultFallbackPollMs;
  double ping_ms = kDefaultPingMs;
  double timeout_ms = kDefaultTimeoutMs;
  std::vector<AttributeSpec> attributes;
};

/// Reads `driver "tango" { attributes = {...}, ... }`; errors are `file:line: driver "NAME": ...`.
[[nodiscard]] core::Result<DriverOptions> driver_options(const config::DriverDecl& driver);
/// For `weir check` (supervisor/driver_checks.cpp): refuses a bad declaration with `file:line: driver "NAME": ...`.
[[nodiscard]] core::Result<void> check_driver(const config::Pipeline& pipeline, const config::DriverDecl& driver);
/// The channels the driver makes from its settings (its attribute log, spectra), for config::resolve().
[[nodiscard]] core::Result<std::vector<core::ChannelSpec>> driver_channels(const config::DriverDecl& driver);

}  // namespace weir::tango
