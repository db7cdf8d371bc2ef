#include "api.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "weir/core/block_copier.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/channel_activity.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/label_dictionary.hpp"
#include "weir/tools/arena_report.hpp"
#include "weir/tools/channel_report.hpp"
#include "weir/tools/output.hpp"
#include "weir/tools/value_codec.hpp"

namespace weir::serve {

using tools::JsonArray;
using tools::JsonObject;

namespace {

constexpr std::uint64_t kInlineArrayElements = 64;  // /api/keys shows arrays up to this size whole
std::string labels_json(const core::Arena& arena, std::uint32_t index) {
  JsonArray out;
  auto copier = core::BlockCopier::open(arena, index);
  if (!copier) return out.str();
  const std::uint64_t ids = copier->desc().label_ids;
  core::LabelDictionary(arena).for_each([&](const core::LabelInfo& l) {
    if (l.id < 64 && (ids >> l.id & 1U) != 0) out.text(l.name);
  });
  return out.str();
}

std::uint64_t pyramid_reach(const core::ChannelDesc& d) {
  std::uint64_t reach = d.pyramid_entries;
  for (std::uint32_t level = 0; level < d.pyramid_levels; ++level) reach *= d.pyramid_factor;
  return reach;
}

// A key's value read whole (up to the arena's value_bytes); ok or the status that stopped it.
struct KeyValue {
  core::KvStatus status = core::KvStatus::not_found;
  core::ValueInfo info;
  std::vector<std::byte> bytes;
};

KeyValue read_key(const core::KvStore& kv, std::string_view name) {
  KeyValue v;
  v.bytes.resize(kv.value_bytes());
  v.status = kv.get(name, v.bytes, v.info);
  if (v.status == core::KvStatus::ok) v.bytes.resize(v.info.length);
  return v;
}

std::string value_json(const KeyValue& v, bool whole) {
  if (v.info.type == core::ValueType::array) {
    if (!whole && v.info.array.elements() > kInlineArrayElements) return "null";
    return tools::array_to_json(v.info.array, v.bytes);
  }
  if (v.info.type == core::ValueType::bytes && !whole && v.bytes.size() > kInlineArrayElements) return "null";
  return tools::value_to_json(v.info.type, v.bytes);
}

template <class T>
std::vector<T> as_vector(const KeyValue& v) {  // bytes or an array of T, element by element
  std::vector<T> out(v.bytes.size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), v.bytes.data(), out.size() * sizeof(T));
  return out;
}

double as_double(const KeyValue& v) {
  if (v.status != core::KvStatus::ok || v.bytes.size() != 8) return 0;
  double d = 0;
  std::uint64_t u = 0;
  std::memcpy(&u, v.bytes.data(), 8);
  switch (v.info.type) {
    case core::ValueType::f64: std::memcpy(&d, &u, 8); return d;
    case core::ValueType::u64: return static_cast<double>(u);
    case core::ValueType::i64: return static_cast<double>(static_cast<std::int64_t>(u));
    default: return 0;
  }
}

}  // namespace

std::string Api::arena() const {
  const core::ArenaHeader& h = arena_->header();
  JsonArray attached;
  for (const std::uint32_t pid : core::attached_pids(*arena_)) attached.number(pid);
  JsonObject o;
  o.text("name", arena_->location().name)
      .text("location", arena_->location().describe())
      .number("bytes", arena_->bytes())
      .number("creator_pid", h.creator_pid)
      .boolean("creator_alive", core::pid_alive(h.creator_pid))
      .text("created", tools::iso8601_utc(h.created_ns))
      .raw("attached", attached.str())
      .boolean("writable", !arena_->read_only())
      .number("live_keys", core::KvStore(*arena_).count())
      .raw("geometry", tools::geometry_json(arena_->geometry()));
  return o.str();
}

