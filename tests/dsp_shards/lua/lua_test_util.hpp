#pragma once
// Drives the lua shard through its ABI table, as the shard host does, with a fake host that keeps
// every key write, published block and log line.
#include <stdlib.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "weir/dsp/lua_shard.h"

namespace weir::test {

/// A fresh directory for scripts, removed with everything in it.
class ScriptDir {
 public:
  ScriptDir() {
    char pattern[] = "/tmp/weir-lua-test-XXXXXX";
    const char* made = ::mkdtemp(pattern);
    path_ = made != nullptr ? made : "";
  }
  ~ScriptDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  ScriptDir(const ScriptDir&) = delete;
  ScriptDir& operator=(const ScriptDir&) = delete;

  /// Writes `lines` joined by newlines to `name`, so line N of the script is lines[N-1].
  std::string write(const std::string& name, std::initializer_list<const char*> lines) const {
    const std::string file = path_ + "/" + name;
    std::ofstream out(file);
    for (const char* line : lines) out << line << '\n';
    return file;
  }

 private:
  std::string path_;
};

struct FakeHost {
  struct Published {
    std::uint32_t output;
    std::vector<float> samples;
    std::uint64_t realtime_ns;
    std::uint32_t flags;
  };

  std::uint32_t capacity = 64;  // samples per claimed block
  bool drop_claims = false;
  std::map<std::uint32_t, std::vector<std::string>> key_writes;  // every write, per output index
  std::vector<Published> published;
  std::vector<std::string> logs;

  [[nodiscard]] double last_f64(std::uint32_t output) const {
    const auto it = key_writes.find(output);
    if (it == key_writes.end() || it->second.empty() || it->second.back().size() != sizeof(double)) return -1e300;
    double value = 0;
    std::memcpy(&value, it->second.back().data(), sizeof value);
    return value;
  }

  [[nodiscard]] weir_shard_host abi() {
    weir_shard_host h{};
    h.self = this;
    h.claim = [](void* self, std::uint32_t output, std::uint32_t* cap) -> void* {
      auto* host = static_cast<FakeHost*>(self);
      if (host->drop_claims) return nullptr;
      host->claim_buffer.assign(host->capacity, -12345.0F);
      host->claimed = output;
      *cap = host->capacity;
      return host->claim_buffer.data();
    };
    h.publish = [](void* self, std::uint32_t output, std::uint32_t samples, std::uint64_t realtime_ns,
                   std::uint32_t flags) {
      auto* host = static_cast<FakeHost*>(self);
      if (output != host->claimed || samples > host->claim_buffer.size()) return;  // the check: the shard got it wrong
      host->published.push_back(
          {output, std::vector<float>(host->claim_buffer.begin(), host->claim_buffer.begin() + samples), realtime_ns,
           flags});
    };
    h.set_key = [](void* self, std::uint32_t output, const void* value, std::size_t bytes) {
      auto* host = static_cast<FakeHost*>(self);
      host->key_writes[output].emplace_back(static_cast<const char*>(value), bytes);
      return 0;
    };
    h.log = [](void* self, int, const char* message) { static_cast<FakeHost*>(self)->logs.emplace_back(message); };
    return h;
  }

 private:
  std::vector<float> claim_buffer;
  std::uint32_t claimed = ~0U;
};

using ParamList = std::vector<std::pair<std::string, std::string>>;

/// One configured lua shard; stopped on destruction.
class LuaShardUnderTest {
 public:
  explicit LuaShardUnderTest(std::initializer_list<ParamList::value_type> params, std::uint32_t dtype = WEIR_DTYPE_F32,
                             std::uint32_t samples_per_block = 64, double rate_hz = 1000.0)
      : params_(params), api_(weir_builtin_lua(WEIR_SHARD_ABI_VERSION)) {
    for (const auto& [name, value] : params_) {
      names_.push_back(name.c_str());
      values_.push_back(value.c_str());
    }
    cfg_.abi_version = WEIR_SHARD_ABI_VERSION;
    cfg_.struct_size = sizeof(weir_shard_config);
    cfg_.instance = "lua0";
    cfg_.input_channel = "adc0";
    cfg_.input_dtype = dtype;
    cfg_.input_samples_per_block = samples_per_block;
    cfg_.input_rate_hz = rate_hz;
    cfg_.input_units = "V";
    cfg_.output_base = "adc0";
    cfg_.param_count = static_cast<std::uint32_t>(names_.size());
    cfg_.param_names = names_.data();
    cfg_.param_values = values_.data();
    char error[WEIR_SHARD_ERROR_BYTES] = {};
    shard_ = api_->configure(&cfg_, error, sizeof error);
    error_ = error;
  }
  ~LuaShardUnderTest() {
    if (shard_ != nullptr) api_->stop(shard_);
  }
  LuaShardUnderTest(const LuaShardUnderTest&) = delete;
  LuaShardUnderTest& operator=(const LuaShardUnderTest&) = delete;

  [[nodiscard]] bool ok() const { return shard_ != nullptr; }
  [[nodiscard]] const std::string& error() const { return error_; }
  [[nodiscard]] const weir_shard_config& config() const { return cfg_; }

  /// Calls process on `count` samples at `samples`; block times derive from the sequence.
  int process(FakeHost& host, const void* samples, std::uint32_t count, std::uint64_t sequence) {
    weir_shard_block block{};
    block.samples = samples;
    block.count = count;
    block.flags = 0x5U;
    block.sequence = sequence;
    block.realtime_ns = 1'700'000'000'000'000'000ULL + sequence;
    block.monotonic_ns = 1000 + sequence;
    block.first_sample = sequence * count;
    const weir_shard_host h = host.abi();
    return api_->process(shard_, &block, &h);
  }

  [[nodiscard]] std::string last_error() const { return weir_lua_shard_last_error(shard_); }
  [[nodiscard]] weir_lua_shard_stats stats() const {
    weir_lua_shard_stats s{};
    weir_lua_shard_get_stats(shard_, &s);
    return s;
  }

 private:
  ParamList params_;
  const weir_shard_api* api_;
  std::vector<const char*> names_;
  std::vector<const char*> values_;
  weir_shard_config cfg_{};
  weir_shard* shard_ = nullptr;
  std::string error_;
};

}  // namespace weir::test
