#include "lua_params.hpp"

#include <charconv>
#include <cstring>
#include <string>
#include <string_view>

namespace weir::dsp::lua {

// The one place the defaults live (the README's table repeats them for readers).
const weir_shard_param kParams[kParamCount] = {
    {"script", WEIR_PARAM_TEXT, 0, nullptr, 0, 0, nullptr, "path of the .lua file to run"},
    {"function", WEIR_PARAM_TEXT, 0, "process", 0, 0, nullptr,
     "global function of the script called once per block with the block's view"},
    {"outputs", WEIR_PARAM_TEXT, 0, "", 0, 0, nullptr,
     "what the script may write: key:NAME (f64), keybytes:NAME:MAXBYTES, array:NAME:N (N f64 elements), "
     "channel:NAME (f32), comma-separated"},
    {"memory_mb", WEIR_PARAM_INT, 0, "64", 1, static_cast<double>(lua_sandbox::kMaxMemoryMb), nullptr,
     "Lua heap limit in MiB; an allocation past it fails the block"},
    {"instructions", WEIR_PARAM_INT, 0, "10000000", 0, static_cast<double>(lua_sandbox::kMaxInstructions), nullptr,
     "Lua instructions one block may run before it is stopped; 0: unlimited"},
};

namespace {

using core::Errc;
using core::fail;

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t");
  return s.substr(first, last - first + 1);
}

// The host's value for `name`, else the declared default; nullptr when neither exists.
const char* param_text(const weir_shard_config& cfg, const weir_shard_param& param) {
  for (std::uint32_t i = 0; i < cfg.param_count; ++i) {
    if (cfg.param_names[i] != nullptr && std::strcmp(cfg.param_names[i], param.name) == 0) {
      if (cfg.param_values[i] != nullptr) return cfg.param_values[i];
    }
  }
  return param.default_value;
}

core::Result<std::int64_t> int_param(const weir_shard_param& param, const char* text) {
  const std::string_view s = trim(text);
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || ec != std::errc{} || end != s.data() + s.size()) {
    return fail(Errc::invalid_argument,
                "parameter '" + std::string(param.name) + "': '" + std::string(s) + "' is not an integer");
  }
  if (static_cast<double>(value) < param.min || static_cast<double>(value) > param.max) {
    return fail(Errc::invalid_argument, "parameter '" + std::string(param.name) + "': " +
                                            std::to_string(value) + " is outside [" +
                                            std::to_string(static_cast<std::int64_t>(param.min)) + ", " +
                                            std::to_string(static_cast<std::int64_t>(param.max)) + "]");
  }
  return value;
}

core::Result<void> check_name(std::string_view name, const std::string& where) {
  if (name.empty()) return fail(Errc::invalid_argument, where + ": empty name");
  if (name.size() >= WEIR_SHARD_NAME_BYTES) {
    return fail(Errc::invalid_argument, where + ": name longer than " +
                                            std::to_string(WEIR_SHARD_NAME_BYTES - 1) + " bytes");
  }
  if (name.find_first_of(" \t:,") != std::string_view::npos) {
    return fail(Errc::invalid_argument, where + ": name '" + std::string(name) + "' holds a blank or ':'");
  }
  return {};
}

