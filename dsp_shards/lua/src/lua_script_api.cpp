#include "lua_script_api.hpp"

#include <algorithm>
#include <cstring>

// Every function here may raise (luaL_error longjmps through it): none may hold an object with a
// non-trivial destructor across a Lua call.
namespace weir::dsp::lua {
namespace {

constexpr const char* kViewType = "weir.view";

enum ViewField : lua_Integer { kCount, kSequence, kRealtimeNs, kMonotonicNs, kFirstSample, kRate, kFlags, kDtype,
                               kSum, kMax, kMin };
constexpr struct {
  const char* name;
  ViewField field;
} kViewFields[] = {{"count", kCount},           {"sequence", kSequence},         {"realtime_ns", kRealtimeNs},
                   {"monotonic_ns", kMonotonicNs}, {"first_sample", kFirstSample}, {"rate", kRate},
                   {"flags", kFlags},           {"dtype", kDtype},               {"sum", kSum},
                   {"max", kMax},               {"min", kMin}};

lua_Integer as_integer(std::uint64_t value) { return static_cast<lua_Integer>(value); }

// The view when argument idx is it; there is only one per state, so identity is the type check.
const ViewData* view_arg(lua_State* L, int idx) {
  const LuaShard* shard = shard_of(L);
  return lua_touserdata(L, idx) == shard->view ? shard->view : nullptr;
}

int weir_sum(lua_State* L);
int weir_max(lua_State* L);
int weir_min(lua_State* L);

// upvalue 1: field name -> ViewField; upvalue 2: the input dtype's name.
int view_index(lua_State* L) {
  const auto* view = static_cast<const ViewData*>(lua_touserdata(L, 1));
  if (lua_type(L, 2) == LUA_TNUMBER) {
    int is_integer = 0;
    const lua_Integer i = lua_tointegerx(L, 2, &is_integer);
    if (is_integer == 0 || i < 1 || i > static_cast<lua_Integer>(view->count)) {
      lua_pushnil(L);  // as a table would past its end
    } else {
      view->ops->push(L, view->samples, static_cast<std::uint32_t>(i - 1));
    }
    return 1;
  }
  lua_pushvalue(L, 2);
  if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNUMBER) {
    return luaL_error(L, "the block view has no field '%s'", luaL_tolstring(L, 2, nullptr));
  }
  switch (static_cast<ViewField>(lua_tointeger(L, -1))) {
    case kCount: lua_pushinteger(L, view->count); break;
    case kSequence: lua_pushinteger(L, as_integer(view->sequence)); break;
    case kRealtimeNs: lua_pushinteger(L, as_integer(view->realtime_ns)); break;
    case kMonotonicNs: lua_pushinteger(L, as_integer(view->monotonic_ns)); break;
    case kFirstSample: lua_pushinteger(L, as_integer(view->first_sample)); break;
    case kRate: lua_pushnumber(L, view->rate_hz); break;
    case kFlags: lua_pushinteger(L, view->flags); break;
    case kDtype: lua_pushvalue(L, lua_upvalueindex(2)); break;
    case kSum: lua_pushcfunction(L, weir_sum); break;
    case kMax: lua_pushcfunction(L, weir_max); break;
    case kMin: lua_pushcfunction(L, weir_min); break;
  }
  return 1;
}

int view_len(lua_State* L) {
  lua_pushinteger(L, static_cast<const ViewData*>(lua_touserdata(L, 1))->count);
  return 1;
}

int view_newindex(lua_State* L) { return luaL_error(L, "the block view is read-only"); }

int view_tostring(lua_State* L) {
  const auto* view = static_cast<const ViewData*>(lua_touserdata(L, 1));
  lua_pushfstring(L, "weir.view(%s, %I samples, block %I)", view->ops->dtype_name, as_integer(view->count),
                  as_integer(view->sequence));
  return 1;
}

// Element i of the table at argument 1 as a number, raising for anything else. Leaves the stack.
lua_Number table_number(lua_State* L, const char* fn, lua_Integer i) {
  lua_rawgeti(L, 1, i);
  int is_number = 0;
  const lua_Number x = lua_tonumberx(L, -1, &is_number);
  if (is_number == 0) return luaL_error(L, "%s: element %I is a %s, not a number", fn, i, luaL_typename(L, -1));
  lua_pop(L, 1);
  return x;
}

int weir_sum(lua_State* L) {
  if (const ViewData* view = view_arg(L, 1)) {
    lua_pushnumber(L, view->count > 0 ? view->ops->sum(view->samples, view->count) : 0.0);
    return 1;
  }
  luaL_argexpected(L, lua_type(L, 1) == LUA_TTABLE, 1, "block view or table");
  const auto n = static_cast<lua_Integer>(lua_rawlen(L, 1));
  lua_Number total = 0.0;
  for (lua_Integer i = 1; i <= n; ++i) total += table_number(L, "weir.sum", i);
  lua_pushnumber(L, total);
  return 1;
}

// The largest or smallest element, as the view or table holds it; nil when empty. NaNs lose.
int extreme(lua_State* L, const char* fn, bool largest) {
  if (const ViewData* view = view_arg(L, 1)) {
    if (view->count == 0) {
      lua_pushnil(L);
    } else {
      const auto best = largest ? view->ops->argmax(view->samples, view->count)
                                : view->ops->argmin(view->samples, view->count);
      view->ops->push(L, view->samples, best);
    }
    return 1;
  }
  luaL_argexpected(L, lua_type(L, 1) == LUA_TTABLE, 1, "block view or table");
  const auto n = static_cast<lua_Integer>(lua_rawlen(L, 1));
  lua_Integer best = 0;
  lua_Number best_value = 0.0;
  for (lua_Integer i = 1; i <= n; ++i) {
    const lua_Number x = table_number(L, fn, i);
    if (best == 0 || best_value != best_value || (largest ? x > best_value : x < best_value)) {
      best = i;
      best_value = x;
    }
  }
  if (best == 0) {
    lua_pushnil(L);
  } else {
    lua_rawgeti(L, 1, best);  // the element itself: an integer stays an integer
  }
  return 1;
}

int weir_max(lua_State* L) { return extreme(L, "weir.max", true); }
int weir_min(lua_State* L) { return extreme(L, "weir.min", false); }

// Output index of the name at argument 1 (upvalue 1: name -> index), raising when undeclared.
std::uint32_t output_arg(lua_State* L, const char* fn) {
  const char* name = luaL_checkstring(L, 1);
  lua_pushvalue(L, 1);
  if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNUMBER) {
    luaL_error(L, "%s: '%s' is not a declared output (see the outputs parameter)", fn, name);
  }
  const auto index = static_cast<std::uint32_t>(lua_tointeger(L, -1));
  lua_pop(L, 1);
  return index;
}

