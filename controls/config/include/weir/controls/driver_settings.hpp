#pragma once
// What driver "epics" and driver "tango" read alike: the PV log's settings, a list of items each a
// scalar (a key) or a frame channel (a waveform, a spectrum), and the channels made from them.
// Errors are `file:line: driver "NAME": ...`, as config::Fields makes them. Thread: any (pure).
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "weir/config/fields.hpp"
#include "weir/config/pipeline.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/error.hpp"

namespace weir::controls {

inline constexpr std::uint32_t kDefaultLogBlock = 256;         // PV log entries a block holds
inline constexpr double kDefaultFlushMs = 100;                 // the PV log's blocks are published at least this often
inline constexpr double kMaxFlushMs = 60000;                   // the longest flush_ms
inline constexpr double kDefaultConnectTimeoutS = 5;           // an item not connected after this long is reported
inline constexpr std::uint32_t kDefaultQueueEntries = 65536;   // updates the control system's threads may queue ahead of the log
inline constexpr std::uint32_t kMaxFrameElements = 16U << 20;  // a waveform's or spectrum's longest frame
inline constexpr std::uint32_t kDefaultFrameRing = 64;         // blocks (frames) a frame channel's ring holds
inline constexpr std::uint32_t kPvLogRingBlocks = 256;         // blocks the PV log channel's ring holds

template <class T>
[[nodiscard]] tl::unexpected<core::Error> pass(const core::Result<T>& r) {
  return tl::make_unexpected(r.error());
}

/// The settings of a driver's PV log and thread, the same in both drivers.
struct DriverSettings {
  std::string part;
  std::string log_channel;                 // "<part>.pvlog" / "<part>.attrlog" unless `log = "..."`
  std::uint32_t log_block = kDefaultLogBlock;
  double flush_ms = kDefaultFlushMs;
  double connect_timeout_s = kDefaultConnectTimeoutS;  // an item not connected after this long is reported (and still waited for)
  std::uint32_t queue_entries = kDefaultQueueEntries;
  double duration_s = 0;                   // 0: until stopped
};

/// An item's frame channel (`channel = "..."`: a waveform PV, a spectrum attribute); `channel` empty
/// for a scalar.
struct FrameSettings {
  std::string channel;
  std::uint32_t elements = 0;            // the frame's length (elements past it are cut, and counted)
  core::Dtype dtype = core::Dtype::f64;  // the element type in the channel
  double rate_hz = 10;                   // the nominal update rate (frames/s)
  std::uint32_t ring = kDefaultFrameRing;
  std::string units;                     // the channel's units (a scalar's come from the control system)
};

/// How one driver names its things in errors.
struct ItemWords {
  const char* list;    // the setting: "pvs"
  const char* item;    // "PV"
  const char* a_item;  // "a PV"
  const char* items;   // "PVs"
  const char* frame;   // "waveform"
  const char* source;  // where a scalar's units come from: "the IOC"
  const char* log;     // "PV log"
};

/// The items of a list setting: each a name (text) or a table of named settings; absent: none.
[[nodiscard]] core::Result<std::vector<config::Setting>> list_items(config::Fields& owner,
                                                                    const std::map<std::string, config::Setting>& all,
                                                                    const char* key);

/// A period in ms in [lo, hi]; absent: `fallback`.
[[nodiscard]] core::Result<double> read_period_ms(config::Fields& f, const char* key, double fallback, double lo,
                                                  double hi = 3'600'000);

/// Reads an item table's `key`, `channel`, `units` and, with a channel, `elements`, `dtype`, `rate`,
/// `ring`; refuses frame settings on a scalar and a key with a channel.
[[nodiscard]] core::Result<void> read_item_target(config::Fields& f, const ItemWords& words, std::string& key,
                                                  FrameSettings& frame);

/// Refuses an item listed twice, or a key or channel written by two items; `channels` collects them.
class ItemNames {
 public:
  ItemNames(config::Fields& owner, const ItemWords& words) : owner_(owner), words_(words) {}
  /// `identity` tells two items apart; `shown` names the item in the error; i counts from 0.
  [[nodiscard]] core::Result<void> add(std::size_t i, const std::string& identity, const std::string& shown,
                                       const std::string& key, const std::string& channel);
  [[nodiscard]] const std::set<std::string>& channels() const noexcept { return channels_; }

 private:
  config::Fields& owner_;
  const ItemWords& words_;
  std::set<std::string> identities_, keys_, channels_;
};

/// Reads `log` (default `default_log`, no frame channel of `channels`), `log_block`, `flush_ms`,
/// `connect_timeout_s`, `queue` and `duration_s` into `out`.
[[nodiscard]] core::Result<void> read_driver_settings(config::Fields& f, const ItemWords& words,
                                                      const std::string& default_log,
                                                      const std::set<std::string>& channels, DriverSettings& out);

/// The PV log channel (core/pv_log.hpp) of a driver: a full block each flush, at most.
[[nodiscard]] core::ChannelSpec pv_log_channel_spec(const DriverSettings& settings);
/// An item's frame channel: one frame a block, labelled `label` ("waveform", "spectrum").
[[nodiscard]] core::ChannelSpec frame_channel_spec(const FrameSettings& frame, const char* label);

}  // namespace weir::controls
