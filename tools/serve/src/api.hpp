#pragma once
// The JSON API of `weir serve`: the arena, its channels with their consumers, keys, MCA spectra,
// and (with --allow-set) writing a key. Each answer is one JSON object.
#include <cstdint>
#include <string>
#include <string_view>

#include "weir/core/arena.hpp"
#include "weir/core/error.hpp"

namespace weir::serve {

/// Thread: any one thread at a time.
class Api {
 public:
  /// `stale_after_s`: a channel whose newest block is older is stale (0: the longer of 2 s and 4 of
  /// its nominal block periods).
  explicit Api(const core::Arena& arena, double stale_after_s = 0) : arena_(&arena), stale_after_s_(stale_after_s) {}

  /// {"name", "location", "bytes", "creator_pid", "created", "attached", "geometry", "read_only"}
  [[nodiscard]] std::string arena() const;
  /// {"channels": [...]}: rate, dtype, units, labels, frame axis, counters, the true rates and the
  /// newest block's age from the blocks' own stamps (core::channel_activity, right at the first
  /// call), whether it is stale, pyramid reach, and each consumer with lag and losses.
  [[nodiscard]] std::string channels() const;
  /// {"keys": [...]}: name, type, version, and the value for scalars and text (arrays: shape only).
  [[nodiscard]] std::string keys() const;
  /// {"key", "type", "version", "value"}: one key's whole value (arrays as nested lists). not_found
  /// when there is no such key.
  [[nodiscard]] core::Result<std::string> key(std::string_view name) const;
  /// {"mca": [...]}: each MCA shard's spectrum (keys NAME.spectrum and NAME.spectrum_axis) with counts,
  /// bin centres, units, live and dead time, and the pulses outside its range (underflow, overflow).
  [[nodiscard]] std::string mca() const;
  /// Writes a key from {"key": K, "value": V, "type": "text|i64|u64|f64"}: invalid_argument naming
  /// what is wrong with the body. Requires: the arena is mapped writable.
  [[nodiscard]] core::Result<std::string> set(std::string_view body) const;

 private:
  const core::Arena* arena_;
  double stale_after_s_;
};

}  // namespace weir::serve
