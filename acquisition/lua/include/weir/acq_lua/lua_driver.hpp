#pragma once
// The lua driver: a user's Lua function, called on a period or once per block, returns samples for
// its channels and values for keys. The script runs in weir::lua_sandbox's bounded state (heap and
// instruction limits), and every failure is counted in the arena and survived.
// Script interface: acquisition/lua/README.md.
//
// Pacing: call k (from 0) is due at start + k * period on CLOCK_MONOTONIC (core::sleep_until), never
// relative to when the previous call ended, so nothing drifts. A call that ends past later deadlines
// skips them (counted in <part>.late); the next call is on the same grid.
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "weir/core/arena.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/error.hpp"
#include "weir/lua_sandbox/sandbox.hpp"

namespace weir::acq {

inline constexpr double kLuaMinPeriodS = 1e-4;     // fastest call period the driver accepts
inline constexpr double kLuaMaxPeriodS = 86400.0;  // slowest: one call a day
inline constexpr const char* kLuaDefaultFunction = "acquire";

enum class LuaCallMode : std::uint8_t {
  period,     // every period_s seconds
  per_block,  // once per block period (block / rate) of the channels, which must all share it
};

struct LuaDriverOptions {
  std::string part = "lua";                      // names the counter keys (<part>.calls ...) and messages
  std::string script;                            // path of the .lua file, loaded as text
  std::string function = kLuaDefaultFunction;    // the global function called
  LuaCallMode mode = LuaCallMode::period;
  double period_s = 1.0;                         // period mode only
  /// The channels it writes. One that exists is attached as it is (its dtype, block and rate); a
  /// missing one is created from its spec, which then needs a rate and a block size.
  std::vector<core::ChannelSpec> channels;
  std::uint32_t memory_mb = lua_sandbox::kDefaultMemoryMb;
  int instructions = lua_sandbox::kDefaultInstructions;  // per call; 0: unlimited
  double duration_s = 0;                         // stop after this much time (0: when stopped)
  std::uint64_t max_calls = 0;                   // stop after this many calls (0: no limit)
};

/// What one channel got.
struct LuaChannelReport {
  std::string name;
  bool created = false;
  std::uint64_t samples = 0;          // samples the script returned for it
  std::uint64_t blocks_published = 0; // full blocks, and the last partial one at the end
  std::uint64_t blocks_dropped = 0;   // claims a full lossless reader refused: dropped at the source
  std::uint64_t samples_dropped = 0;  // the samples those blocks would have held
  std::uint64_t saturated = 0;        // integer channels: samples clipped to the type's range (NaN: 0)
  std::uint64_t gap_blocks = 0;       // one per call that failed to feed it, or tick skipped late
};

/// What a run did; the same counts are in the arena's keys while it runs.
struct LuaDriverReport {
  std::vector<LuaChannelReport> channels;
  std::uint64_t calls = 0;
  std::uint64_t errors = 0;         // failed calls, of every kind below
  std::uint64_t lua_errors = 0;     // runtime errors, error(), stack overflows
  std::uint64_t overruns = 0;       // calls stopped by the instruction budget
  std::uint64_t memory_errors = 0;  // calls stopped by the heap limit
  std::uint64_t bad_returns = 0;    // calls whose returned value was (partly) unusable
  std::uint64_t late = 0;           // deadlines skipped because a call ended after them
  // Every tick is a call or skipped late, and every call recorded or failed: calls + late =
  // recorded + driver_error + late, in <part>.accounting.{recorded,driver_error,late}.
  std::uint64_t recorded = 0;       // calls that did not fail (calls - errors)
  std::uint64_t keys_written = 0;
  std::uint64_t keys_busy = 0;      // key writes another writer held off (EAGAIN): skipped
  std::uint32_t errors_logged = 0;  // distinct messages written to the log
  double elapsed_s = 0;
  bool stopped = false;             // ended by the stop flag
};

/// Checks the options without touching an arena or the script: part and function named, a script
/// path, the mode's period, channel names distinct, limits in range. Thread: any. Fails naming the
/// part and the setting.
[[nodiscard]] core::Result<void> validate(const LuaDriverOptions& options);

/// Where the driver writes its log lines (one per distinct error, and a start line); stderr when
/// null. Called on the driver's thread.
using LuaLogFn = void (*)(void* context, const char* line);

/// Attaches or creates the channels and becomes their writer, opens the sandbox and loads the
/// script (with the `weir` table describing the part and its channels), then calls the function
/// until max_calls, duration_s or `stop`. The keys <part>.calls, .errors, .lua_errors, .overruns,
/// .memory_errors, .bad_returns, .late, .dropped, .keys_busy, .accounting.recorded,
/// .accounting.driver_error, .accounting.late (u64) and .last_error (text) are kept current. A call
/// that raises leaves a gap block (driver_error) in every channel, a bad return in each channel whose
/// samples it refused, and ticks skipped late one each (late) in every channel. A partly filled
/// block is published when it stops, and before a gap. Fails before the first call for a
/// cold-path problem (a channel another process writes, a script that does not load: `file:line:
/// message`, a missing function), naming the part. Thread: any one; `stop` from anywhere.
[[nodiscard]] core::Result<LuaDriverReport> run_lua_driver(const core::Arena& arena, const LuaDriverOptions& options,
                                                           const std::atomic<bool>& stop, LuaLogFn log = nullptr,
                                                           void* log_context = nullptr);

}  // namespace weir::acq
