// The lua driver: channels attached or created, the script loaded into a bounded sandbox, then one
// call per tick on absolute CLOCK_MONOTONIC deadlines, its returns taken apart into channel blocks
// and keys, every failure counted in the arena and survived.
#include "weir/acq_lua/lua_driver.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>

#include <fmt/core.h>

#include "lua_lane.hpp"
#include "lua_returns.hpp"
#include "weir/core/clock.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/limits.hpp"
#include "weir/lua_sandbox/error_log.hpp"

namespace weir::acq {
namespace {

using lua_detail::CallTime;
using lua_detail::Lane;
using lua_detail::ReturnSink;

constexpr double kNsPerSecond = 1e9;
constexpr double kPeriodTolerance = 1e-9;       // relative: channels "share" a block period within this
constexpr std::int64_t kLuaStopPollNs = 100'000'000;  // a wait looks at the stop flag this often
constexpr std::size_t kProblemBytes = 512;     // a bad return's message

tl::unexpected<core::Error> refuse(const LuaDriverOptions& options, const std::string& why) {
  return core::fail(core::Errc::invalid_argument, "lua driver '" + options.part + "': " + why);
}

std::string num(double value) { return fmt::format("{:g}", value); }

// The counters kept in the arena as <part>.NAME (u64), in this order: the driver's own, then its
// accounting of ticks (calls + late = recorded + driver_error + late).
enum Counter : std::size_t { kCalls, kErrors, kLuaErrors, kOverruns, kMemoryErrors, kBadReturns, kLate, kDropped,
                             kKeysBusy, kRecorded, kDriverError, kLateTicks, kCounterCount };
constexpr std::array<const char*, kCounterCount> kCounterNames = {
    "calls",         "errors",    "lua_errors", "overruns",  "memory_errors",
    "bad_returns",   "late",      "dropped",    "keys_busy", "accounting.recorded",
    "accounting.driver_error", "accounting.late"};

// The counter keys, written when they change.
class CounterKeys {
 public:
  core::Result<void> open(core::KvStore& kv, const std::string& part) {
    kv_ = &kv;
    for (std::size_t i = 0; i < kCounterCount; ++i) {
      const std::string key = part + "." + kCounterNames[i];
      if (const core::KvStatus s = kv.resolve(key, handles_[i], true); s != core::KvStatus::ok)
        return core::fail(core::Errc::invalid_argument, "key '" + key + "': " + core::kv_status_text(s));
      written_[i] = ~std::uint64_t{0};
    }
    const std::string last = part + ".last_error";
    if (const core::KvStatus s = kv.resolve(last, last_error_, true); s != core::KvStatus::ok)
      return core::fail(core::Errc::invalid_argument, "key '" + last + "': " + core::kv_status_text(s));
    last_error("", 0);  // text from the start: a recorder then logs it as text from its first file
    return {};
  }
  /// Writes the values that changed since the last write. A busy slot is retried next time.
  void write(const std::array<std::uint64_t, kCounterCount>& values) noexcept {
    for (std::size_t i = 0; i < kCounterCount; ++i) {
      if (values[i] == written_[i]) continue;
      const std::uint64_t v = values[i];
      if (kv_->set(handles_[i], std::as_bytes(std::span(&v, 1)), core::ValueType::u64) == core::KvStatus::ok)
        written_[i] = v;
    }
  }
  void last_error(const char* text, std::uint32_t value_bytes) noexcept {
    const std::string_view whole(text);
    const std::string_view kept = whole.substr(0, std::min<std::size_t>(whole.size(), value_bytes));
    (void)kv_->set(last_error_, std::as_bytes(std::span(kept.data(), kept.size())), core::ValueType::text);
  }