const weir_shard_host* host_or_raise(lua_State* L, const LuaShard& shard, const char* fn) {
  if (shard.host == nullptr) luaL_error(L, "%s: outputs can only be written inside the per-block function", fn);
  return shard.host;
}

int weir_set(lua_State* L) {
  LuaShard* shard = shard_of(L);
  const std::uint32_t index = output_arg(L, "weir.set");
  const OutputDecl& out = shard->outputs[index];
  if (out.kind == OutputKind::channel) {
    return luaL_error(L, "weir.set: '%s' is a channel output; use weir.emit", out.name.c_str());
  }
  const weir_shard_host* host = host_or_raise(L, *shard, "weir.set");
  int rc = 0;
  if (out.kind == OutputKind::key_f64) {
    const double value = luaL_checknumber(L, 2);
    rc = host->set_key(host->self, index, &value, sizeof value);
  } else if (out.kind == OutputKind::key_array) {
    luaL_checktype(L, 2, LUA_TTABLE);
    const std::size_t elements = out.max_bytes / sizeof(double);
    const lua_Unsigned given = lua_rawlen(L, 2);
    if (given != elements) {
      return luaL_error(L, "weir.set: '%s' is an array of %I numbers, not %I", out.name.c_str(), as_integer(elements),
                        as_integer(given));
    }
    for (std::size_t i = 0; i < elements; ++i) {  // into the preallocated scratch: no allocation per block
      lua_rawgeti(L, 2, static_cast<lua_Integer>(i + 1));
      int is_number = 0;
      shard->array_scratch[i] = lua_tonumberx(L, -1, &is_number);
      lua_pop(L, 1);
      if (is_number == 0) {
        return luaL_error(L, "weir.set: '%s' element %I is not a number", out.name.c_str(), as_integer(i + 1));
      }
    }
    rc = host->set_key(host->self, index, shard->array_scratch.data(), out.max_bytes);
  } else {
    std::size_t bytes = 0;
    const char* value = luaL_checklstring(L, 2, &bytes);
    if (bytes > out.max_bytes) {
      return luaL_error(L, "weir.set: %I bytes exceed the %I declared for '%s'", as_integer(bytes),
                        as_integer(out.max_bytes), out.name.c_str());
    }
    rc = host->set_key(host->self, index, value, bytes);
  }
  if (rc != 0) ++shard->counters.keys_busy;
  lua_pushboolean(L, rc == 0);
  return 1;
}

