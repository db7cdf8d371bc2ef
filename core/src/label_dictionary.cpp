// Lock-free reads of the label dictionary: an entry's fields are written before its ready state,
// with release, and never change afterwards.
#include "weir/core/label_dictionary.hpp"

#include <algorithm>

namespace weir::core {

LabelDictionary::LabelDictionary(const Arena& arena) noexcept
    : entries_(reinterpret_cast<const LabelEntry*>(arena.region(Region::groups) + labels_offset_in_groups())) {}

std::optional<LabelInfo> LabelDictionary::at(std::uint32_t id) const noexcept {
  if (id >= kLabelCapacity) return std::nullopt;
  const LabelEntry& e = entries_[id];
  if (static_cast<LabelState>(e.state.load(std::memory_order_acquire)) != LabelState::ready)  // pairs with the publish
    return std::nullopt;
  const std::size_t length = std::min<std::size_t>(e.name_bytes, sizeof(e.name));  // a corrupt length stays inside
  return LabelInfo{id, std::string_view(e.name, length), e.mask};
}

std::optional<std::uint32_t> LabelDictionary::find(std::string_view name) const noexcept {
  for (std::uint32_t id = 0; id < kLabelCapacity; ++id) {
    const std::optional<LabelInfo> e = at(id);
    if (e && e->name == name) return id;
  }
  return std::nullopt;
}

}  // namespace weir::core
