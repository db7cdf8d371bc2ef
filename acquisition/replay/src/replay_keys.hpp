#pragma once
// The keys a replay writes: the logged values of the chosen keys, written to the arena's keys as
// their type. Private to the replay driver.
#include <cstdint>
#include <string>

#include "weir/core/arena.hpp"
#include "weir/core/error.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/replay/recording.hpp"

namespace weir::acq::detail {

/// One key being replayed: its logged values' reader and the arena's keys.
class KeyLane {
 public:
  KeyLane(const core::Arena& arena, const Recording& recording, const RecordedKey& key);

  /// Writes logged value `change` to the key. Fails only on a file read; a value the arena refuses
  /// returns its status (ok when written).
  [[nodiscard]] core::Result<core::KvStatus> write(std::uint64_t change);

  const RecordedKey* key;

 private:
  core::KvStore store_;
  KeyReader reader_;
};

}  // namespace weir::acq::detail