int weir_emit(lua_State* L) {
  LuaShard* shard = shard_of(L);
  const std::uint32_t index = output_arg(L, "weir.emit");
  const OutputDecl& out = shard->outputs[index];
  if (out.kind != OutputKind::channel) {
    return luaL_error(L, "weir.emit: '%s' is a key output; use weir.set", out.name.c_str());
  }
  const weir_shard_host* host = host_or_raise(L, *shard, "weir.emit");
  const ViewData* view = view_arg(L, 2);
  std::uint32_t count = 0;
  if (view != nullptr) {
    count = std::min(view->count, shard->samples_per_block);
  } else {
    luaL_argexpected(L, lua_type(L, 2) == LUA_TTABLE, 2, "block view or table");
    const std::size_t n = lua_rawlen(L, 2);
    if (n > shard->samples_per_block) {
      return luaL_error(L, "weir.emit: %I values exceed the block size %I of '%s'", as_integer(n),
                        as_integer(shard->samples_per_block), out.name.c_str());
    }
    count = static_cast<std::uint32_t>(n);
    for (std::uint32_t i = 0; i < count; ++i) {  // converted before the claim, so a bad element claims nothing
      lua_rawgeti(L, 2, static_cast<lua_Integer>(i) + 1);
      int is_number = 0;
      const lua_Number x = lua_tonumberx(L, -1, &is_number);
      if (is_number == 0) {
        return luaL_error(L, "weir.emit: element %I is a %s, not a number", as_integer(i + 1U), luaL_typename(L, -1));
      }
      shard->scratch[i] = static_cast<float>(x);
      lua_pop(L, 1);
    }
  }
  std::uint32_t capacity = 0;
  auto* samples = static_cast<float*>(host->claim(host->self, index, &capacity));
  if (samples == nullptr) {
    ++shard->counters.emits_dropped;
    lua_pushboolean(L, 0);
    return 1;
  }
  count = std::min(count, capacity);
  if (view != nullptr) {
    view->ops->to_f32(view->samples, count, samples);
  } else {
    std::memcpy(samples, shard->scratch.data(), count * sizeof(float));
  }
  host->publish(host->self, index, count, shard->block->realtime_ns, shard->block->flags);
  lua_pushboolean(L, 1);
  return 1;
}

void make_view(lua_State* L, LuaShard& shard) {
  auto* view = static_cast<ViewData*>(lua_newuserdatauv(L, sizeof(ViewData), 0));
  *view = ViewData{nullptr, 0, 0, 0, 0, 0, 0, shard.rate_hz, sample_ops(shard.input_dtype)};
  luaL_newmetatable(L, kViewType);
  lua_createtable(L, 0, static_cast<int>(std::size(kViewFields)));
  for (const auto& f : kViewFields) {
    lua_pushinteger(L, f.field);
    lua_setfield(L, -2, f.name);
  }
  lua_pushstring(L, view->ops->dtype_name);
  lua_pushcclosure(L, view_index, 2);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, view_len);
  lua_setfield(L, -2, "__len");
  lua_pushcfunction(L, view_newindex);
  lua_setfield(L, -2, "__newindex");
  lua_pushcfunction(L, view_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "__metatable");  // getmetatable(view) gives false; the metatable stays ours
  lua_setmetatable(L, -2);
  shard.view = view;
  shard.view_ref = luaL_ref(L, LUA_REGISTRYINDEX);
}

}  // namespace

void install_script_api(lua_State* L) {
  LuaShard& shard = *shard_of(L);
  make_view(L, shard);

  lua_createtable(L, 0, static_cast<int>(shard.outputs.size()));  // names interned once, found by rawget per call
  for (std::size_t i = 0; i < shard.outputs.size(); ++i) {
    lua_pushinteger(L, static_cast<lua_Integer>(i));
    lua_setfield(L, -2, shard.outputs[i].name.c_str());
  }
  const int names = lua_gettop(L);

  lua_createtable(L, 0, 8);
  lua_pushvalue(L, names);
  lua_pushcclosure(L, weir_set, 1);
  lua_setfield(L, -2, "set");
  lua_pushvalue(L, names);
  lua_pushcclosure(L, weir_emit, 1);
  lua_setfield(L, -2, "emit");
  lua_pushcfunction(L, weir_sum);
  lua_setfield(L, -2, "sum");
  lua_pushcfunction(L, weir_max);
  lua_setfield(L, -2, "max");
  lua_pushcfunction(L, weir_min);
  lua_setfield(L, -2, "min");
  lua_pushinteger(L, shard.samples_per_block);
  lua_setfield(L, -2, "block_size");
  lua_pushnumber(L, shard.rate_hz);
  lua_setfield(L, -2, "rate");
  lua_pushstring(L, shard.view->ops->dtype_name);
  lua_setfield(L, -2, "dtype");
  lua_setglobal(L, "weir");
  lua_settop(L, names - 1);
}

}  // namespace weir::dsp::lua
