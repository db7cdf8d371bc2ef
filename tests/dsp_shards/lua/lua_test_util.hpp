#pragma once
// Drives the lua shard through its ABI table, as the shard host does, with the fake host of
// weir/shard_fake_host.hpp keeping every key write, published block and log line.
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
#include "weir/shard_fake_host.hpp"

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

using ParamList = shard_test::ShardConfig::Params;

/// One configured lua shard; stopped on destruction.
class LuaShardUnderTest {
 public:
  explicit LuaShardUnderTest(std::initializer_list<ParamList::value_type> params, std::uint32_t dtype = WEIR_DTYPE_F32,
                             std::uint32_t samples_per_block = 64, double rate_hz = 1000.0)
      : config_("adc0", dtype, samples_per_block, rate_hz, "V", params), api_(weir_builtin_lua(WEIR_SHARD_ABI_VERSION)) {
    auto configured = shard_test::configure(*api_, config_.instance("lua0").build());
    shard_ = configured.shard;
    error_ = std::move(configured.error);
  }
  ~LuaShardUnderTest() {
    if (shard_ != nullptr) api_->stop(shard_);
  }
  LuaShardUnderTest(const LuaShardUnderTest&) = delete;
  LuaShardUnderTest& operator=(const LuaShardUnderTest&) = delete;

  [[nodiscard]] bool ok() const { return shard_ != nullptr; }
  [[nodiscard]] const std::string& error() const { return error_; }
  [[nodiscard]] const weir_shard_config& config() const { return config_.config(); }

  /// Calls process on `count` samples at `samples`; block times derive from the sequence.
  int process(shard_test::FakeHost& host, const void* samples, std::uint32_t count, std::uint64_t sequence) {
    weir_shard_block block{};
    block.samples = samples;
    block.count = count;
    block.flags = 0x5U;
    block.sequence = sequence;
    block.realtime_ns = 1'700'000'000'000'000'000ULL + sequence;
    block.monotonic_ns = 1000 + sequence;
    block.first_sample = sequence * count;
    const weir_shard_host h = host.table();
    return api_->process(shard_, &block, &h);
  }

  [[nodiscard]] std::string last_error() const { return weir_lua_shard_last_error(shard_); }
  [[nodiscard]] weir_lua_shard_stats stats() const {
    weir_lua_shard_stats s{};
    weir_lua_shard_get_stats(shard_, &s);
    return s;
  }

 private:
  shard_test::ShardConfig config_;
  const weir_shard_api* api_;
  weir_shard* shard_ = nullptr;
  std::string error_;
};

}  // namespace weir::test
