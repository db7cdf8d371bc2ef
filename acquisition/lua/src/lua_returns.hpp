#pragma once
// What a call returned, taken apart: samples for the driver's channels, values for keys.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <lua.hpp>

#include "lua_lane.hpp"
#include "weir/core/kv_store.hpp"

namespace weir::acq::lua_detail {

/// Where returned values go, and what became of them.
struct ReturnSink {
  std::span<Lane> lanes;
  core::KvStore* kv = nullptr;
  std::span<double> array_scratch;  // the largest array key the arena holds, in f64 elements
  std::uint64_t keys_written = 0;
  std::uint64_t keys_busy = 0;
};

/// The time of a call's first sample; sample j of a channel is at + j / rate.
struct CallTime {
  std::uint64_t realtime_ns = 0;
  std::uint64_t monotonic_ns = 0;
};

/// Takes the value on top of L's stack (left there), the first result of a call: nil (nothing), or
/// a table whose string names are channels of the sink (a number, or a list of numbers, appended as
/// samples) or keys (a number: f64; a string: text; a list of numbers: an f64 array). Every usable
/// entry is taken; returns false when something was not, with the first problem written into
/// `problem` as "SCRIPT: FUNCTION: what". A channel whose samples were refused (or every channel,
/// when the value is not a table) is marked (Lane::refuse). Never raises; allocates nothing.
bool take_returns(lua_State* L, ReturnSink& sink, CallTime at, const char* script, const char* function,
                  std::span<char> problem) noexcept;

}  // namespace weir::acq::lua_detail
