#include "weir/controls/item_keys.hpp"

#include <span>
#include <string_view>

#include <fmt/format.h>

namespace weir::controls {

core::Result<ItemKeys> open_item_keys(core::KvStore& kv, const DriverSettings& settings, std::uint32_t index,
                                      const std::string& key, const std::string& what, const std::string& meta_json) {
  ItemKeys keys;
  keys.meta = core::pv_meta_key(settings.log_channel, index);
  if (auto s = kv.set_text(keys.meta, meta_json); s != core::KvStatus::ok)
    return core::fail(core::Errc::invalid_argument,
                      fmt::format("driver \"{}\": key '{}': {}", settings.part, keys.meta, core::kv_status_text(s)));
  if (auto s = kv.resolve(key, keys.value, true); s != core::KvStatus::ok)
    return core::fail(core::Errc::invalid_argument,
                      fmt::format("driver \"{}\": {}: key '{}': {}", settings.part, what, key, core::kv_status_text(s)));
  keys.state = key + "_state";
  keys.units = key + "_units";
  return keys;
}

void set_value_keys(core::KvStore& kv, const ItemKeys& keys, const core::PvLogEntry& e) noexcept {
  switch (static_cast<core::PvType>(e.type)) {
    case core::PvType::f64: (void)kv.set(keys.value, std::as_bytes(std::span(&e.f64, 1)), core::ValueType::f64); break;
    case core::PvType::i64: (void)kv.set(keys.value, std::as_bytes(std::span(&e.i64, 1)), core::ValueType::i64); break;
    case core::PvType::enumerated:
      (void)kv.set(keys.value, std::as_bytes(std::span(&e.i64, 1)), core::ValueType::i64);
      (void)kv.set_text(keys.state, std::string_view(e.text, e.text_bytes));
      break;
    case core::PvType::text:
      (void)kv.set(keys.value, std::as_bytes(std::span(e.text, e.text_bytes)), core::ValueType::text);
      break;
    case core::PvType::unknown: break;
  }
}

void set_meta_keys(core::KvStore& kv, const ItemKeys& keys, const std::string& meta_json, const std::string& units) {
  (void)kv.set_text(keys.meta, meta_json);
  if (!units.empty()) (void)kv.set_text(keys.units, units);
}

}  // namespace weir::controls
