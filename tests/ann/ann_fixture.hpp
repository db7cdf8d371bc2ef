#pragma once
// A real arena holding a partition of clustered vectors, written as a writer of a partition writes
// them (label, vector, then the key's array value, whose write pulses the label's group), and a real
// `weir ann` process serving it.
#include <doctest/doctest.h>

#include <array>
#include <chrono>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "arena_guard.hpp"
#include "background_weir.hpp"
#include "run_weir.hpp"
#include "weir/ann/clustered_data.hpp"
#include "weir/ann/protocol.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/signals.hpp"
#include "weir/core/vector_store.hpp"

namespace weir::ann::test {

inline constexpr std::string_view kPart = "pulses";
inline constexpr std::chrono::seconds kServeTimeout{20};  // longest wait for a service to be serving

struct PartitionArena {
  PartitionArena(std::string_view tag, std::uint32_t slots, std::uint32_t dim)
      : guard(weir::test::unique_name(tag)), arena(make(guard.where(), slots, dim)), kv(arena), vectors(arena) {}

  static core::Arena make(const std::string& where, std::uint32_t slots, std::uint32_t dim) {
    core::ArenaOptions options;
    options.slot_count = slots;
    options.vector_dim = dim;
    options.value_bytes = 512;
    options.channel_data_bytes = 0;
    auto a = core::Arena::create(where, options);
    REQUIRE_MESSAGE(a, (a ? "" : a.error().what));
    return std::move(*a);
  }

  /// Labels the key (if new), stores its vector, then its value {seq, seq * 1000} (which pulses).
  void put(const std::string& key, std::span<const float> v, std::uint64_t seq) {
    const std::string labels[] = {std::string(kPart)};
    REQUIRE(core::set_labels(arena, key, labels));
    REQUIRE(vectors.set_wait(key, v) == core::VectorStatus::ok);
    const std::array<std::int64_t, 2> value{static_cast<std::int64_t>(seq), static_cast<std::int64_t>(seq) * 1000};
    core::ArrayShape shape;
    shape.elem = core::Dtype::i64;
    shape.rank = 1;
    shape.dims = {2, 0};
    REQUIRE(kv.set_array(key, shape, std::as_bytes(std::span(value))) == core::KvStatus::ok);
  }

  /// Fills keys p/0 .. p/n-1 from gen.
  void fill(ClusteredData& gen, std::uint32_t n) {
    std::vector<float> v(gen.dim());
    for (std::uint32_t i = 0; i < n; ++i) {
      gen.next(v);
      put("p/" + std::to_string(i), v, i);
    }
  }

  /// The service's status, if it wrote one.
  [[nodiscard]] std::optional<ServiceStatus> status() const {
    ServiceStatus s{};
    core::ValueInfo info;
    const auto bytes = std::as_writable_bytes(std::span(&s, 1));
    if (kv.get(status_key(kPart), bytes, info) != core::KvStatus::ok) return std::nullopt;
    return decode_status(std::span<const std::byte>(bytes.data(), info.length));
  }

  [[nodiscard]] bool serving() const {
    const auto s = status();
    return s && s->state == static_cast<std::uint8_t>(ServiceState::serving);
  }

  weir::test::ArenaGuard guard;
  core::Arena arena;
  core::KvStore kv;
  core::VectorStore vectors;
};

/// `weir ann ARENA pulses` in the background, serving once constructed.
struct Service {
  explicit Service(PartitionArena& a, std::vector<std::string> extra = {})
      : process(args(a, std::move(extra))) {
    const bool up = weir::test::eventually([&] { return a.serving(); }, kServeTimeout);
    REQUIRE_MESSAGE(up, process.output());
  }
  static std::vector<std::string> args(const PartitionArena& a, std::vector<std::string> extra) {
    std::vector<std::string> out{"ann", a.guard.where(), std::string(kPart), "--threads", "2"};
    out.insert(out.end(), extra.begin(), extra.end());
    return out;
  }
  /// SIGTERM, and the exit code (0 for a clean stop).
  int stop() {
    process.signal(SIGTERM);
    return process.wait_exit(std::chrono::seconds(10));
  }
  weir::test::BackgroundWeir process;
};

/// Keys of the hits, through key_of (a deleted key's hit has none).
inline std::vector<std::string> hit_keys(const core::VectorStore& vectors, std::span<const core::VectorHit> hits) {
  std::vector<std::string> out;
  std::vector<char> buf(vectors.key_bytes());
  for (const auto& h : hits) {
    std::uint32_t length = 0;
    out.push_back(vectors.key_of(h, buf, length) == core::VectorStatus::ok ? std::string(buf.data(), length) : "");
  }
  return out;
}

}  // namespace weir::ann::test
