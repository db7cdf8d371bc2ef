// Replay of key logs: one logged value read and written to the arena's key as its type.
#include "replay_keys.hpp"

namespace weir::acq::detail {

KeyLane::KeyLane(const core::Arena& arena, const Recording& recording, const RecordedKey& recorded)
    : key(&recorded), store_(arena), reader_(recording, recorded) {}

core::Result<core::KvStatus> KeyLane::write(std::uint64_t change) {
  auto value = reader_.value(change);
  if (!value) return tl::make_unexpected(value.error());
  if (value->type == core::ValueType::array) return store_.set_array(key->name, value->array, value->data);
  return store_.set_wait(key->name, value->data, value->type);
}

}  // namespace weir::acq::detail