core::Result<OutputDecl> parse_one(std::string_view entry, const std::string& where) {
  const auto colon = entry.find(':');
  if (colon == std::string_view::npos) {
    return fail(Errc::invalid_argument, where + ": expected KIND:NAME (key, keybytes, array or channel)");
  }
  const std::string_view kind = entry.substr(0, colon);
  std::string_view rest = entry.substr(colon + 1);
  OutputDecl out{std::string(rest), OutputKind::channel, 0};
  if (kind == "key") {
    out.kind = OutputKind::key_f64;
    out.max_bytes = sizeof(double);
  } else if (kind == "channel") {
    out.kind = OutputKind::channel;
  } else if (kind == "keybytes" || kind == "array") {
    const bool array = kind == "array";
    const char* count_name = array ? "N" : "MAXBYTES";
    const std::uint64_t most = array ? kMaxKeyBytes / sizeof(double) : kMaxKeyBytes;
    const auto last = rest.rfind(':');
    if (last == std::string_view::npos) {
      return fail(Errc::invalid_argument, where + ": expected " + std::string(kind) + ":NAME:" + count_name);
    }
    const std::string_view size = rest.substr(last + 1);
    std::uint64_t count = 0;
    const auto [end, ec] = std::from_chars(size.data(), size.data() + size.size(), count);
    if (size.empty() || ec != std::errc{} || end != size.data() + size.size() || count == 0 || count > most) {
      return fail(Errc::invalid_argument, where + ": " + count_name + " '" + std::string(size) +
                                              "' is not an integer in [1, " + std::to_string(most) + "]");
    }
    rest = rest.substr(0, last);
    out = OutputDecl{std::string(rest), array ? OutputKind::key_array : OutputKind::key_bytes,
                     array ? count * sizeof(double) : count};
  } else {
    return fail(Errc::invalid_argument,
                where + ": unknown kind '" + std::string(kind) + "' (expected key, keybytes, array or channel)");
  }
  if (auto ok = check_name(rest, where); !ok) return tl::make_unexpected(ok.error());
  return out;
}

}  // namespace

core::Result<std::vector<OutputDecl>> parse_outputs(std::string_view text) {
  std::vector<OutputDecl> outputs;
  if (trim(text).empty()) return outputs;
  std::size_t index = 0;
  while (true) {
    const auto comma = text.find(',');
    const std::string_view entry = trim(text.substr(0, comma));
    ++index;
    const std::string where = "outputs: entry " + std::to_string(index) + " '" + std::string(entry) + "'";
    auto decl = parse_one(entry, where);
    if (!decl) return tl::make_unexpected(decl.error());
    for (const OutputDecl& other : outputs) {
      if (other.name == decl->name) return fail(Errc::invalid_argument, where + ": name declared twice");
    }
    if (outputs.size() == WEIR_SHARD_MAX_OUTPUTS) {
      return fail(Errc::invalid_argument, where + ": more than " + std::to_string(WEIR_SHARD_MAX_OUTPUTS) + " outputs");
    }
    outputs.push_back(std::move(*decl));
    if (comma == std::string_view::npos) break;
    text = text.substr(comma + 1);
  }
  return outputs;
}

core::Result<ShardParams> read_params(const weir_shard_config& cfg) {
  ShardParams params;
  const char* script = param_text(cfg, kParams[kParamScript]);
  if (script == nullptr || trim(script).empty()) {
    return fail(Errc::invalid_argument, "parameter 'script' is required: the path of the .lua file to run");
  }
  params.script = std::string(trim(script));

  const char* function = param_text(cfg, kParams[kParamFunction]);
  params.function = function != nullptr ? std::string(trim(function)) : std::string();
  if (params.function.empty()) return fail(Errc::invalid_argument, "parameter 'function': empty name");

  const char* outputs = param_text(cfg, kParams[kParamOutputs]);
  auto decls = parse_outputs(outputs != nullptr ? outputs : "");
  if (!decls) return tl::make_unexpected(decls.error());
  params.outputs = std::move(*decls);

  auto memory_mb = int_param(kParams[kParamMemoryMb], param_text(cfg, kParams[kParamMemoryMb]));
  if (!memory_mb) return tl::make_unexpected(memory_mb.error());
  params.memory_mb = static_cast<std::uint32_t>(*memory_mb);

  auto instructions = int_param(kParams[kParamInstructions], param_text(cfg, kParams[kParamInstructions]));
  if (!instructions) return tl::make_unexpected(instructions.error());
  params.instructions = static_cast<int>(*instructions);
  return params;
}

}  // namespace weir::dsp::lua
