#pragma once
// The sender's keys part: arena keys matching patterns, each change as one f144 message. Private
// to the kafka module.
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "weir/core/arena.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/kafka/codec.hpp"

namespace weir::kafka {

class KeyForwarder {
 public:
  /// produce(key, message) hands one f144 message on; false when it was not taken (tried again at
  /// the next scan). `own_prefix`'s keys (the sender's counters) are never sent.
  using Produce = std::function<bool(std::string_view key, std::span<const std::byte> message)>;
  KeyForwarder(const core::Arena& arena, std::vector<std::string> patterns, std::string own_prefix);

  /// Sends every matching key written since the last scan (all of them at the first). Returns the
  /// messages handed on. Thread: one.
  std::uint64_t scan(const Produce& produce);

  [[nodiscard]] std::uint64_t sent() const noexcept { return sent_; }
  [[nodiscard]] std::uint64_t skipped() const noexcept { return skipped_; }

 private:
  bool encode(std::string_view key, const core::ValueInfo& info, std::span<const std::byte>& out);
  core::KvStore kv_;
  std::vector<std::string> patterns_;
  std::string own_prefix_;
  F144Encoder encoder_;
  std::vector<std::byte> value_;                       // one value read, value_bytes long
  std::unordered_map<std::string, std::uint64_t> seen_;  // key -> the epoch last sent (or skipped)
  std::uint64_t sent_ = 0, skipped_ = 0;
};

}  // namespace weir::kafka
