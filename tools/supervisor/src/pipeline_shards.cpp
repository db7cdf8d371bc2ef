#include "weir/supervisor/pipeline_shards.hpp"

#include <fmt/format.h>

#include "weir/shard.h"
#include "weir/shard_host/loader.hpp"
#include "weir/shard_host/output_shape.hpp"
#include "weir/shard_host/params.hpp"

namespace weir::supervisor {

namespace {

std::vector<std::string> split_labels(const char* text) {
  std::vector<std::string> out;
  std::string item;
  for (const char* p = text; *p != '\0'; ++p) {
    if (*p == ',') {
      if (!item.empty()) out.push_back(item);
      item.clear();
    } else {
      item += *p;
    }
  }
  if (!item.empty()) out.push_back(item);
  return out;
}

// Loads the shard, checks its parameters and input, configures it for real, and stops it again:
// exactly what `weir shard` will do first, so check() refuses what the host would refuse.
core::Result<std::vector<core::ChannelSpec>> resolve_shard(const config::ShardDecl& s, const core::ChannelSpec& in) {
  const std::string what = fmt::format("shard \"{}\"", s.name);
  auto loaded = shard_host::load_shard(s.kind);
  if (!loaded) return tl::make_unexpected(core::with_context(loaded.error(), what));
  const weir_shard_api& api = loaded->api();
  if ((api.input_dtypes & (1U << static_cast<std::uint32_t>(in.dtype))) == 0)
    return core::fail(core::Errc::invalid_argument,
                      fmt::format("{}: input '{}' is {}, but {} takes {}", what, in.name, core::dtype_name(in.dtype),
                                  s.kind, shard_host::dtype_list(api.input_dtypes)));
  std::vector<shard_host::ParamArg> given(s.params.begin(), s.params.end());
  auto params = shard_host::resolve_params(api, what, given);
  if (!params) return tl::make_unexpected(params.error());
  weir_shard_config cfg{};
  cfg.abi_version = api.abi_version;  // as the host does: a version 2 shard gets the config it knows
  cfg.struct_size = api.abi_version >= 3 ? sizeof(weir_shard_config) : WEIR_SHARD_CONFIG_V2_SIZE;
  cfg.input_frame_elements = in.frame.frame_elements;
  cfg.arena_vector_dim = 0;  // not known here: the host checks a vector ring against the arena
  cfg.instance = s.name.c_str();
  cfg.input_channel = in.name.c_str();
  cfg.input_dtype = static_cast<std::uint32_t>(in.dtype);
  cfg.input_samples_per_block = in.samples_per_block;
  cfg.input_rate_hz = in.rate_hz;
  cfg.input_units = in.units.c_str();
  const std::string base = s.output.empty() ? in.name : s.output;
  cfg.output_base = base.c_str();
  cfg.param_count = (*params)->size();
  cfg.param_names = (*params)->name_array();
  cfg.param_values = (*params)->value_array();
  char error[WEIR_SHARD_ERROR_BYTES] = {};
  weir_shard* instance = api.configure(&cfg, error, sizeof error);
  if (instance == nullptr) return core::fail(core::Errc::invalid_argument, fmt::format("{}: {}", what, error));
  api.stop(instance);
  std::vector<core::ChannelSpec> out;
  for (std::uint32_t i = 0; i < cfg.output_count && i < WEIR_SHARD_MAX_OUTPUTS; ++i) {
    const weir_shard_output& o = cfg.outputs[i];
    if (o.kind != WEIR_OUTPUT_CHANNEL) continue;
    core::ChannelSpec spec;
    spec.name = o.name;
    spec.dtype = static_cast<core::Dtype>(o.dtype);
    spec.rate_hz = o.rate_hz;
    spec.samples_per_block = o.samples_per_block;
    spec.frame = shard_host::frame_shape(o);  // what the host will create: `weir check` shows it
    spec.units = o.units;
    spec.labels = split_labels(o.labels);
    out.push_back(std::move(spec));
  }
  return out;
}

}  // namespace

config::ShardResolver pipeline_shard_resolver() { return resolve_shard; }

}  // namespace weir::supervisor
