#pragma once
// A scalar item's keys: its value (`<key>`, typed), an enum's state (`<key>_state`), its units
// (`<key>_units`) and its meta key (`<log>.pv.<i>`, JSON, read by the recorder).
#include <cstdint>
#include <string>

#include "weir/controls/driver_settings.hpp"
#include "weir/core/error.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/pv_log.hpp"

namespace weir::controls {

struct ItemKeys {
  core::KeyHandle value;
  std::string meta, state, units;
};

/// Writes item `index`'s first meta text and resolves its value key `key` (made when missing);
/// `what` names the item in the error ("PV X:Y"). Thread: control only.
[[nodiscard]] core::Result<ItemKeys> open_item_keys(core::KvStore& kv, const DriverSettings& settings, std::uint32_t index,
                                                    const std::string& key, const std::string& what,
                                                    const std::string& meta_json);

/// The value key from a value entry, as its type says (f64, i64, an enum's index and state, text).
/// A full arena is left for the next update. No allocation. Thread: any (the KV store is).
void set_value_keys(core::KvStore& kv, const ItemKeys& keys, const core::PvLogEntry& e) noexcept;

/// The meta key and, where there are units, the units key; at each connection. Thread: any.
void set_meta_keys(core::KvStore& kv, const ItemKeys& keys, const std::string& meta_json, const std::string& units);

}  // namespace weir::controls
