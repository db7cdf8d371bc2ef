#pragma once
// What the lua driver's tests share: scripts written to a scratch folder, options for a quick run,
// and a channel and keys read back through core's public read API.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "scratch_dir.hpp"
#include "spawn.hpp"
#include "weir/acq_lua/lua_driver.hpp"
#include "weir/core/block_copier.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/kv_store.hpp"

namespace weir::test {

/// Writes `text` to `name` in `dir`; returns its path.
inline std::string write_script(const ScratchDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir.file(name);
  std::ofstream(path) << text;
  return path;
}

/// A channel spec the driver may create: f64 unless told, `block` samples per block.
inline core::ChannelSpec lua_channel(const std::string& name, double rate_hz, std::uint32_t block,
                                     core::Dtype dtype = core::Dtype::f64) {
  core::ChannelSpec spec;
  spec.name = name;
  spec.dtype = dtype;
  spec.rate_hz = rate_hz;
  spec.samples_per_block = block;
  spec.ring_blocks = 64;
  return spec;
}

/// Every block still in the channel's ring, oldest first, with its samples as doubles.
struct ChannelBack {
  std::vector<core::BlockRecord> blocks;
  std::vector<double> samples;
};

inline ChannelBack read_channel(const core::Arena& arena, const std::string& name) {
  ChannelBack back;
  auto copier = core::BlockCopier::open(arena, name);
  REQUIRE_MESSAGE(copier, (copier ? "" : copier.error().what));
  const std::uint64_t head = copier->head();
  const std::uint64_t first = head > copier->ring_blocks() ? head - copier->ring_blocks() : 0;
  std::vector<std::byte> block(copier->block_bytes());
  const core::Dtype dtype = copier->desc().dtype;
  for (std::uint64_t seq = first; seq < head; ++seq) {
    core::BlockRecord record;
    REQUIRE(copier->copy(seq, block, record) == core::BlockStatus::ok);
    back.blocks.push_back(record);
    for (std::uint32_t i = 0; i < record.samples; ++i) {
      const std::byte* at = block.data() + std::size_t{i} * copier->sample_bytes();
      double value = 0;
      if (dtype == core::Dtype::f64) {
        std::memcpy(&value, at, sizeof value);
      } else if (dtype == core::Dtype::i16) {
        std::int16_t v = 0;
        std::memcpy(&v, at, sizeof v);
        value = v;
      } else {
        FAIL("read_channel reads f64 and i16 channels only");
      }
      back.samples.push_back(value);
    }
  }
  return back;
}

/// An integer or float key as a double; NaN when it is missing or of another type.
inline double key_number(const core::Arena& arena, const std::string& key) {
  core::KvStore kv(arena);
  std::uint64_t bits = 0;
  core::ValueType type = core::ValueType::none;
  if (kv.get_scalar(key, bits, type) != core::KvStatus::ok) return std::nan("");
  switch (type) {
    case core::ValueType::u64: return static_cast<double>(bits);
    case core::ValueType::i64: return static_cast<double>(static_cast<std::int64_t>(bits));
    case core::ValueType::f64: {
      double v = 0;
      std::memcpy(&v, &bits, sizeof v);
      return v;
    }
    default: return std::nan("");
  }
}

/// A key's bytes (text, or an array's elements); empty when missing.
inline std::string key_bytes(const core::Arena& arena, const std::string& key, core::ValueInfo* info = nullptr) {
  core::KvStore kv(arena);
  std::array<std::byte, 65536> buf{};
  core::ValueInfo got;
  if (kv.get(key, buf, got) != core::KvStatus::ok) return {};
  if (info != nullptr) *info = got;
  return std::string(reinterpret_cast<const char*>(buf.data()), got.length);
}

}  // namespace weir::test
