#include "lua_returns.hpp"

#include <cstdarg>
#include <cstdio>
#include <string_view>

namespace weir::acq::lua_detail {
namespace {

constexpr double kNsPerSecond = 1e9;

// Keeps the first problem of a call only: the one a user fixes first.
class Problem {
 public:
  Problem(std::span<char> out, const char* script, const char* function) noexcept
      : out_(out), script_(script), function_(function) {}

  [[gnu::format(printf, 2, 3)]] void add(const char* format, ...) noexcept {
    if (!ok_) return;
    ok_ = false;
    if (out_.empty()) return;
    const int head = std::snprintf(out_.data(), out_.size(), "%s: %s: ", script_, function_);
    if (head < 0 || static_cast<std::size_t>(head) >= out_.size()) return;
    std::va_list args;
    va_start(args, format);
    std::vsnprintf(out_.data() + head, out_.size() - static_cast<std::size_t>(head), format, args);
    va_end(args);
  }
  [[nodiscard]] bool ok() const noexcept { return ok_; }

 private:
  std::span<char> out_;
  const char* script_;
  const char* function_;
  bool ok_ = true;
};

// The list at `index` holds only numbers; else names the first element that is not one.
bool all_numbers(lua_State* L, int index, lua_Integer count, const char* what, std::string_view name,
                 Problem& problem) noexcept {
  for (lua_Integer i = 1; i <= count; ++i) {
    const int type = lua_rawgeti(L, index, i);
    lua_pop(L, 1);
    if (type != LUA_TNUMBER) {
      problem.add("%s '%.*s': element %lld is a %s, not a number", what, static_cast<int>(name.size()), name.data(),
                  static_cast<long long>(i), lua_typename(L, type));
      return false;
    }
  }
  return true;
}

void take_samples(lua_State* L, Lane& lane, CallTime at, Problem& problem) noexcept {
  const double step_ns = kNsPerSecond / lane.rate_hz();
  const auto time_of = [&](lua_Integer j) {
    const auto offset = static_cast<std::uint64_t>(static_cast<double>(j) * step_ns);
    return CallTime{at.realtime_ns + offset, at.monotonic_ns + offset};
  };
  const int value = lua_gettop(L);
  switch (lua_type(L, value)) {
    case LUA_TNUMBER: lane.push(static_cast<double>(lua_tonumber(L, value)), at.realtime_ns, at.monotonic_ns); return;
    case LUA_TTABLE: {
      const auto count = static_cast<lua_Integer>(lua_rawlen(L, value));
      if (!all_numbers(L, value, count, "channel", lane.name(), problem)) {
        lane.refuse();
        return;
      }
      for (lua_Integer i = 1; i <= count; ++i) {
        lua_rawgeti(L, value, i);
        const CallTime t = time_of(i - 1);
        lane.push(static_cast<double>(lua_tonumber(L, -1)), t.realtime_ns, t.monotonic_ns);
        lua_pop(L, 1);
      }
      return;
    }
    default:
      lane.refuse();
      problem.add("channel '%s': a %s is not a number or a list of numbers", lane.name().c_str(),
                  luaL_typename(L, value));
  }
}

void count_key(core::KvStatus status, std::string_view key, ReturnSink& sink, Problem& problem) noexcept {
  switch (status) {
    case core::KvStatus::ok: ++sink.keys_written; break;
    case core::KvStatus::busy: ++sink.keys_busy; break;
    case core::KvStatus::not_found:
    case core::KvStatus::full:
    case core::KvStatus::torn:
    case core::KvStatus::key_too_long:
    case core::KvStatus::key_empty:
    case core::KvStatus::value_too_large:
    case core::KvStatus::type_mismatch:
    case core::KvStatus::stale_handle:
    case core::KvStatus::read_only:
      problem.add("key '%.*s': %s", static_cast<int>(key.size()), key.data(), core::kv_status_text(status));
      break;
  }
}

void take_key(lua_State* L, std::string_view key, ReturnSink& sink, Problem& problem) noexcept {
  const int value = lua_gettop(L);
  switch (lua_type(L, value)) {
    case LUA_TNUMBER: count_key(sink.kv->set_f64(key, static_cast<double>(lua_tonumber(L, value))), key, sink, problem); return;
    case LUA_TSTRING: {
      std::size_t bytes = 0;
      const char* text = lua_tolstring(L, value, &bytes);
      count_key(sink.kv->set_text(key, std::string_view(text, bytes)), key, sink, problem);
      return;
    }
    case LUA_TTABLE: {
      const auto count = static_cast<lua_Integer>(lua_rawlen(L, value));
      if (count == 0 || static_cast<std::size_t>(count) > sink.array_scratch.size()) {
        problem.add("key '%.*s': a list of %lld numbers; an array key holds 1 to %zu", static_cast<int>(key.size()),
                    key.data(), static_cast<long long>(count), sink.array_scratch.size());
        return;
      }
      if (!all_numbers(L, value, count, "key", key, problem)) return;
      for (lua_Integer i = 1; i <= count; ++i) {
        lua_rawgeti(L, value, i);
        sink.array_scratch[static_cast<std::size_t>(i - 1)] = static_cast<double>(lua_tonumber(L, -1));
        lua_pop(L, 1);
      }
      core::ArrayShape shape;
      shape.elem = core::Dtype::f64;
      shape.rank = 1;
      shape.dims = {static_cast<std::uint32_t>(count), 0};
      const auto data = std::as_bytes(sink.array_scratch.first(static_cast<std::size_t>(count)));
      count_key(sink.kv->set_array(key, shape, data), key, sink, problem);
      return;
    }
    default:
      problem.add("key '%.*s': a %s is not a number, a string or a list of numbers", static_cast<int>(key.size()),
                  key.data(), luaL_typename(L, value));
  }
}

}  // namespace

bool take_returns(lua_State* L, ReturnSink& sink, CallTime at, const char* script, const char* function,
                  std::span<char> problem_text) noexcept {
  Problem problem(problem_text, script, function);
  const int result = lua_gettop(L);
  const int type = lua_type(L, result);
  if (type == LUA_TNIL || type == LUA_TNONE) return true;
  if (type != LUA_TTABLE) {
    for (Lane& lane : sink.lanes) lane.refuse();
    problem.add("returned a %s; return a table of channel samples and key values, or nil", lua_typename(L, type));
    return false;
  }
  if (lua_checkstack(L, 4) == 0) {  // fails only when the heap is full; it raises nothing
    for (Lane& lane : sink.lanes) lane.refuse();
    problem.add("no room on the Lua stack to read the returned table");
    return false;
  }
  lua_pushnil(L);
  while (lua_next(L, result) != 0) {  // name at -2, value at -1
    if (lua_type(L, -2) != LUA_TSTRING) {  // lua_tolstring would turn a number name into a string in place
      problem.add("the returned table has a %s as a name; name channels and keys with strings",
                  luaL_typename(L, -2));
    } else {
      std::size_t bytes = 0;
      const char* text = lua_tolstring(L, -2, &bytes);
      const std::string_view name(text, bytes);
      Lane* lane = nullptr;
      for (Lane& l : sink.lanes)
        if (l.name() == name) lane = &l;
      if (lane != nullptr) {
        take_samples(L, *lane, at, problem);
      } else {
        take_key(L, name, sink, problem);
      }
    }
    lua_pop(L, 1);
  }
  return problem.ok();
}

}  // namespace weir::acq::lua_detail
