#include "weir/acq_lua/lua_driver_config.hpp"

#include <array>
#include <filesystem>
#include <string>

#include "weir/config/fields.hpp"

namespace weir::acq {
namespace {

constexpr std::array<const char*, 7> kKnownKeys = {"script", "call", "function", "period", "per", "memory_mb", "instructions"};

}  // namespace

core::Result<LuaDriverOptions> lua_driver_options(const config::DriverDecl& decl) {
  config::Fields fields = config::driver_fields(decl);
  LuaDriverOptions o;
  o.part = decl.name;

  auto script = fields.text("script");
  if (!script) return tl::make_unexpected(script.error());
  if (script->empty()) return tl::make_unexpected(fields.error("'script' is empty: name the .lua file"));
  std::filesystem::path path(*script);
  if (path.is_relative()) path = std::filesystem::path(decl.origin.file).parent_path() / path;
  o.script = path.lexically_normal().string();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(o.script, ec))
    return tl::make_unexpected(fields.error("script '" + o.script + "' is not a readable file"));

  // `call`: `function` is a Lua keyword, so a pipeline can only write it as ["function"].
  if (fields.has("call") && fields.has("function"))
    return tl::make_unexpected(fields.error("give call or [\"function\"], not both"));
  auto function = fields.text(fields.has("function") ? "function" : "call", std::string(kLuaDefaultFunction));
  if (!function) return tl::make_unexpected(function.error());
  if (function->empty()) return tl::make_unexpected(fields.error("'call' is empty: name the function to call"));
  o.function = *function;

  const bool has_period = fields.has("period");
  auto per = fields.text("per", std::string());
  if (!per) return tl::make_unexpected(per.error());
  if (!per->empty() && *per != "block")
    return tl::make_unexpected(fields.error("'per' = \"" + *per + "\": the only choice is \"block\" (else give period)"));
  if (*per == "block") {
    if (has_period) return tl::make_unexpected(fields.error("give period = SECONDS or per = \"block\", not both"));
    o.mode = LuaCallMode::per_block;
  } else {
    if (!has_period)
      return tl::make_unexpected(fields.error("say when to call " + o.function + ": period = SECONDS or per = \"block\""));
    auto period = fields.number("period");
    if (!period) return tl::make_unexpected(period.error());
    o.period_s = *period;
  }

  auto memory_mb = fields.integer("memory_mb", 1, lua_sandbox::kMaxMemoryMb, lua_sandbox::kDefaultMemoryMb);
  if (!memory_mb) return tl::make_unexpected(memory_mb.error());
  o.memory_mb = static_cast<std::uint32_t>(*memory_mb);
  auto instructions = fields.integer("instructions", 0, lua_sandbox::kMaxInstructions, lua_sandbox::kDefaultInstructions);
  if (!instructions) return tl::make_unexpected(instructions.error());
  o.instructions = static_cast<int>(*instructions);
  if (auto ok = fields.no_other_keys(kKnownKeys); !ok) return tl::make_unexpected(ok.error());

  for (const std::string& name : decl.channels) {
    core::ChannelSpec spec;
    spec.name = name;
    spec.rate_hz = 0;  // attach only, unless the pipeline's declaration is known
    spec.samples_per_block = 0;
    o.channels.push_back(spec);
  }
  if (auto ok = validate(o); !ok) return tl::make_unexpected(config::error_at(decl.origin, ok.error().what));
  return o;
}

core::Result<LuaDriverOptions> lua_driver_options(const config::Pipeline& pipeline, const config::DriverDecl& decl) {
  auto o = lua_driver_options(decl);
  if (!o) return o;
  for (core::ChannelSpec& spec : o->channels)
    for (const config::ChannelDecl& c : pipeline.channels)
      if (c.spec.name == spec.name) spec = c.spec;
  return o;
}

core::Result<void> check_lua_driver(const config::Pipeline& pipeline, const config::DriverDecl& decl) {
  auto options = lua_driver_options(pipeline, decl);
  if (!options) return tl::make_unexpected(options.error());
  return {};
}

}  // namespace weir::acq
