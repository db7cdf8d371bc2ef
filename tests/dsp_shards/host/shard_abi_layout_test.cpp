// The shard ABI's binary layout, spelled as literals on purpose: any change to weir/shard.h's structs
// fails here, and must come with a new WEIR_SHARD_ABI_VERSION (and new literals) in the same commit.
#include <doctest/doctest.h>

#include <cstddef>
#include <type_traits>

#include "weir/shard.h"

TEST_SUITE("shard_host.abi_layout") {

TEST_CASE("the shard ABI is version 3, loading version 2 too, with its limits") {
  CHECK(WEIR_SHARD_ABI_VERSION == 3U);
  CHECK(WEIR_SHARD_ABI_OLDEST == 2U);
  CHECK(WEIR_OUTPUT_VECTORS == 3);
  CHECK(WEIR_VECTOR_META_WORDS == 4U);
  CHECK(WEIR_SHARD_MAX_OUTPUTS == 32U);
  CHECK(WEIR_SHARD_MAX_PARAMS == 32U);
  CHECK(WEIR_SHARD_NAME_BYTES == 64U);
  CHECK(WEIR_SHARD_ERROR_BYTES == 512U);
  CHECK(WEIR_DTYPE_I8 == 1);
  CHECK(WEIR_DTYPE_C64 == 10);
  CHECK(WEIR_KEY_F64 == 5);
  CHECK(WEIR_KEY_ARRAY == 7);
}

TEST_CASE("every ABI struct has the size and field offsets shards were built against") {
  static_assert(std::is_standard_layout_v<weir_shard_param> && std::is_standard_layout_v<weir_shard_config>);
  static_assert(std::is_standard_layout_v<weir_shard_axis>);
  CHECK(sizeof(weir_shard_param) == 56);
  CHECK(offsetof(weir_shard_param, type) == 8);
  CHECK(offsetof(weir_shard_param, reserved) == 12);
  CHECK(offsetof(weir_shard_param, default_value) == 16);
  CHECK(offsetof(weir_shard_param, min) == 24);
  CHECK(offsetof(weir_shard_param, max) == 32);
  CHECK(offsetof(weir_shard_param, choices) == 40);
  CHECK(offsetof(weir_shard_param, help) == 48);

  CHECK(sizeof(weir_shard_axis) == 80);
  CHECK(offsetof(weir_shard_axis, name) == 0);
  CHECK(offsetof(weir_shard_axis, units) == 32);
  CHECK(offsetof(weir_shard_axis, start) == 64);
  CHECK(offsetof(weir_shard_axis, step) == 72);

  CHECK(sizeof(weir_shard_output) == 360);
  CHECK(offsetof(weir_shard_output, kind) == 64);
  CHECK(offsetof(weir_shard_output, dtype) == 68);
  CHECK(offsetof(weir_shard_output, rate_hz) == 72);
  CHECK(offsetof(weir_shard_output, samples_per_block) == 80);
  CHECK(offsetof(weir_shard_output, key_type) == 84);
  CHECK(offsetof(weir_shard_output, max_bytes) == 88);
  CHECK(offsetof(weir_shard_output, units) == 96);
  CHECK(offsetof(weir_shard_output, labels) == 128);
  CHECK(offsetof(weir_shard_output, frame_elements) == 256);
  CHECK(offsetof(weir_shard_output, array_dtype) == 260);
  CHECK(offsetof(weir_shard_output, array_rank) == 264);
  CHECK(offsetof(weir_shard_output, array_dims) == 268);
  CHECK(offsetof(weir_shard_output, capacity) == 276);
  CHECK(offsetof(weir_shard_output, axis) == 280);

  CHECK(sizeof(weir_shard_config) == 11616);
  CHECK(WEIR_SHARD_CONFIG_V2_SIZE == 11608);
  CHECK(offsetof(weir_shard_config, input_frame_elements) == 11608);
  CHECK(offsetof(weir_shard_config, arena_vector_dim) == 11612);
  CHECK(offsetof(weir_shard_config, struct_size) == 4);
  CHECK(offsetof(weir_shard_config, instance) == 8);
  CHECK(offsetof(weir_shard_config, input_channel) == 16);
  CHECK(offsetof(weir_shard_config, input_dtype) == 24);
  CHECK(offsetof(weir_shard_config, input_samples_per_block) == 28);
  CHECK(offsetof(weir_shard_config, input_rate_hz) == 32);
  CHECK(offsetof(weir_shard_config, input_units) == 40);
  CHECK(offsetof(weir_shard_config, output_base) == 48);
  CHECK(offsetof(weir_shard_config, param_count) == 56);
  CHECK(offsetof(weir_shard_config, param_names) == 64);
  CHECK(offsetof(weir_shard_config, param_values) == 72);
  CHECK(offsetof(weir_shard_config, output_count) == 80);
  CHECK(offsetof(weir_shard_config, outputs) == 88);

  CHECK(sizeof(weir_shard_block) == 48);
  CHECK(offsetof(weir_shard_block, count) == 8);
  CHECK(offsetof(weir_shard_block, flags) == 12);
  CHECK(offsetof(weir_shard_block, sequence) == 16);
  CHECK(offsetof(weir_shard_block, realtime_ns) == 24);
  CHECK(offsetof(weir_shard_block, monotonic_ns) == 32);
  CHECK(offsetof(weir_shard_block, first_sample) == 40);

  CHECK(sizeof(weir_shard_host) == 48);
  CHECK(offsetof(weir_shard_host, put_vector) == 40);

  CHECK(sizeof(weir_vector_meta) == 32);
  CHECK(offsetof(weir_vector_meta, realtime_ns) == 0);
  CHECK(offsetof(weir_vector_meta, sequence) == 8);
  CHECK(offsetof(weir_vector_meta, frame) == 16);
  CHECK(offsetof(weir_vector_meta, first_sample) == 24);
  CHECK(offsetof(weir_shard_host, claim) == 8);
  CHECK(offsetof(weir_shard_host, publish) == 16);
  CHECK(offsetof(weir_shard_host, set_key) == 24);
  CHECK(offsetof(weir_shard_host, log) == 32);

  CHECK(sizeof(weir_shard_api) == 80);
  CHECK(offsetof(weir_shard_api, flush) == 64);
  CHECK(offsetof(weir_shard_api, idle) == 72);
  CHECK(WEIR_SHARD_API_V2_SIZE == 64);
  CHECK(WEIR_SHARD_API_V2_MAX_SIZE == 72);
  CHECK(WEIR_SHARD_API_V3_SIZE == 80);
  CHECK(offsetof(weir_shard_api, struct_size) == 4);
  CHECK(offsetof(weir_shard_api, name) == 8);
  CHECK(offsetof(weir_shard_api, description) == 16);
  CHECK(offsetof(weir_shard_api, params) == 24);
  CHECK(offsetof(weir_shard_api, param_count) == 32);
  CHECK(offsetof(weir_shard_api, input_dtypes) == 36);
  CHECK(offsetof(weir_shard_api, configure) == 40);
  CHECK(offsetof(weir_shard_api, process) == 48);
  CHECK(offsetof(weir_shard_api, stop) == 56);
}

}  // TEST_SUITE