std::string Api::channels() const {
  JsonArray list;
  for (const core::ChannelInfo& c : core::list_channels(*arena_)) {
    JsonArray consumers;
    for (const auto& k : c.consumers) {
      JsonObject o;
      o.number("pid", k.pid)
          .boolean("alive", k.alive)
          .text("name", k.name)
          .text("kind", k.kind)
          .text("policy", core::policy_name(k.policy))
          .number("blocks_read", k.blocks_read)
          .number("blocks_lost", k.blocks_lost)
          .number("lag_blocks", k.lag)
          .number("blocks_out", k.blocks_out)
          .number("blocks_skipped", k.blocks_skipped)
          .number("errors", k.errors)
          .number("proc_p50_ns", k.proc_p50_ns)
          .number("proc_p99_ns", k.proc_p99_ns)
          .number("bytes_out", k.bytes_out);
      consumers.raw(o.str());
    }
    std::uint64_t reach = 0;
    core::ChannelActivity activity;
    if (auto copier = core::BlockCopier::open(*arena_, c.index)) {
      reach = pyramid_reach(copier->desc());
      activity = core::channel_activity(*copier);
    }
    JsonObject o;
    o.number("index", c.index)
        .text("name", c.name)
        .text("dtype", core::dtype_name(c.dtype))
        .real("rate_hz", c.rate_hz)
        .text("units", c.units)
        .raw("labels", labels_json(*arena_, c.index))
        .number("samples_per_block", c.samples_per_block)
        .number("ring_blocks", c.ring_blocks)
        .number("pyramid_reach_samples", reach)
        .number("blocks_written", c.blocks_written)
        .number("samples_written", c.samples_written)
        .number("dropped_at_source", c.dropped_at_source)
        .real("blocks_per_s", activity.blocks_per_s)
        .real("samples_per_s", activity.samples_per_s)
        .raw("newest_block_age_s", activity.known ? fmt::format("{}", activity.age_s) : "null")
        .boolean("stale", !activity.known || activity.age_s > tools::stall_after_s(c, stale_after_s_))
        .real("stale_after_s", tools::stall_after_s(c, stale_after_s_))
        .number("writer_pid", c.writer_pid)
        .boolean("writer_alive", c.writer_alive)
        .raw("frame", tools::frame_json(c.frame))
        .raw("consumers", consumers.str());
    list.raw(o.str());
  }
  JsonObject out;
  out.raw("channels", list.str());
  return out.str();
}

std::string Api::keys() const {
  const core::KvStore kv(*arena_);
  std::vector<std::string> names;
  kv.for_each_key([&](std::string_view key, const core::ValueInfo&) { names.emplace_back(key); });
  std::sort(names.begin(), names.end());
  JsonArray list;
  for (const std::string& name : names) {
    const KeyValue v = read_key(kv, name);
    if (v.status != core::KvStatus::ok) continue;  // deleted meanwhile, or busy: the next poll shows it
    JsonObject o;
    o.text("key", name).text("type", core::value_type_name(v.info.type)).number("version", v.info.version());
    if (v.info.type == core::ValueType::array) o.text("shape", tools::array_shape_text(v.info.array));
    o.number("bytes", v.bytes.size()).raw("value", value_json(v, false));
    list.raw(o.str());
  }
  JsonObject out;
  out.raw("keys", list.str());
  return out.str();
}

core::Result<std::string> Api::key(std::string_view name) const {
  const core::KvStore kv(*arena_);
  const KeyValue v = read_key(kv, name);
  if (v.status != core::KvStatus::ok)
    return core::fail(core::Errc::not_found,
                      fmt::format("key '{}': {}", name, core::kv_status_text(v.status)));
  JsonObject o;
  o.text("key", name).text("type", core::value_type_name(v.info.type)).number("version", v.info.version());
  if (v.info.type == core::ValueType::array) o.text("shape", tools::array_shape_text(v.info.array));
  o.raw("value", value_json(v, true));
  return o.str();
}

