// The lua shard's ABI table: configure builds a LuaShard, process calls the script once per block.
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <string>

#include "lua_params.hpp"
#include "lua_script_api.hpp"
#include "lua_shard_state.hpp"
#include "weir/dsp/lua_shard.h"
#include "weir/dsp/sample_convert.hpp"

namespace weir::dsp::lua {
namespace {

using core::Errc;
using core::fail;

LuaShard* shard_cast(weir_shard* handle) noexcept { return reinterpret_cast<LuaShard*>(handle); }
const LuaShard* shard_cast(const weir_shard* handle) noexcept { return reinterpret_cast<const LuaShard*>(handle); }

// The bounded state with the script API installed, the script loaded and its function resolved.
core::Result<void> open_script(LuaShard& shard, std::uint32_t memory_mb, int instructions) {
  lua_sandbox::SandboxOptions options;
  options.memory_mb = memory_mb;
  options.instructions = instructions;
  options.budget_scope = "in one block";
  options.script_kind = "shard script";
  lua_sandbox::Sandbox& sandbox = shard.sandbox;
  if (auto opened = sandbox.open(options, &shard); !opened) return opened;
  auto installed = sandbox.run_protected(
      [](lua_State* L) {
        install_script_api(L);
        return 0;
      },
      "setting up the Lua state");
  if (!installed) return installed;
  if (auto loaded = sandbox.load_file(shard.script_path); !loaded) return tl::make_unexpected(core::with_context(loaded.error(), "script"));
  auto function = sandbox.function_ref(shard.function_name);
  if (!function) return tl::make_unexpected(core::with_context(function.error(), "function"));
  shard.function_ref = *function;
  return {};
}

// Counts a failed block by kind and passes its text to host->log the first time it is seen.
int record_failure(LuaShard& shard, lua_sandbox::CallStatus status, const weir_shard_host* host) noexcept {
  int result = WEIR_LUA_SCRIPT_ERROR;
  switch (status) {
    case lua_sandbox::CallStatus::budget_exceeded:
      result = WEIR_LUA_BUDGET_EXCEEDED;
      ++shard.counters.budget_stops;
      break;
    case lua_sandbox::CallStatus::out_of_memory:
      result = WEIR_LUA_OUT_OF_MEMORY;
      ++shard.counters.memory_errors;
      break;
    case lua_sandbox::CallStatus::error:
    case lua_sandbox::CallStatus::ok: ++shard.counters.script_errors; break;
  }
  if (shard.errors.record(shard.sandbox, status) && host != nullptr && host->log != nullptr) {
    host->log(host->self, 2, shard.errors.last_error());
  }
  return result;
}

void declare_outputs(const LuaShard& shard, weir_shard_config& cfg) {
  cfg.output_count = static_cast<std::uint32_t>(shard.outputs.size());
  for (std::size_t i = 0; i < shard.outputs.size(); ++i) {
    const OutputDecl& decl = shard.outputs[i];
    weir_shard_output& out = cfg.outputs[i];
    out = weir_shard_output{};
    std::snprintf(out.name, sizeof out.name, "%s", decl.name.c_str());  // parse_outputs kept it short enough
    if (decl.kind == OutputKind::channel) {
      out.kind = WEIR_OUTPUT_CHANNEL;
      out.dtype = WEIR_DTYPE_F32;
      out.rate_hz = cfg.input_rate_hz;
      out.samples_per_block = cfg.input_samples_per_block;
    } else if (decl.kind == OutputKind::key_array) {
      out.kind = WEIR_OUTPUT_KEY;
      out.key_type = WEIR_KEY_ARRAY;
      out.max_bytes = decl.max_bytes;
      out.array_dtype = WEIR_DTYPE_F64;
      out.array_rank = 1;
      out.array_dims[0] = static_cast<std::uint32_t>(decl.max_bytes / sizeof(double));
    } else {
      out.kind = WEIR_OUTPUT_KEY;
      out.key_type = decl.kind == OutputKind::key_f64 ? WEIR_KEY_F64 : WEIR_KEY_BYTES;
      out.max_bytes = decl.max_bytes;
    }
  }
}

core::Result<std::unique_ptr<LuaShard>> build(weir_shard_config& cfg) {
  if (cfg.abi_version != WEIR_SHARD_ABI_VERSION || cfg.struct_size != sizeof(weir_shard_config)) {
    return fail(Errc::invalid_argument, "host ABI version " + std::to_string(cfg.abi_version) + " / config size " +
                                            std::to_string(cfg.struct_size) + " differs from the shard's " +
                                            std::to_string(WEIR_SHARD_ABI_VERSION) + " / " +
                                            std::to_string(sizeof(weir_shard_config)));
  }
  const char* input = cfg.input_channel != nullptr ? cfg.input_channel : "?";
  if (sample_ops(cfg.input_dtype) == nullptr) {
    return fail(Errc::invalid_argument, "input '" + std::string(input) + "': dtype " +
                                            std::to_string(cfg.input_dtype) + " is not one the view reads (i8..f64)");
  }
  if (cfg.input_samples_per_block == 0) {
    return fail(Errc::invalid_argument, "input '" + std::string(input) + "': zero samples per block");
  }
  auto params = read_params(cfg);
  if (!params) return tl::make_unexpected(params.error());

  auto shard = std::make_unique<LuaShard>();
  shard->script_path = std::move(params->script);
  shard->function_name = std::move(params->function);
  shard->outputs = std::move(params->outputs);
  shard->scratch.assign(cfg.input_samples_per_block, 0.0F);
  for (const OutputDecl& out : shard->outputs)
    if (out.kind == OutputKind::key_array && out.max_bytes / sizeof(double) > shard->array_scratch.size())
      shard->array_scratch.assign(out.max_bytes / sizeof(double), 0.0);
  shard->samples_per_block = cfg.input_samples_per_block;
  shard->input_dtype = cfg.input_dtype;
  shard->rate_hz = cfg.input_rate_hz;
  if (auto opened = open_script(*shard, params->memory_mb, params->instructions); !opened) {
    return tl::make_unexpected(opened.error());
  }
  declare_outputs(*shard, cfg);
  return shard;
}

weir_shard* configure(weir_shard_config* cfg, char* error, std::size_t error_bytes) {
  const auto refuse = [&](const std::string& what) -> weir_shard* {
    if (error != nullptr && error_bytes > 0) std::snprintf(error, error_bytes, "%s", what.c_str());
    return nullptr;
  };
  if (cfg == nullptr) return refuse("no configuration given");
  try {
    auto shard = build(*cfg);
    if (!shard) return refuse(shard.error().what);
    return reinterpret_cast<weir_shard*>(shard->release());
  } catch (const std::exception& e) {  // std::bad_alloc from the strings and vectors above
    return refuse(std::string("configure: ") + e.what());
  }
}

int process(weir_shard* handle, const weir_shard_block* in, const weir_shard_host* host) noexcept {
  LuaShard& shard = *shard_cast(handle);
  lua_State* L = shard.sandbox.state();
  ++shard.counters.blocks;

  ViewData& view = *shard.view;
  view.samples = in->samples;
  view.count = in->count;
  view.flags = in->flags;
  view.sequence = in->sequence;
  view.realtime_ns = in->realtime_ns;
  view.monotonic_ns = in->monotonic_ns;
  view.first_sample = in->first_sample;
  shard.host = host;
  shard.block = in;

  const int base = lua_gettop(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, shard.function_ref);
  lua_rawgeti(L, LUA_REGISTRYINDEX, shard.view_ref);
  const lua_sandbox::CallStatus status = shard.sandbox.call(1, 0);

  view.samples = nullptr;  // a view kept by the script reads as empty until the next block
  view.count = 0;
  shard.host = nullptr;
  shard.block = nullptr;
  const int result = status == lua_sandbox::CallStatus::ok ? WEIR_LUA_OK : record_failure(shard, status, host);
  lua_settop(L, base);
  return result;
}

void stop(weir_shard* handle) noexcept { delete shard_cast(handle); }

constexpr weir_shard_api kApi = {
    WEIR_SHARD_ABI_VERSION,
    sizeof(weir_shard_api),
    "lua",
    "calls a Lua 5.4 function of a user script once per block; it writes keys and derived channels",
    kParams,
    kParamCount,
    kRealDtypes,
    configure,
    process,
    stop,
    nullptr,  // flush: a script keeps its own state; nothing the host could publish for it
    nullptr,  // idle: a script runs per block
};

}  // namespace
}  // namespace weir::dsp::lua

extern "C" const weir_shard_api* weir_builtin_lua(uint32_t host_abi_version) {
  using namespace weir::dsp::lua;
  if (host_abi_version != WEIR_SHARD_ABI_VERSION) return nullptr;
  return &kApi;
}

extern "C" const char* weir_lua_shard_last_error(const weir_shard* handle) {
  return weir::dsp::lua::shard_cast(handle)->errors.last_error();
}

extern "C" void weir_lua_shard_get_stats(const weir_shard* handle, weir_lua_shard_stats* out) {
  const auto& shard = *weir::dsp::lua::shard_cast(handle);
  const auto& c = shard.counters;
  const auto& heap = shard.sandbox.heap();
  *out = weir_lua_shard_stats{c.blocks,        c.script_errors, c.memory_errors,    c.budget_stops,
                              c.emits_dropped, c.keys_busy,     shard.errors.logged(), heap.used_bytes,
                              heap.peak_bytes, heap.allocations};
}
