#pragma once
// A stand-in for the shard host: builds a weir_shard_config, and records what process() writes
// through weir_shard_host (key values, claimed and published channel blocks).
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "weir/shard.h"

namespace weir::dsp::test {

/// A configuration with its strings owned, for one configure call.
struct ConfigBuilder {
  ConfigBuilder(std::uint32_t dtype, std::uint32_t samples_per_block, double rate_hz,
                std::vector<std::pair<std::string, std::string>> params = {})
      : params_(std::move(params)) {
    cfg.abi_version = WEIR_SHARD_ABI_VERSION;
    cfg.struct_size = sizeof(weir_shard_config);
    cfg.instance = "test0";
    cfg.input_channel = "adc0";
    cfg.input_dtype = dtype;
    cfg.input_samples_per_block = samples_per_block;
    cfg.input_rate_hz = rate_hz;
    cfg.input_units = "V";
    cfg.output_base = "adc0";
    for (const auto& [name, value] : params_) {
      names_.push_back(name.c_str());
      values_.push_back(value.c_str());
    }
    cfg.param_count = static_cast<std::uint32_t>(params_.size());
    cfg.param_names = names_.data();
    cfg.param_values = values_.data();
  }
  ConfigBuilder(const ConfigBuilder&) = delete;
  ConfigBuilder& operator=(const ConfigBuilder&) = delete;

  weir_shard_config cfg{};

 private:
  std::vector<std::pair<std::string, std::string>> params_;
  std::vector<const char*> names_, values_;
};

/// Records every host call. claim hands out one buffer of `capacity` samples (f32), or NULL when
/// `drop` is set.
struct FakeHost {
  struct Block {
    std::uint32_t output = 0;
    std::vector<float> samples;
    std::uint64_t realtime_ns = 0;
  };

  explicit FakeHost(std::uint32_t capacity = 0) : buffer(capacity) {}

  std::vector<float> buffer;
  bool drop = false;
  bool claimed = false;
  std::uint32_t claimed_output = 0;
  std::vector<Block> blocks;
  std::vector<std::vector<unsigned char>> keys = std::vector<std::vector<unsigned char>>(WEIR_SHARD_MAX_OUTPUTS);
  std::vector<std::uint32_t> key_writes = std::vector<std::uint32_t>(WEIR_SHARD_MAX_OUTPUTS);
  std::uint32_t bad_calls = 0;  // publish without claim, out-of-range outputs

  weir_shard_host host() noexcept {
    weir_shard_host h{};
    h.self = this;
    h.claim = [](void* self, std::uint32_t output, std::uint32_t* capacity) -> void* {
      auto* me = static_cast<FakeHost*>(self);
      if (me->drop || me->buffer.empty()) return nullptr;
      me->claimed = true;
      me->claimed_output = output;
      *capacity = static_cast<std::uint32_t>(me->buffer.size());
      return me->buffer.data();
    };
    h.publish = [](void* self, std::uint32_t output, std::uint32_t samples, std::uint64_t realtime_ns, std::uint32_t) {
      auto* me = static_cast<FakeHost*>(self);
      if (!me->claimed || output != me->claimed_output || samples > me->buffer.size()) {
        ++me->bad_calls;
        return;
      }
      me->claimed = false;
      me->blocks.push_back({output, std::vector<float>(me->buffer.begin(), me->buffer.begin() + samples), realtime_ns});
    };
    h.set_key = [](void* self, std::uint32_t output, const void* value, std::size_t bytes) -> int {
      auto* me = static_cast<FakeHost*>(self);
      if (output >= WEIR_SHARD_MAX_OUTPUTS) {
        ++me->bad_calls;
        return -1;
      }
      const auto* p = static_cast<const unsigned char*>(value);
      me->keys[output].assign(p, p + bytes);
      ++me->key_writes[output];
      return 0;
    };
    h.log = [](void*, int, const char*) {};
    return h;
  }

  [[nodiscard]] double f64(std::uint32_t output) const {
    REQUIRE(keys[output].size() == sizeof(double));
    double v = 0;
    std::memcpy(&v, keys[output].data(), sizeof v);
    return v;
  }
  [[nodiscard]] std::uint64_t u64(std::uint32_t output) const {
    REQUIRE(keys[output].size() == 8);
    std::uint64_t v = 0;
    for (int b = 7; b >= 0; --b) v = (v << 8) | keys[output][static_cast<std::size_t>(b)];  // little-endian
    return v;
  }
};

/// The index of the output called `name`, or -1.
inline int output_index(const weir_shard_config& cfg, const std::string& name) {
  for (std::uint32_t i = 0; i < cfg.output_count; ++i)
    if (name == cfg.outputs[i].name) return static_cast<int>(i);
  return -1;
}

/// Configures `api` with `builder`; returns the instance (NULL on refusal) and the error text.
inline std::pair<weir_shard*, std::string> configure(const weir_shard_api* api, ConfigBuilder& builder) {
  char error[WEIR_SHARD_ERROR_BYTES] = {};
  weir_shard* shard = api->configure(&builder.cfg, error, sizeof error);
  return {shard, error};
}

}  // namespace weir::dsp::test
