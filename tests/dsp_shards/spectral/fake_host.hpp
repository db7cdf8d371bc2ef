#pragma once
// A shard host reduced to what a shard sees: parameters in, a config to fill, and claim/publish
// into vectors. No arena, no threads: what STYLE.md asks of a shard test.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "weir/shard.h"

namespace weir::test {

struct PublishedBlock {
  std::vector<float> samples;
  std::uint64_t realtime_ns = 0;
};

/// Collects every block a shard publishes on output 0. Claims hand out a buffer of `capacity`
/// floats; `drop_claims` makes the next that many claims return NULL (dropped at the source).
struct FakeHost {
  explicit FakeHost(std::uint32_t capacity) : buffer(capacity) {}

  std::vector<float> buffer;
  std::vector<PublishedBlock> published;
  int drop_claims = 0;
  int claims = 0;
  bool outstanding = false;  // a claim not yet published
  int double_claims = 0;     // claims made while one was outstanding: a shard bug

  weir_shard_host table() {
    weir_shard_host host{};
    host.self = this;
    host.claim = [](void* self, uint32_t output, uint32_t* capacity) -> void* {
      auto* h = static_cast<FakeHost*>(self);  // CHECK, not REQUIRE: this runs inside a noexcept process()
      CHECK(output == 0);
      ++h->claims;
      if (h->drop_claims > 0) {
        --h->drop_claims;
        return nullptr;
      }
      if (h->outstanding) ++h->double_claims;
      h->outstanding = true;
      *capacity = static_cast<uint32_t>(h->buffer.size());
      std::fill(h->buffer.begin(), h->buffer.end(), -12345.0F);  // stale data must never leak out
      return h->buffer.data();
    };
    host.publish = [](void* self, uint32_t output, uint32_t samples, uint64_t realtime_ns, uint32_t) {
      auto* h = static_cast<FakeHost*>(self);
      CHECK(output == 0);
      CHECK(h->outstanding);
      CHECK(samples <= h->buffer.size());
      h->outstanding = false;
      const std::size_t n = std::min<std::size_t>(samples, h->buffer.size());
      h->published.push_back({{h->buffer.begin(), h->buffer.begin() + static_cast<std::ptrdiff_t>(n)}, realtime_ns});
    };
    host.set_key = [](void*, uint32_t, const void*, size_t) { return -1; };
    host.log = [](void*, int, const char*) {};
    return host;
  }
};

/// A weir_shard_config as a host would build it, owning its strings.
class ConfigBuilder {
 public:
  ConfigBuilder(std::string input, weir_dtype dtype, std::uint32_t samples_per_block, double rate_hz,
                std::string units)
      : input_(std::move(input)), units_(std::move(units)) {
    cfg_.abi_version = WEIR_SHARD_ABI_VERSION;
    cfg_.struct_size = sizeof(weir_shard_config);
    cfg_.instance = "test0";
    cfg_.input_dtype = dtype;
    cfg_.input_samples_per_block = samples_per_block;
    cfg_.input_rate_hz = rate_hz;
  }

  ConfigBuilder& param(std::string name, std::string value) {
    names_.push_back(std::move(name));
    values_.push_back(std::move(value));
    return *this;
  }
  ConfigBuilder& output_base(std::string base) {
    base_ = std::move(base);
    return *this;
  }

  /// The config, pointers valid while this builder lives and is not changed.
  weir_shard_config& build() {
    name_ptrs_.clear();
    value_ptrs_.clear();
    for (const auto& n : names_) name_ptrs_.push_back(n.c_str());
    for (const auto& v : values_) value_ptrs_.push_back(v.c_str());
    cfg_.input_channel = input_.c_str();
    cfg_.input_units = units_.c_str();
    cfg_.output_base = base_.empty() ? input_.c_str() : base_.c_str();
    cfg_.param_count = static_cast<std::uint32_t>(names_.size());
    cfg_.param_names = name_ptrs_.data();
    cfg_.param_values = value_ptrs_.data();
    cfg_.output_count = 0;
    return cfg_;
  }

 private:
  std::string input_, units_, base_;
  std::vector<std::string> names_, values_;
  std::vector<const char*> name_ptrs_, value_ptrs_;
  weir_shard_config cfg_{};
};

/// configure through the table; on failure `error` holds the shard's message.
struct Configured {
  weir_shard* shard = nullptr;
  std::string error;
};

inline Configured configure(const weir_shard_api& api, weir_shard_config& cfg) {
  char error[WEIR_SHARD_ERROR_BYTES] = {};
  Configured result;
  result.shard = api.configure(&cfg, error, sizeof(error));
  result.error = error;
  return result;
}

}  // namespace weir::test
