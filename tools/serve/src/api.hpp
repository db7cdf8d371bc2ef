#pragma once
// The JSON API of `weir serve`: the arena, its channels with their consumers, keys, MCA spectra,
// and (with --allow-set) writing a key. Each answer is one JSON object.
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "weir/core/arena.hpp"
#include "weir/core/error.hpp"

namespace weir::serve {

/// Thread: the server's io thread only (it remembers the last counts, for rates).
class Api {
 public:
  explicit Api(const core::Arena& arena) : arena_(&arena) {}

  /// {"name", "location", "bytes", "creator_pid", "created", "attached", "geometry", "read_only"}
  [[nodiscard]] std::string arena() const;
  /// {"channels": [...]}: rate, dtype, units, labels, frame axis, counters, rates since the last
  /// call, pyramid reach, and each consumer with lag and losses.
  [[nodiscard]] std::string channels();
  /// {"keys": [...]}: name, type, version, and the value for scalars and text (arrays: shape only).
  [[nodiscard]] std::string keys() const;
  /// {"key", "type", "version", "value"}: one key's whole value (arrays as nested lists). not_found
  /// when there is no such key.
  [[nodiscard]] core::Result<std::string> key(std::string_view name) const;
  /// {"mca": [...]}: each MCA shard's spectrum (keys NAME.spectrum and NAME.spectrum_axis) with counts,
  /// bin centres, units, live and dead time.
  [[nodiscard]] std::string mca() const;
  /// Writes a key from {"key": K, "value": V, "type": "text|i64|u64|f64"}: invalid_argument naming
  /// what is wrong with the body. Requires: the arena is mapped writable.
  [[nodiscard]] core::Result<std::string> set(std::string_view body) const;

 private:
  struct Seen {
    std::uint64_t blocks = 0, samples = 0;
    std::chrono::steady_clock::time_point at;
  };
  const core::Arena* arena_;
  std::map<std::string, Seen> seen_;
};

}  // namespace weir::serve
