// Lua reply parsers: one lua_sandbox state per script, a registry reference per function, and a
// conversion of the function's result into ParsedReply that allocates nothing outside the state's
// bounded heap (numbers within the reply's fixed capacity, text into a buffer reserved up front).
#include "weir/instrument/lua_reply_parser.hpp"

#include <cstdio>
#include <map>
#include <memory>
#include <utility>

#include <fmt/format.h>

#include "weir/lua_sandbox/error_log.hpp"
#include "weir/lua_sandbox/sandbox.hpp"

namespace weir::acq {

namespace {

using lua_sandbox::CallStatus;
using lua_sandbox::Sandbox;

// One loaded script; its parsers share it. Held by shared_ptr: the sandbox never moves.
struct Script {
  Sandbox sandbox;
};

struct PushArguments {
  int ref;
  std::string_view reply;
};

// Pushes the function and the reply; inside lua_pcall, since pushing the string may raise (memory).
int push_call(lua_State* L) {
  const auto* in = static_cast<const PushArguments*>(lua_touserdata(L, 1));
  lua_rawgeti(L, LUA_REGISTRYINDEX, in->ref);
  lua_pushlstring(L, in->reply.data(), in->reply.size());
  return 2;
}

class LuaReplyParser final : public ReplyParser {
 public:
  LuaReplyParser(std::shared_ptr<Script> script, int ref, std::string function)
      : script_(std::move(script)), ref_(ref), function_(std::move(function)) {
    text_.reserve(kLuaReplyTextBytes);
  }

  ParseStatus parse(std::string_view reply, ParsedReply& out) noexcept override {
    Sandbox& sandbox = script_->sandbox;
    lua_State* L = sandbox.state();
    const int base = lua_gettop(L);
    PushArguments args{ref_, reply};
    lua_pushcfunction(L, push_call);
    lua_pushlightuserdata(L, &args);
    if (const int pushed = lua_pcall(L, 1, 2, 0); pushed != LUA_OK) {
      (void)log_.record(sandbox, pushed == LUA_ERRMEM ? CallStatus::out_of_memory : CallStatus::error);
      lua_settop(L, base);
      return ParseStatus::failed;
    }
    const CallStatus status = sandbox.call(1, 1);
    if (status != CallStatus::ok) {
      (void)log_.record(sandbox, status);  // the driver counts every failure and logs once per kind
      lua_settop(L, base);
      return ParseStatus::failed;
    }
    const ParseStatus converted = convert(L, out);
    lua_settop(L, base);
    return converted;
  }

  [[nodiscard]] const char* last_error() const noexcept override { return log_.last_error(); }

 private:
  // The result on top of the stack into `out`; reads without raising or allocating in Lua.
  ParseStatus convert(lua_State* L, ParsedReply& out) noexcept {
    switch (lua_type(L, -1)) {
      case LUA_TNIL: return ParseStatus::mismatch;  // the reply holds no value
      case LUA_TNUMBER:
        out.kind = ReplyKind::number;
        out.number = static_cast<double>(lua_tonumber(L, -1));
        return ParseStatus::ok;
      case LUA_TSTRING: {
        std::size_t bytes = 0;
        const char* text = lua_tolstring(L, -1, &bytes);
        if (bytes > text_.capacity()) return ParseStatus::too_many;
        text_.assign(text, bytes);  // within the reserved capacity: no allocation
        out.kind = ReplyKind::text;
        out.text = text_;
        return ParseStatus::ok;
      }
      case LUA_TTABLE: return convert_list(L, out);
      default: break;
    }
    char text[lua_sandbox::kErrorBytes];
    std::snprintf(text, sizeof text, "%s: %s returned a %s; expected a number, a list of numbers, a string or nil",
                  script_->sandbox.script_path().c_str(), function_.c_str(), luaL_typename(L, -1));
    (void)log_.note(text);
    return ParseStatus::failed;
  }

  ParseStatus convert_list(lua_State* L, ParsedReply& out) noexcept {
    const auto count = static_cast<std::size_t>(lua_rawlen(L, -1));
    out.kind = ReplyKind::numbers;
    out.numbers.resize(out.numbers.capacity());  // within capacity: no allocation
    if (count > out.numbers.size()) {
      out.numbers.clear();
      return ParseStatus::too_many;
    }
    for (std::size_t i = 0; i < count; ++i) {
      const int type = lua_rawgeti(L, -1, static_cast<lua_Integer>(i + 1));
      if (type != LUA_TNUMBER) {
        char text[lua_sandbox::kErrorBytes];
        std::snprintf(text, sizeof text, "%s: %s returned a list whose element %zu is a %s, not a number",
                      script_->sandbox.script_path().c_str(), function_.c_str(), i + 1, lua_typename(L, type));
        (void)log_.note(text);
        out.numbers.clear();
        return ParseStatus::failed;
      }
      out.numbers[i] = static_cast<double>(lua_tonumber(L, -1));
      lua_pop(L, 1);
    }
    out.numbers.resize(count);
    return ParseStatus::ok;
  }

  std::shared_ptr<Script> script_;
  int ref_;
  std::string function_;
  std::string text_;  // a string result (capacity kLuaReplyTextBytes, reserved once)
  lua_sandbox::ErrorLog log_;
};

core::Result<std::shared_ptr<Script>> load_script(const std::string& path, const LuaParserLimits& limits) {
  auto script = std::make_shared<Script>();
  lua_sandbox::SandboxOptions options;
  options.memory_mb = limits.memory_mb;
  options.instructions = limits.instructions;
  options.budget_scope = "on one reply";
  options.script_kind = "reply parser script";
  if (auto ok = script->sandbox.open(options); !ok) return tl::make_unexpected(ok.error());
  if (auto ok = script->sandbox.load_file(path); !ok) return tl::make_unexpected(ok.error());
  return script;
}

}  // namespace

LuaParserLimits lua_parser_limits(const InstrumentOptions& options) noexcept {
  return LuaParserLimits{options.script_memory_mb, options.script_instructions};
}

LuaReplyParserFactory lua_reply_parser_factory(const LuaParserLimits& limits) {
  auto scripts = std::make_shared<std::map<std::string, std::shared_ptr<Script>>>();
  return [limits, scripts](const std::string& path,
                           const std::string& function) -> core::Result<std::unique_ptr<ReplyParser>> {
    std::shared_ptr<Script>& script = (*scripts)[path];
    if (!script) {
      auto loaded = load_script(path, limits);
      if (!loaded) {
        scripts->erase(path);
        return tl::make_unexpected(loaded.error());
      }
      script = std::move(*loaded);
    }
    auto ref = script->sandbox.function_ref(function);
    if (!ref) return tl::make_unexpected(ref.error());
    return std::unique_ptr<ReplyParser>(std::make_unique<LuaReplyParser>(script, *ref, function));
  };
}

core::Result<void> check_lua_replies(const InstrumentOptions& options) {
  const LuaReplyParserFactory factory = lua_reply_parser_factory(lua_parser_limits(options));
  for (std::size_t i = 0; i < options.queries.size(); ++i) {
    const QuerySpec& q = options.queries[i];
    auto spec = parse_reply_spec(q.reply);
    if (!spec || spec->kind != ReplyKind::lua) continue;  // validate() speaks of a bad spec
    if (auto parser = make_reply_parser(*spec, options.script, factory); !parser)
      return core::fail(core::Errc::invalid_argument,
                        fmt::format("query {} ('{}'): reply '{}': {}", i + 1, q.send, q.reply, parser.error().what));
  }
  return {};
}

}  // namespace weir::acq