 private:
  core::KvStore* kv_ = nullptr;
  std::array<core::KeyHandle, kCounterCount> handles_{};
  std::array<std::uint64_t, kCounterCount> written_{};
  core::KeyHandle last_error_{};
};

// What the `weir` table describes: read by install_weir_table inside lua_pcall.
struct ScriptSetup {
  const LuaDriverOptions* options;
  const std::vector<Lane>* lanes;
  double period_s;
};

int install_weir_table(lua_State* L) {
  const auto* setup = lua_sandbox::owner_of<ScriptSetup>(L);
  lua_createtable(L, 0, 4);
  lua_pushstring(L, setup->options->part.c_str());
  lua_setfield(L, -2, "part");
  lua_pushnumber(L, setup->period_s);
  lua_setfield(L, -2, "period");
  lua_pushboolean(L, setup->options->mode == LuaCallMode::per_block ? 1 : 0);
  lua_setfield(L, -2, "per_block");
  lua_createtable(L, 0, static_cast<int>(setup->lanes->size()));
  for (const Lane& lane : *setup->lanes) {
    lua_createtable(L, 0, 3);
    lua_pushnumber(L, lane.rate_hz());
    lua_setfield(L, -2, "rate");
    lua_pushinteger(L, lane.block());
    lua_setfield(L, -2, "block");
    lua_pushstring(L, core::dtype_name(lane.dtype()));
    lua_setfield(L, -2, "dtype");
    lua_setfield(L, -2, lane.name().c_str());
  }
  lua_setfield(L, -2, "channels");
  lua_setglobal(L, "weir");
  return 0;
}

void default_log(void* /*context*/, const char* line) { std::fprintf(stderr, "%s\n", line); }

// Attaches the channels that exist (refusing none: their geometry is taken as it is) and creates
// the missing ones from their specs.
core::Result<std::vector<Lane>> open_lanes(const core::Arena& arena, const LuaDriverOptions& options) {
  std::vector<Lane> lanes;
  lanes.reserve(options.channels.size());
  for (const core::ChannelSpec& spec : options.channels) {
    bool created = false;
    if (!core::find_channel(arena, spec.name)) {
      if (spec.rate_hz <= 0 || spec.samples_per_block == 0)
        return refuse(options, "channel '" + spec.name + "' does not exist in " + arena.location().describe() +
                                   "; declare it in the pipeline or give its rate and block size");
      if (auto made = core::create_channel(arena, spec); !made)
        return tl::make_unexpected(core::with_context(made.error(), "lua driver '" + options.part + "'"));
      created = true;
    }
    auto writer = core::ChannelWriter::open(arena, spec.name);
    if (!writer) return tl::make_unexpected(core::with_context(writer.error(), "lua driver '" + options.part + "'"));
    if (writer->desc().dtype == core::Dtype::c64)
      return refuse(options, "channel '" + spec.name + "' holds complex samples (c64); a script returns real numbers");
    double rate_hz = 0;
    for (const core::ChannelInfo& info : core::list_channels(arena))
      if (info.name == spec.name) rate_hz = info.rate_hz;
    lanes.emplace_back(std::move(*writer), spec.name, rate_hz, created);
  }
  return lanes;
}

// The call period: options.period_s, or the block period its channels share.
core::Result<double> call_period(const LuaDriverOptions& options, const std::vector<Lane>& lanes) {
  if (options.mode == LuaCallMode::period) return options.period_s;
  const double period = static_cast<double>(lanes[0].block()) / lanes[0].rate_hz();
  for (const Lane& lane : lanes) {
    const double other = static_cast<double>(lane.block()) / lane.rate_hz();
    if (std::abs(other - period) > kPeriodTolerance * period)
      return refuse(options, "per = \"block\" needs channels with one block period; '" + lanes[0].name() + "' has " +
                                 num(period) + " s (" + std::to_string(lanes[0].block()) + " samples at " +
                                 num(lanes[0].rate_hz()) + " Hz), '" + lane.name() + "' " + num(other) + " s");
  }
  if (period < kLuaMinPeriodS)
    return refuse(options, "per = \"block\": a block period of " + num(period) + " s is shorter than " +
                               num(kLuaMinPeriodS) + " s");
  return period;
}

}  // namespace

core::Result<void> validate(const LuaDriverOptions& options) {
  if (options.part.empty()) return core::fail(core::Errc::invalid_argument, "lua driver: the part has no name");
  if (options.script.empty()) return refuse(options, "no script: name the .lua file (script = \"dev.lua\")");
  if (options.function.empty()) return refuse(options, "function: empty name");
  if (options.mode == LuaCallMode::period &&
      (!std::isfinite(options.period_s) || options.period_s < kLuaMinPeriodS || options.period_s > kLuaMaxPeriodS))
    return refuse(options, "period must be " + num(kLuaMinPeriodS) + " to " + num(kLuaMaxPeriodS) + " seconds, not " +
                               num(options.period_s));
  if (options.mode == LuaCallMode::per_block && options.channels.empty())
    return refuse(options, "per = \"block\" needs at least one channel to take its block period from");
  for (std::size_t i = 0; i < options.channels.size(); ++i) {
    const std::string& name = options.channels[i].name;
    if (name.empty() || name.size() > core::kMaxNameBytes)
      return refuse(options, fmt::format("channel name '{}' must be 1 to {} bytes", name, core::kMaxNameBytes));
    for (std::size_t j = 0; j < i; ++j)
      if (options.channels[j].name == name) return refuse(options, "channel '" + name + "' is named twice");
  }
  if (options.memory_mb == 0 || options.memory_mb > lua_sandbox::kMaxMemoryMb)
    return refuse(options, fmt::format("memory_mb must be 1 to {}, not {}", lua_sandbox::kMaxMemoryMb, options.memory_mb));
  if (options.instructions < 0) return refuse(options, "instructions must be >= 0 (0: no limit)");
  if (!std::isfinite(options.duration_s) || options.duration_s < 0)
    return refuse(options, "duration must be >= 0 seconds, not " + num(options.duration_s));
  return {};
}

core::Result<LuaDriverReport> run_lua_driver(const core::Arena& arena, const LuaDriverOptions& options,
                                             const std::atomic<bool>& stop, LuaLogFn log, void* log_context) {
  if (auto ok = validate(options); !ok) return tl::make_unexpected(ok.error());
  if (log == nullptr) log = default_log;
  const std::string where = "lua driver '" + options.part + "'";

  auto lanes = open_lanes(arena, options);
  if (!lanes) return tl::make_unexpected(lanes.error());
  auto period_s = call_period(options, *lanes);
  if (!period_s) return tl::make_unexpected(period_s.error());

  ScriptSetup setup{&options, &*lanes, *period_s};
  auto sandbox = std::make_unique<lua_sandbox::Sandbox>();  // its address is kept in the state: it never moves
  lua_sandbox::SandboxOptions limits;
  limits.memory_mb = options.memory_mb;
  limits.instructions = options.instructions;
  limits.script_kind = "driver script";
  if (auto opened = sandbox->open(limits, &setup); !opened)
    return tl::make_unexpected(core::with_context(opened.error(), where));
  if (auto installed = sandbox->run_protected(install_weir_table, "setting up the Lua state"); !installed)
    return tl::make_unexpected(core::with_context(installed.error(), where));
  if (auto loaded = sandbox->load_file(options.script); !loaded)
    return tl::make_unexpected(core::with_context(loaded.error(), where));
  auto function = sandbox->function_ref(options.function);
  if (!function) return tl::make_unexpected(core::with_context(function.error(), where));

  core::KvStore kv(arena);
  CounterKeys keys;
  if (auto opened = keys.open(kv, options.part); !opened) return tl::make_unexpected(core::with_context(opened.error(), where));
  const std::uint32_t value_bytes = arena.geometry().value_bytes;
  std::vector<double> array_scratch(value_bytes / sizeof(double));
  ReturnSink sink{*lanes, &kv, array_scratch, 0, 0};
  lua_sandbox::ErrorLog errors;
  std::array<char, kProblemBytes> problem{};
  std::array<char, lua_sandbox::kErrorBytes + 64> line{};
  bool told_quiet = false;

  LuaDriverReport out;
  std::array<std::uint64_t, kCounterCount> counts{};
  const auto publish_counts = [&] {
    std::uint64_t dropped = 0;
    for (const Lane& lane : *lanes) dropped += lane.report().blocks_dropped;
    counts = {out.calls,      out.errors, out.lua_errors, out.overruns,       out.memory_errors, out.bad_returns,
              out.late,       dropped,    sink.keys_busy, out.calls - out.errors, out.errors,    out.late};
    keys.write(counts);
  };
  publish_counts();

  const bool per_block = options.mode == LuaCallMode::per_block;
  const double period_ns = *period_s * kNsPerSecond;
  const auto at = [period_ns](std::uint64_t k) { return std::llround(static_cast<double>(k) * period_ns); };
  // Call k is due at start + at(k + due_shift): per block, when block k's last sample is in.
  const std::uint64_t due_shift = per_block ? 1 : 0;
  const auto duration_ns = static_cast<std::int64_t>(options.duration_s * kNsPerSecond);
  lua_State* L = sandbox->state();
  const std::int64_t start_ns = core::monotonic_ns();
  const std::int64_t start_realtime_ns = core::realtime_ns();
  std::int64_t end_ns = start_ns;

  for (std::uint64_t k = 0;;) {
    if (stop.load(std::memory_order_relaxed)) {  // a flag: nothing is ordered on it
      out.stopped = true;
      break;
    }
    if (options.max_calls != 0 && out.calls >= options.max_calls) break;
    if (duration_ns > 0) {  // period: calls at times before the duration; per block: blocks that end within it
      if (per_block ? at(k + 1) > duration_ns : at(k) >= duration_ns) break;
    }
    if (core::sleep_until(start_ns + at(k + due_shift), &stop, kLuaStopPollNs) == core::SleepStatus::stopped) {
      out.stopped = true;
      break;
    }
    CallTime t;
    if (per_block) {  // the nominal time of the block's first sample, as a clocked ADC's
      t = {static_cast<std::uint64_t>(start_realtime_ns + at(k)), static_cast<std::uint64_t>(start_ns + at(k))};
    } else {  // when the device was read: now
      t = {static_cast<std::uint64_t>(core::realtime_ns()), static_cast<std::uint64_t>(core::monotonic_ns())};
    }

    const int base = lua_gettop(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, *function);
    lua_pushinteger(L, static_cast<lua_Integer>(out.calls + 1));
    lua_pushnumber(L, static_cast<double>(at(k)) / kNsPerSecond);
    const lua_sandbox::CallStatus status = sandbox->call(2, 1);
    ++out.calls;
    bool log_it = false;
    switch (status) {
      case lua_sandbox::CallStatus::ok:
        if (!lua_detail::take_returns(L, sink, t, options.script.c_str(), options.function.c_str(), problem)) {
          ++out.bad_returns;
          ++out.errors;
          log_it = errors.note(problem.data());
          keys.last_error(errors.last_error(), value_bytes);
        }
        for (Lane& lane : *lanes)  // the channels whose samples it refused got none this tick
          if (lane.take_refused()) lane.miss(1, core::GapReason::driver_error);
        break;
      case lua_sandbox::CallStatus::error:
      case lua_sandbox::CallStatus::out_of_memory:
      case lua_sandbox::CallStatus::budget_exceeded:
        ++out.errors;
        if (status == lua_sandbox::CallStatus::error) ++out.lua_errors;
        if (status == lua_sandbox::CallStatus::out_of_memory) ++out.memory_errors;
        if (status == lua_sandbox::CallStatus::budget_exceeded) ++out.overruns;
        log_it = errors.record(*sandbox, status);
        keys.last_error(errors.last_error(), value_bytes);
        for (Lane& lane : *lanes) lane.miss(1, core::GapReason::driver_error);  // it returned nothing
        break;
    }
    lua_settop(L, base);
    if (log_it) {
      std::snprintf(line.data(), line.size(), "%s: %s", where.c_str(), errors.last_error());
      log(log_context, line.data());
    } else if (out.errors > 0 && errors.logged() == lua_sandbox::kDistinctErrors && !told_quiet) {
      told_quiet = true;
      std::snprintf(line.data(), line.size(), "%s: %u distinct errors logged; further ones are only counted (%s.errors)",
                    where.c_str(), lua_sandbox::kDistinctErrors, options.part.c_str());
      log(log_context, line.data());
    }
    publish_counts();

    // The next call is the next tick, unless the call ended more than a period after it: then the
    // latest tick already due is taken, and the ones in between are skipped, counted.
    end_ns = core::monotonic_ns();
    const std::int64_t since_ns = end_ns - start_ns;
    std::uint64_t next = k + 1;
    if (since_ns > at(next + due_shift)) {
      const auto due = static_cast<std::uint64_t>(std::floor(static_cast<double>(since_ns) / period_ns));
      if (due >= due_shift && due - due_shift > next) {
        out.late += due - due_shift - next;
        for (Lane& lane : *lanes) lane.miss(due - due_shift - next, core::GapReason::late);
        next = due - due_shift;
      }
    }
    k = next;
  }

  for (Lane& lane : *lanes) lane.flush();
  publish_counts();
  out.recorded = out.calls - out.errors;
  out.keys_written = sink.keys_written;
  out.keys_busy = sink.keys_busy;
  out.errors_logged = errors.logged();
  out.elapsed_s = static_cast<double>(end_ns - start_ns) / kNsPerSecond;
  for (const Lane& lane : *lanes) out.channels.push_back(lane.report());
  return out;
}

}  // namespace weir::acq
