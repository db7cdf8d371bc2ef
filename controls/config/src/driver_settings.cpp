// The settings both control-system drivers read, through config::Fields so that every error names
// the file, the line, the part and the key.
#include "weir/controls/driver_settings.hpp"

#include <cmath>

#include <fmt/format.h>

#include "weir/core/pv_log.hpp"

namespace weir::controls {

using config::Fields;
using config::Setting;
using core::Result;

Result<std::vector<Setting>> list_items(Fields& owner, const std::map<std::string, Setting>& all, const char* key) {
  const auto it = all.find(key);
  if (it == all.end()) return std::vector<Setting>{};
  const Setting& s = it->second;
  if (s.type == Setting::Type::text) return std::vector<Setting>{s};
  if (s.type != Setting::Type::table || !s.fields.empty())
    return tl::make_unexpected(owner.error(fmt::format("'{}' must be a list (of names or tables), not {}", key, s.type_name())));
  return s.items;
}

Result<double> read_period_ms(Fields& f, const char* key, double fallback, double lo, double hi) {
  auto v = f.number(key, fallback);
  if (!v) return v;
  if (!std::isfinite(*v) || *v < lo || *v > hi)
    return tl::make_unexpected(f.error(fmt::format("'{}' must be {} to {} ms, not {}", key, lo, hi, *v)));
  return v;
}

Result<void> read_item_target(Fields& f, const ItemWords& words, std::string& key, FrameSettings& frame) {
  for (auto [name, field] : {std::pair{"key", &key}, std::pair{"channel", &frame.channel}, std::pair{"units", &frame.units}}) {
    auto v = f.text(name, "");
    if (!v) return pass(v);
    *field = *v;
  }
  if (!frame.channel.empty() && !key.empty())
    return tl::make_unexpected(f.error(fmt::format("{} is a scalar (key) or a {} (channel), not both", words.a_item, words.frame)));
  if (frame.channel.empty()) {
    for (const char* k : {"elements", "dtype", "rate", "ring", "units"})
      if (f.has(k) || (std::string_view(k) == "units" && !frame.units.empty()))
        return tl::make_unexpected(f.error(fmt::format("'{}' is for a {} {} (with channel = \"...\"); a scalar's units "
                                                       "come from {}",
                                                       k, words.frame, words.item, words.source)));
    return {};
  }
  auto elements = f.integer("elements", 1, kMaxFrameElements);
  if (!elements) return pass(elements);
  frame.elements = static_cast<std::uint32_t>(*elements);
  auto dtype = f.text("dtype", "f64");
  if (!dtype) return pass(dtype);
  auto parsed = core::parse_dtype(*dtype);
  if (!parsed || *parsed == core::Dtype::c64)
    return tl::make_unexpected(f.error(fmt::format("'dtype' = \"{}\": a {}'s elements are f64, f32, i64, i32, u32, i16, "
                                                   "u16, i8 or u8",
                                                   *dtype, words.frame)));
  frame.dtype = *parsed;
  auto rate = f.number("rate", 10);
  if (!rate) return pass(rate);
  if (!std::isfinite(*rate) || *rate <= 0)
    return tl::make_unexpected(f.error(fmt::format("'rate' must be > 0 updates/s, not {}", *rate)));
  frame.rate_hz = *rate;
  auto ring = f.integer("ring", 2, 1 << 20, kDefaultFrameRing);
  if (!ring) return pass(ring);
  if ((*ring & (*ring - 1)) != 0)
    return tl::make_unexpected(f.error(fmt::format("'ring' must be a power of two, not {}", *ring)));
  frame.ring = static_cast<std::uint32_t>(*ring);
  return {};
}

Result<void> ItemNames::add(std::size_t i, const std::string& identity, const std::string& shown, const std::string& key,
                            const std::string& channel) {
  if (!identities_.insert(identity).second)
    return tl::make_unexpected(owner_.error(fmt::format("{} \"{}\" is listed twice ({}[{}])", words_.item, shown, words_.list, i + 1)));
  if (!key.empty() && !keys_.insert(key).second)
    return tl::make_unexpected(
        owner_.error(fmt::format("key '{}' is written by two {} ({}[{}])", key, words_.items, words_.list, i + 1)));
  if (!channel.empty() && !channels_.insert(channel).second)
    return tl::make_unexpected(
        owner_.error(fmt::format("channel '{}' is written by two {} ({}[{}])", channel, words_.items, words_.list, i + 1)));
  return {};
}

Result<void> read_driver_settings(Fields& f, const ItemWords& words, const std::string& default_log,
                                  const std::set<std::string>& channels, DriverSettings& out) {
  auto log = f.text("log", default_log);
  if (!log) return pass(log);
  out.log_channel = *log;
  if (channels.count(out.log_channel) != 0)
    return tl::make_unexpected(f.error(fmt::format("channel '{}' is both the {} and a {}'s", out.log_channel, words.log, words.frame)));
  auto block = f.integer("log_block", 1, 65536, kDefaultLogBlock);
  if (!block) return pass(block);
  out.log_block = static_cast<std::uint32_t>(*block);
  auto flush = read_period_ms(f, "flush_ms", kDefaultFlushMs, 1, kMaxFlushMs);
  if (!flush) return pass(flush);
  out.flush_ms = *flush;
  auto timeout = f.number("connect_timeout_s", kDefaultConnectTimeoutS);
  if (!timeout) return pass(timeout);
  if (!std::isfinite(*timeout) || *timeout <= 0)
    return tl::make_unexpected(f.error(fmt::format("'connect_timeout_s' must be > 0, not {}", *timeout)));
  out.connect_timeout_s = *timeout;
  auto queue = f.integer("queue", 1024, 1 << 24, kDefaultQueueEntries);
  if (!queue) return pass(queue);
  out.queue_entries = static_cast<std::uint32_t>(*queue);
  auto duration = f.number("duration_s", 0);
  if (!duration) return pass(duration);
  out.duration_s = *duration;
  return {};
}

core::ChannelSpec pv_log_channel_spec(const DriverSettings& settings) {
  core::ChannelSpec c;
  c.name = settings.log_channel;
  c.dtype = core::Dtype::u8;
  c.frame = core::pv_log_frame(settings.log_block);
  c.samples_per_block = settings.log_block * core::kPvLogEntryBytes;
  c.rate_hz = static_cast<double>(c.samples_per_block) * 1000.0 / settings.flush_ms;  // a full block each flush, at most
  c.ring_blocks = kPvLogRingBlocks;
  c.labels = {"pvlog"};
  return c;
}

core::ChannelSpec frame_channel_spec(const FrameSettings& frame, const char* label) {
  core::ChannelSpec c;
  c.name = frame.channel;
  c.dtype = frame.dtype;
  c.units = frame.units;
  c.samples_per_block = frame.elements;
  c.rate_hz = frame.rate_hz * frame.elements;
  c.ring_blocks = frame.ring;
  c.frame.frames_per_block = 1;
  c.frame.frame_elements = frame.elements;
  c.frame.axis.name = "index";
  c.labels = {label};
  return c;
}

}  // namespace weir::controls
