// The exact top-k of one partition: core's search over every row, kept to the partition's keys.
#include "weir/ann/exact.hpp"

#include <algorithm>
#include <atomic>
#include <string>

#include "weir/core/arena_layout.hpp"
#include "weir/core/label_dictionary.hpp"

namespace weir::ann {
namespace {
constexpr std::size_t kExactGrowth = 4;  // each round asks core's search for this many times more hits
}  // namespace

core::Result<std::vector<core::VectorHit>> exact_search(const core::Arena& arena, std::string_view part,
                                                        std::span<const float> query, std::size_t k) {
  const core::VectorStore vectors(arena);
  const auto part_id = core::LabelDictionary(arena).find(part);
  std::vector<core::VectorHit> kept;
  if (!part_id || k == 0) return kept;  // no key ever carried the label
  const std::uint64_t bit = std::uint64_t{1} << *part_id;
  const auto* slots = arena.region(core::Region::slots);
  const std::uint64_t stride = arena.geometry().slot_stride;
  for (std::size_t want = k * kExactGrowth;; want *= kExactGrowth) {
    want = std::min<std::size_t>(want, vectors.rows());
    std::vector<core::VectorHit> hits(want);
    std::size_t count = 0;
    const core::VectorStatus st = vectors.search(query, core::SearchOptions{}, hits, count);
    if (st != core::VectorStatus::ok)
      return core::fail(core::Errc::invalid_argument, "exact search of " + arena.location().describe() + ": " +
                                                          core::vector_status_text(st));
    kept.clear();
    for (std::size_t i = 0; i < count && kept.size() < k; ++i) {
      const auto& s = *reinterpret_cast<const core::SlotHeader*>(slots + std::uint64_t{hits[i].slot} * stride);
      if ((s.label_ids.load(std::memory_order_relaxed) & bit) != 0 &&
          s.generation.load(std::memory_order_acquire) == hits[i].generation)
        kept.push_back(hits[i]);
    }
    if (kept.size() >= k || count < want || want >= vectors.rows()) return kept;
  }
}

}  // namespace weir::ann
