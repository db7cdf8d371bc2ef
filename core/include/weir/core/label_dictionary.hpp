#pragma once
// The arena's label dictionary, read-only: label names, their ids (the bits of a slot's or channel's
// label_ids) and their Bloom masks. Entries are added by GroupTable::label_id (signals.hpp) and never
// change once ready, so lookups here are lock-free.
#include <cstdint>
#include <optional>
#include <string_view>

#include "weir/core/arena.hpp"
#include "weir/core/arena_layout.hpp"

namespace weir::core {

struct LabelInfo {
  std::uint32_t id = 0;   // bit `id` of label_ids
  std::string_view name;  // points into the mapping: valid while the arena stays mapped
  std::uint64_t mask = 0; // the label's Bloom mask, label_mask(name)
};

/// Reads one attached arena's label dictionary. Holds only a pointer into the mapping.
/// Thread: any number of dictionaries in any threads and processes.
class LabelDictionary {
 public:
  explicit LabelDictionary(const Arena& arena) noexcept;

  /// Entry `id` if it is ready; nullopt for a free or half-written entry or id >= kLabelCapacity.
  /// Thread: any.
  [[nodiscard]] std::optional<LabelInfo> at(std::uint32_t id) const noexcept;
  /// The id of label `name`, never adding it; nullopt when the dictionary does not hold it. Thread: any.
  [[nodiscard]] std::optional<std::uint32_t> find(std::string_view name) const noexcept;
  /// Calls fn(const LabelInfo&) for every ready entry, in id order. Thread: any.
  template <class Fn>
  void for_each(Fn&& fn) const {
    for (std::uint32_t id = 0; id < kLabelCapacity; ++id)
      if (const std::optional<LabelInfo> e = at(id)) fn(*e);
  }

 private:
  const LabelEntry* entries_;
};

}  // namespace weir::core
