#pragma once
// The receiver's keys part: f144 values of sources matching globs set as arena keys of the same
// name and type (i64, u64, f64 scalars; arrays of their element type). Private to the kafka module.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "string_map.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/kafka/codec.hpp"

namespace weir::kafka {

/// What became of one f144 message.
enum class [[nodiscard]] KeyTaken : std::uint8_t { set, not_matched, failed };

class KeyReceiver {
 public:
  /// `own_prefix`'s keys (the receiver's counters) are never written from the topic.
  KeyReceiver(const core::Arena& arena, std::vector<std::string> patterns, std::string own_prefix);

  /// Sets the value's key when its source matches. A source's match is decided once (cold, the
  /// first time it is seen); later values of it allocate nothing. Thread: one.
  KeyTaken take(const LogValue& value);

  [[nodiscard]] std::uint64_t set_i64() const noexcept { return set_[0]; }
  [[nodiscard]] std::uint64_t set_u64() const noexcept { return set_[1]; }
  [[nodiscard]] std::uint64_t set_f64() const noexcept { return set_[2]; }
  [[nodiscard]] std::uint64_t set_array() const noexcept { return set_[3]; }
  [[nodiscard]] std::uint64_t failed() const noexcept { return failed_; }

 private:
  bool matches(std::string_view source);

  core::KvStore kv_;
  std::vector<std::string> patterns_;
  std::string own_prefix_;
  StringMap<bool> matched_;  // source -> taken
  std::array<std::uint64_t, 4> set_{};  // i64, u64, f64, array
  std::uint64_t failed_ = 0;
};

}  // namespace weir::kafka
