// From the declarations a pipeline file made to a typed Pipeline: every key checked for its type
// and range, unknown keys refused with a did-you-mean, each error with the declaration's file:line.
#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string_view>

#include <fmt/format.h>

#include "entry_decls.hpp"
#include "lua_state.hpp"
#include "weir/config/fields.hpp"
#include "weir/config/pipeline.hpp"
#include "weir/core/arena_sizing.hpp"
#include "weir/core/limits.hpp"

namespace weir::config {

using core::Result;

namespace {

constexpr std::array kArenaKeys{"name", "slots", "key_bytes", "value_bytes", "channels", "pool_mib", "channel_mb", "consumers",
                                "vector_dim", "vectors", "numa_node", "mode", "attach", "replace",
                                "runs", "schedule"};
constexpr std::array kScheduleKeys{"start", "stop_after_s", "stop_after_blocks", "channel", "restart", "runs"};
constexpr std::array kChannelKeys{"dtype", "rate", "block", "ring", "units", "labels", "full", "wait_ms", "calibration"};
constexpr std::array kDriverKinds{"sim", "replay", "udp", "scpi", "serial", "lua", "bridge", "kafka", "epics", "tango"};
constexpr std::array kBridgeKinds{"send"};
constexpr std::array kKafkaKinds{"send"};
constexpr std::array kEpicsKinds{"serve"};
constexpr std::array kTangoKinds{"serve"};
constexpr std::array kSimParams{"signal", "seed", "amplitude", "offset", "frequency", "chirp_to", "sweep",
                                "count_rate", "rise", "tau", "noise", "full_scale", "fast"};
constexpr std::array kReplayParams{"file", "speed", "loop"};
constexpr std::array kRecordKinds{"hdf5"};
// A recorder's settings are `weir record` options (flush_ms -> --flush-ms); `weir check` also parses them as
// the recorder will.
constexpr std::array kRecordParams{"flush_ms",    "rotate_mb", "rotate_s",         "compress",      "codec",
                                   "encode_threads", "run", "min_free_mb", "fsync", "fsync_interval_s",
                                   "require_mount", "on_close_timeout_s", "on_close_retry_s", "on_close_retry_max_s"};
// An ann service's settings are `weir ann` options (ef_construction -> --ef-construction).
constexpr std::array kAnnParams{"m", "ef", "ef_construction", "metric", "threads"};
constexpr std::array kKeepKeys{"free_gib", "max_gib", "max_age_days", "after"};
constexpr std::array kPolicies{"lossy", "lossless", "latest"};

struct RawDecl {
  std::string kind, name;
  Origin origin;
  std::map<std::string, Setting> body;
};

constexpr int kMaxDepth = 8;  // tables in tables in a setting

// Reads the value on top of the stack: a string, number or boolean, or a table of those (list items
// and named entries), nested at most kMaxDepth deep. `key` names it in errors ("queries[2].send").
Result<Setting> read_value(lua_State* L, const Origin& origin, const std::string& what, const std::string& key,
                           int depth = 0) {
  Setting v;
  switch (lua_type(L, -1)) {
    case LUA_TNUMBER:
      if (lua_isinteger(L, -1)) {
        v.type = Setting::Type::integer;
        v.integer = lua_tointeger(L, -1);
      } else {
        v.type = Setting::Type::number;
        v.number = lua_tonumber(L, -1);
      }
      return v;
    case LUA_TSTRING: v.text = lua_tostring(L, -1); return v;
    case LUA_TBOOLEAN:
      v.type = Setting::Type::boolean;
      v.boolean = lua_toboolean(L, -1) != 0;
      return v;
    case LUA_TTABLE: {
      if (depth >= kMaxDepth)
        return tl::make_unexpected(error_at(origin, what + ": '" + key + "' nests tables more than " +
                                                                std::to_string(kMaxDepth) + " deep"));
      v.type = Setting::Type::table;
      const auto n = static_cast<lua_Integer>(lua_rawlen(L, -1));
      for (lua_Integer i = 1; i <= n; ++i) {
        lua_rawgeti(L, -1, i);
        auto item = read_value(L, origin, what, key + "[" + std::to_string(i) + "]", depth + 1);
        lua_pop(L, 1);
        if (!item) return item;
        v.items.push_back(std::move(*item));
      }
      lua_pushnil(L);
      while (lua_next(L, -2) != 0) {
        if (lua_type(L, -2) == LUA_TNUMBER && lua_isinteger(L, -2) && lua_tointeger(L, -2) >= 1 &&
            lua_tointeger(L, -2) <= n) {
          lua_pop(L, 1);  // a list item, read above
          continue;
        }
        if (lua_type(L, -2) != LUA_TSTRING) {
          lua_pop(L, 2);
          return tl::make_unexpected(error_at(
              origin, what + ": '" + key + "' mixes a list with keys that are not names (a gap in the list, or a " +
                          "number as a key?)"));
        }
        const std::string name = lua_tostring(L, -2);
        auto entry = read_value(L, origin, what, key + "." + name, depth + 1);
        lua_pop(L, 1);
        if (!entry) {
          lua_pop(L, 1);
          return entry;
        }
        v.fields.emplace(name, std::move(*entry));
      }
      return v;
    }
    case LUA_TFUNCTION:
      return tl::make_unexpected(error_at(
          origin, what + ": '" + key + "' is a function; a pipeline's settings are values: put functions in a script "
                                       "file and name them (script = \"file.lua\")"));
    default:
      return tl::make_unexpected(error_at(
          origin, what + ": '" + key + "' is a " + lua_typename(L, lua_type(L, -1)) + "; settings are strings, numbers, "
                                                                                        "booleans or tables of them"));
  }
}

std::string field_text(lua_State* L, const char* field) {
  lua_getfield(L, -1, field);
  std::string s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
  lua_pop(L, 1);
  return s;
}

Result<std::vector<RawDecl>> read_decls(lua_State* L, int ref) {
  std::vector<RawDecl> out;
  lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
  const auto n = static_cast<lua_Integer>(lua_rawlen(L, -1));
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_rawgeti(L, -1, i);
    RawDecl d;
    d.kind = field_text(L, "kind");
    d.name = field_text(L, "name");
    d.origin.file = field_text(L, "src");
    lua_getfield(L, -1, "line");
    d.origin.line = static_cast<int>(lua_tointeger(L, -1));
    lua_pop(L, 1);
    const std::string what = d.name.empty() ? d.kind : d.kind + " \"" + d.name + "\"";
    lua_getfield(L, -1, "body");
    lua_pushnil(L);
    while (lua_next(L, -2) != 0) {
      if (lua_type(L, -2) != LUA_TSTRING) {
        lua_pop(L, 4);
        return tl::make_unexpected(error_at(d.origin, what + ": settings are name = value; found a value "
                                                                     "without a name (a list where a table was meant?)"));
      }
      const std::string key = lua_tostring(L, -2);
      auto v = read_value(L, d.origin, what, key);
      lua_pop(L, 1);
      if (!v) {
        lua_pop(L, 4);
        return tl::make_unexpected(v.error());
      }
      d.body.emplace(key, std::move(*v));
    }
    lua_pop(L, 2);  // body, declaration
    out.push_back(std::move(d));
  }
  lua_pop(L, 1);
  return out;
}

#define WEIR_TRY(var, expr)                                \
  auto var##_r = (expr);                                   \
  if (!var##_r) return tl::make_unexpected(var##_r.error()); \
  auto var = std::move(*var##_r)

Result<void> load_arena(Fields f, ArenaDecl& a) {
  a.origin = f.origin();
  WEIR_TRY(name, f.text("name"));
  a.name = name;
  core::ArenaOptions& o = a.options;
  o.vector_dim = 0;  // a pipeline has no vectors unless it asks
  const bool slots_given = f.has("slots"), value_bytes_given = f.has("value_bytes");  // reading takes a key
  WEIR_TRY(slots, f.integer("slots", 1, 1 << 24, o.slot_count));
  WEIR_TRY(key_bytes, f.integer("key_bytes", 8, 4096, o.key_bytes));
  WEIR_TRY(value_bytes, f.integer("value_bytes", 8, 1 << 24, o.value_bytes));
  WEIR_TRY(channels, f.integer("channels", 0, 4096, o.channel_capacity));
  // The channel pool: `pool_mib` (`channel_mb` is its older spelling). Unset, resolve() sizes it from the channels.
  if (f.has("pool_mib") && f.has("channel_mb"))
    return tl::make_unexpected(f.error("'pool_mib' and 'channel_mb' name the same channel pool; keep 'pool_mib'"));
  const char* pool_key = f.has("channel_mb") ? "channel_mb" : "pool_mib";
  a.pool_given = f.has(pool_key);
  WEIR_TRY(pool_mib, f.number(pool_key, static_cast<double>(o.channel_data_bytes >> 20)));
  WEIR_TRY(consumers, f.integer("consumers", 1, 65536, o.consumer_capacity));
  WEIR_TRY(vector_dim, f.integer("vector_dim", 0, 65536, 0));
  WEIR_TRY(numa_node, f.integer("numa_node", -1, 1023, -1));
  WEIR_TRY(mode, f.text("mode", "0600"));
  WEIR_TRY(attach, f.boolean("attach", false));
  WEIR_TRY(replace, f.boolean("replace", false));
  if (!(pool_mib > 0 && pool_mib <= 1 << 20))
    return tl::make_unexpected(f.error(fmt::format("'{}' = {} must be more than 0 and at most 1048576 (MiB)", pool_key, pool_mib)));
  char* end = nullptr;
  const unsigned long mode_bits = std::strtoul(mode.c_str(), &end, 8);
  if (mode.empty() || *end != '\0' || (mode_bits & ~0770UL) != 0 || (mode_bits & 0600UL) != 0600UL)
    return tl::make_unexpected(f.error("'mode' = \"" + mode + "\" must be octal like \"0600\" or \"0660\"; the owner "
                                       "reads and writes, others get nothing"));
  o.slot_count = static_cast<std::uint32_t>(slots);
  o.key_bytes = static_cast<std::uint32_t>(key_bytes);
  o.value_bytes = static_cast<std::uint32_t>(value_bytes);
  o.channel_capacity = static_cast<std::uint32_t>(channels);
  o.channel_data_bytes = static_cast<std::uint64_t>(pool_mib * 1048576.0);
  o.consumer_capacity = static_cast<std::uint32_t>(consumers);
  o.vector_dim = static_cast<std::uint32_t>(vector_dim);
  o.numa_node = static_cast<int>(numa_node);
  o.mode = static_cast<std::uint32_t>(mode_bits);
  o.replace_stale = replace;
  a.attach = attach;
  // `vectors = N`: a slot table (and probe window) that holds N keys with vectors, by core's sizing rule;
  // their values default to kVectorValueBytes.
  if (f.has("vectors")) {
    if (slots_given)
      return tl::make_unexpected(f.error("'vectors' sizes the slot table itself; leave 'slots' out"));
    if (vector_dim == 0) return tl::make_unexpected(f.error("'vectors' needs 'vector_dim', the floats per vector"));
    WEIR_TRY(vectors, f.integer("vectors", 1, static_cast<long long>(core::max_sized_keys()), 0));
    if (!value_bytes_given) o.value_bytes = core::kVectorValueBytes;
    auto sized = core::sized_for_keys(static_cast<std::uint64_t>(vectors), o);
    if (!sized) return tl::make_unexpected(f.error(sized.error().what));
    o = *sized;
  }
  WEIR_TRY(runs, f.text("runs", "free"));
  if (runs != "free" && runs != "controlled")
    return tl::make_unexpected(f.error("'runs' = \"" + runs + "\" must be \"free\" (one run per weir run start) or "
                                       "\"controlled\" (runs started and stopped by weir runctl, weir serve or a schedule)"));
  a.controlled_runs = runs == "controlled";
  if (f.has("schedule")) {
    if (!a.controlled_runs) return tl::make_unexpected(f.error("'schedule' starts and stops runs: it needs runs = \"controlled\""));
    WEIR_TRY(table, f.table("schedule", true));
    RunScheduleDecl d;
    d.origin = table.origin();
    WEIR_TRY(start, table.boolean("start", false));
    WEIR_TRY(stop_after_s, table.number("stop_after_s", 0.0));
    WEIR_TRY(stop_after_blocks, table.integer("stop_after_blocks", 0, 1LL << 48, 0));
    WEIR_TRY(channel, table.text("channel", ""));
    WEIR_TRY(restart, table.boolean("restart", false));
    WEIR_TRY(count, table.integer("runs", 0, 1LL << 48, 0));
    if (!(stop_after_s >= 0)) return tl::make_unexpected(table.error("'stop_after_s' must be seconds >= 0"));
    if (restart && stop_after_s == 0 && stop_after_blocks == 0)
      return tl::make_unexpected(table.error("'restart' starts the next run after a scheduled stop: give "
                                             "'stop_after_s' or 'stop_after_blocks'"));
    if (auto ok = table.no_other_keys(kScheduleKeys); !ok) return ok;
    d.start = start;
    d.stop_after_s = stop_after_s;
    d.stop_after_blocks = static_cast<std::uint64_t>(stop_after_blocks);
    d.channel = channel;
    d.restart = restart;
    d.runs = static_cast<std::uint64_t>(count);
    a.schedule = std::move(d);
  }
  return f.no_other_keys(kArenaKeys);
}

Result<void> load_channel(const std::string& name, Fields f, ChannelDecl& c) {
  c.origin = f.origin();
  core::ChannelSpec& s = c.spec;
  s.name = name;
  WEIR_TRY(dtype, f.text("dtype", "f32"));
  auto parsed = core::parse_dtype(dtype);
  if (!parsed) return tl::make_unexpected(f.error(parsed.error().what));
  s.dtype = *parsed;
  WEIR_TRY(rate, f.number("rate"));
  WEIR_TRY(block, f.integer("block", 1, core::kMaxSamplesPerBlock, 4096));
  WEIR_TRY(ring, f.integer("ring", 2, core::kMaxRingBlocks, core::kDefaultRingBlocks));
  WEIR_TRY(units, f.text("units", "V"));
  WEIR_TRY(labels, f.list("labels", false));
  WEIR_TRY(full, f.text("full", "wait"));
  WEIR_TRY(wait_ms, f.number("wait_ms", 1000.0));
  WEIR_TRY(calibration, detail::load_calibration(f, units));
  if (!(rate > 0 && rate < 1e12)) return tl::make_unexpected(f.error("'rate' must be a positive number of Hz"));
  if ((ring & (ring - 1)) != 0) return tl::make_unexpected(f.error("'ring' = " + std::to_string(ring) + " must be a power of two"));
  if (full != "wait" && full != "drop") return tl::make_unexpected(f.error("'full' must be \"wait\" or \"drop\", not \"" + full + "\""));
  if (!(wait_ms >= 0 && wait_ms <= 3.6e6)) return tl::make_unexpected(f.error("'wait_ms' must be 0 to 3600000"));
  s.rate_hz = rate;
  s.samples_per_block = static_cast<std::uint32_t>(block);
  s.ring_blocks = static_cast<std::uint32_t>(ring);
  s.units = units;
  s.labels = labels;
  s.full_policy = full == "drop" ? core::FullPolicy::drop : core::FullPolicy::wait;
  s.wait_timeout_ns = static_cast<std::int64_t>(wait_ms * 1e6);
  c.calibration = calibration;
  return f.no_other_keys(kChannelKeys);
}

Result<void> load_part(const RawDecl& d, Fields& f, PartDecl& p, const std::string& default_name,
                       bool thread_default = false, bool essential_default = false) {
  p.origin = d.origin;
  p.kind = d.name;
  WEIR_TRY(name, f.text("name", default_name));
  WEIR_TRY(thread, f.boolean("thread", thread_default));
  WEIR_TRY(cpu, f.integer("cpu", -1, kMaxCpu, -1));
  WEIR_TRY(restarts, f.integer("restarts", 0, 1000, 5));
  WEIR_TRY(essential, f.boolean("essential", essential_default));
  p.name = name;
  p.essential = essential;
  p.thread = thread;
  p.cpu = static_cast<int>(cpu);
  p.max_restarts = static_cast<int>(restarts);
  return {};
}

Result<std::string> policy_of(Fields& f, const char* fallback) {
  WEIR_TRY(policy, f.text("policy", fallback));
  for (const char* p : kPolicies)
    if (policy == p) return policy;
  return tl::make_unexpected(f.error("'policy' must be lossy, lossless or latest, not \"" + policy + "\""));
}

template <std::size_t N>
Result<void> known_kind(const RawDecl& d, const char* what, const std::array<const char*, N>& kinds) {
  for (const char* k : kinds)
    if (d.name == k) return {};
  std::string list;
  for (const char* k : kinds) list += (list.empty() ? "" : ", ") + std::string(k);
  return tl::make_unexpected(error_at(d.origin, std::string("unknown ") + what + " \"" + d.name + "\"" +
                                                             did_you_mean(d.name, kinds) + "; there are: " + list));
}

Result<void> add_decl(const RawDecl& d, Pipeline& p, bool& have_arena, bool& have_entry) {
  const std::string what = d.name.empty() ? d.kind : d.kind + " \"" + d.name + "\"";
  Fields f(what, d.origin, d.body);
  if (d.kind == "entry") {
    if (have_entry)
      return tl::make_unexpected(error_at(d.origin, "a second entry; a pipeline declares one (the first is at " +
                                                        p.entry.origin.where() + ")"));
    have_entry = true;
    return detail::load_entry(std::move(f), p.entry);
  }
  if (d.kind == "source") {
    if (p.source)
      return tl::make_unexpected(error_at(d.origin, "a second source; a pipeline declares one (the first is at " +
                                                        p.source->origin.where() + ")"));
    SourceDecl s;
    if (auto r = detail::load_source(d.name, std::move(f), s); !r) return r;
    p.source = std::move(s);
    return {};
  }
  if (d.kind == "alert") {
    AlertDecl a;
    if (auto r = detail::load_alert(d.name, std::move(f), a); !r) return r;
    for (const auto& other : p.alerts)
      if (other.name == a.name)
        return tl::make_unexpected(error_at(d.origin, "a second alert named \"" + a.name + "\" (the first is at " +
                                                          other.origin.where() + ")"));
    p.alerts.push_back(std::move(a));
    return {};
  }
  if (d.kind == "arena") {
    if (have_arena)
      return tl::make_unexpected(error_at(d.origin, "a second arena; a pipeline declares one (the first is at " +
                                                                p.arena.origin.where() + ")"));
    have_arena = true;
    return load_arena(std::move(f), p.arena);
  }
  if (d.kind == "channel") {
    ChannelDecl c;
    if (auto r = load_channel(d.name, std::move(f), c); !r) return r;
    p.channels.push_back(std::move(c));
    return {};
  }
  if (d.kind == "driver") {
    if (auto r = known_kind(d, "driver", kDriverKinds); !r) return r;
    DriverDecl dr;
    if (auto r = load_part(d, f, dr, d.name); !r) return r;
    WEIR_TRY(channels, f.list("channels", d.name == "sim"));
    dr.channels = channels;
    if (d.name != "sim" && d.name != "replay") {  // the driver reads its own settings: see driver_fields()
      dr.settings = f.take_rest();
      p.drivers.push_back(std::move(dr));
      return {};
    }
    auto params = d.name == "sim" ? f.rest(kSimParams) : f.rest(kReplayParams);
    if (!params) return tl::make_unexpected(params.error());
    dr.params = *params;
    if (d.name == "replay" && dr.params.count("file") == 0) return tl::make_unexpected(f.error("'file' is required"));
    p.drivers.push_back(std::move(dr));
    return {};
  }
  if (d.kind == "shard") {
    ShardDecl s;
    WEIR_TRY(input, f.text("input"));
    const bool builtin = std::find(kThreadShardKinds.begin(), kThreadShardKinds.end(), d.name) != kThreadShardKinds.end();
    if (auto r = load_part(d, f, s, d.name + ":" + input, builtin); !r) return r;
    s.input = input;
    WEIR_TRY(output, f.text("output", ""));
    WEIR_TRY(policy, policy_of(f, "lossy"));
    if (f.has("batch_ms")) {
      WEIR_TRY(batch_ms, f.number("batch_ms"));
      if (!(batch_ms >= 0 && batch_ms <= 1000))
        return tl::make_unexpected(f.error("'batch_ms' must be 0 (a wake-up per block) to 1000 milliseconds"));
      s.batch_ms = batch_ms;
    }
    s.output = output;
    s.policy = policy;
    auto params = f.rest({});  // the shard itself declares its parameters; check() asks it
    if (!params) return tl::make_unexpected(params.error());
    s.params = *params;
    p.shards.push_back(std::move(s));
    return {};
  }
  if (d.kind == "record") {
    if (auto r = known_kind(d, "recorder", kRecordKinds); !r) return r;
    RecordDecl r;
    if (auto ok = load_part(d, f, r, "record", false, true); !ok) return ok;
    WEIR_TRY(channels, f.list("channels", true));
    WEIR_TRY(keys, f.list("keys", false));
    WEIR_TRY(out, f.text("out"));
    WEIR_TRY(policy, policy_of(f, "lossless"));
    if (f.has("on_close")) {
      const bool bare_text = f.is_text("on_close");
      WEIR_TRY(on_close, f.list("on_close", false));
      if (bare_text || on_close.empty() || on_close.front().empty())
        return tl::make_unexpected(f.error("'on_close' must be a list: the program, then its arguments "
                                           "(on_close = {\"rsync\", \"{path}\", \"host:/data/\"}), never one text"));
      r.on_close = on_close;
    }
    if (f.has("keep")) {
      WEIR_TRY(keep, f.table("keep", true));
      for (const char* key : {"free_gib", "max_gib", "max_age_days"}) {
        WEIR_TRY(limit, keep.number(key, 0.0));
        if (!(limit >= 0) || !std::isfinite(limit))
          return tl::make_unexpected(keep.error(std::string("keep.") + key + " must be a number >= 0 (0: no limit; fractions allowed)"));
        (key == std::string_view("free_gib") ? r.keep.free_gib : key == std::string_view("max_gib") ? r.keep.max_gib : r.keep.max_age_days) = limit;
      }
      WEIR_TRY(after, keep.text("after", ""));
      if (!after.empty() && after != "closed" && after != "handed_over")
        return tl::make_unexpected(keep.error("keep.after '" + after + "': it is \"closed\" or \"handed_over\""));
      if (after == "handed_over" && r.on_close.empty())
        return tl::make_unexpected(keep.error("keep.after = \"handed_over\" needs an on_close hand-off in the same record"));
      if (!r.keep.enabled())
        return tl::make_unexpected(keep.error("keep: set at least one of free_gib, max_gib, max_age_days above 0"));
      if (auto ok = keep.no_other_keys(kKeepKeys); !ok) return ok;
      r.keep.after = after;
    }
    r.channels = channels;
    r.keys = keys;
    r.out = out;
    r.policy = policy;
    auto params = f.rest(kRecordParams);
    if (!params) return tl::make_unexpected(params.error());
    r.params = *params;
    p.records.push_back(std::move(r));
    return {};
  }
  if (d.kind == "bridge") {
    if (auto r = known_kind(d, "bridge", kBridgeKinds); !r) return r;
    BridgeDecl b;
    if (auto ok = load_part(d, f, b, "bridge"); !ok) return ok;
    WEIR_TRY(channels, f.list("channels", true));
    b.channels = channels;
    b.settings = f.take_rest();  // the bridge reads its own settings
    p.bridges.push_back(std::move(b));
    return {};
  }
  if (d.kind == "kafka") {
    if (auto r = known_kind(d, "kafka part", kKafkaKinds); !r) return r;
    KafkaDecl k;
    if (auto ok = load_part(d, f, k, "kafka"); !ok) return ok;
    WEIR_TRY(channels, f.list("channels", false));
    k.channels = channels.empty() ? std::vector<std::string>{"*"} : channels;
    k.settings = f.take_rest();  // kafka_config reads its own settings
    p.kafkas.push_back(std::move(k));
    return {};
  }
  if (d.kind == "epics") {
    if (auto r = known_kind(d, "epics part", kEpicsKinds); !r) return r;
    EpicsDecl e;
    if (auto ok = load_part(d, f, e, "epics"); !ok) return ok;
    e.settings = f.take_rest();  // the EPICS server reads its own settings (epics/config)
    p.epics.push_back(std::move(e));
    return {};
  }
  if (d.kind == "tango") {
    if (auto r = known_kind(d, "tango part", kTangoKinds); !r) return r;
    TangoDecl t;
    if (auto ok = load_part(d, f, t, "tango"); !ok) return ok;
    t.settings = f.take_rest();  // the Tango device server reads its own settings (tango/config)
    p.tangos.push_back(std::move(t));
    return {};
  }
  if (d.kind == "ann") {
    if (d.name.empty())
      return tl::make_unexpected(error_at(d.origin, "ann needs the partition's label: ann \"pulses\" { ... }"));
    AnnDecl a;
    if (auto ok = load_part(d, f, a, "ann:" + d.name, false, false); !ok) return ok;
    a.part = d.name;
    a.kind = "hnsw";
    auto params = f.rest(kAnnParams);
    if (!params) return tl::make_unexpected(params.error());
    a.params = *params;
    p.anns.push_back(std::move(a));
    return {};
  }
  return tl::make_unexpected(error_at(d.origin, "unknown declaration '" + d.kind + "'"));
}

#undef WEIR_TRY

}  // namespace

Result<Pipeline> load_pipeline_text(const std::string& text, const std::string& chunk_name, const LoadLimits& limits) {
  detail::LuaState state(limits);
  if (std::string err = state.run(text, chunk_name); !err.empty())
    return core::fail(core::Errc::invalid_argument, err);
  auto decls = read_decls(state.L, state.decls_ref);
  if (!decls) return tl::make_unexpected(decls.error());
  Pipeline p;
  p.file = chunk_name;
  p.text = text;
  bool have_arena = false, have_entry = false;
  for (const RawDecl& d : *decls)
    if (auto r = add_decl(d, p, have_arena, have_entry); !r) return tl::make_unexpected(r.error());
  if (!have_arena)
    return core::fail(core::Errc::invalid_argument,
                      chunk_name + ":1: no arena declared; start the file with arena { name = \"...\" }");
  return p;
}

Result<Pipeline> load_pipeline(const std::string& path, const LoadLimits& limits) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return core::fail(core::Errc::not_found, "pipeline file '" + path + "': cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return core::fail(core::Errc::io_error, "pipeline file '" + path + "': read failed");
  return load_pipeline_text(text.str(), path, limits);
}

}  // namespace weir::config