std::string Api::mca() const {
  const core::KvStore kv(*arena_);
  std::vector<std::string> bases;
  constexpr std::string_view kSuffix = ".spectrum";
  kv.for_each_key([&](std::string_view key, const core::ValueInfo&) {
    if (key.size() > kSuffix.size() && key.substr(key.size() - kSuffix.size()) == kSuffix)
      bases.emplace_back(key.substr(0, key.size() - kSuffix.size()));
  });
  std::sort(bases.begin(), bases.end());
  JsonArray list;
  for (const std::string& base : bases) {
    const KeyValue spectrum = read_key(kv, base + ".spectrum");
    const KeyValue axis = read_key(kv, base + ".spectrum_axis");
    if (spectrum.status != core::KvStatus::ok) continue;
    const std::vector<std::uint32_t> counts = as_vector<std::uint32_t>(spectrum);  // u32 per bin, native order
    const std::vector<float> centres = axis.status == core::KvStatus::ok ? as_vector<float>(axis) : std::vector<float>{};
    JsonArray c, e;
    for (const std::uint32_t n : counts) c.number(n);
    for (const float x : centres) e.real(x);
    const KeyValue units = read_key(kv, base + ".spectrum_axis_units");
    JsonObject o;
    o.text("name", base)
        .raw("counts", c.str())
        .raw("energy", e.str())
        .text("units", units.status == core::KvStatus::ok
                           ? std::string(reinterpret_cast<const char*>(units.bytes.data()), units.bytes.size())
                           : std::string{})
        .real("live_s", as_double(read_key(kv, base + ".live_s")))
        .real("dead_s", as_double(read_key(kv, base + ".dead_s")))
        .real("accepted", as_double(read_key(kv, base + ".counts")))
        .real("pileups", as_double(read_key(kv, base + ".pileups")))
        .real("underflow", as_double(read_key(kv, base + ".underflow")))  // pulses below the range, never in counts
        .real("overflow", as_double(read_key(kv, base + ".overflow")))    // ... at or above it
        .number("version", spectrum.info.version());
    list.raw(o.str());
  }
  JsonObject out;
  out.raw("mca", list.str());
  return out.str();
}

core::Result<std::string> Api::set(std::string_view body) const {
  const auto bad = [](const std::string& why) { return core::fail(core::Errc::invalid_argument, "set: " + why); };
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return bad("the body is not a JSON object");
  if (!j.contains("key") || !j["key"].is_string()) return bad("\"key\" (a string) is missing");
  if (!j.contains("value")) return bad("\"value\" is missing");
  const std::string key = j["key"].get<std::string>();
  const nlohmann::json& value = j["value"];
  if (!value.is_string() && !value.is_number())
    return bad(fmt::format("key '{}': \"value\" must be a number or a string, not {}", key, value.type_name()));
  const auto settable = [](core::ValueType t) {
    return t == core::ValueType::text || t == core::ValueType::i64 || t == core::ValueType::u64 || t == core::ValueType::f64;
  };
  // A key keeps its type: the value must parse as it. A new key takes the type asked, else the
  // value's own (a JSON integer i64, or u64 past i64; another number f64; a string text).
  core::KvStore kv(*arena_);
  std::optional<core::ValueType> held;
  if (core::ValueView view; kv.view(key, view) == core::KvStatus::ok && view.info().type != core::ValueType::none)
    held = view.info().type;
  if (held && !settable(*held))
    return bad(fmt::format("key '{}' holds {}; only text, i64, u64 and f64 keys are set here", key,
                           core::value_type_name(*held)));
  std::optional<core::ValueType> asked;
  if (j.contains("type")) {
    const std::string name = j["type"].is_string() ? j["type"].get<std::string>() : j["type"].dump();
    asked = tools::parse_value_type(name);
    if (!asked || !settable(*asked)) return bad(fmt::format("type '{}' is not text, i64, u64 or f64", name));
    if (held && *asked != *held)
      return bad(fmt::format("key '{}' holds {}, not {}; a key keeps its type", key, core::value_type_name(*held), name));
  }
  core::ValueType type = core::ValueType::text;
  if (held) type = *held;
  else if (asked) type = *asked;
  else if (value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) type = core::ValueType::u64;
  else if (value.is_number_integer()) type = core::ValueType::i64;
  else if (value.is_number_float()) type = core::ValueType::f64;
  const std::string type_name = core::value_type_name(type);
  if (type != core::ValueType::text && value.is_string() && value.get<std::string>().empty())
    return bad(fmt::format("key '{}' holds {}: an empty string is no number", key, type_name));
  const std::string text = value.is_string() ? value.get<std::string>() : value.dump();
  auto bytes = tools::encode_value(text, type, false);
  if (!bytes) return bad(fmt::format("key '{}' holds {}: {}", key, type_name, bytes.error().what));
  const core::KvStatus status = kv.set_wait(key, *bytes, type);
  if (status != core::KvStatus::ok) return bad(fmt::format("key '{}': {}", key, core::kv_status_text(status)));
  JsonObject o;
  o.text("key", key).text("type", type_name).boolean("ok", true);
  return o.str();
}

}  // namespace weir::serve
