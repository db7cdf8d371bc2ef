#pragma once
// The truth an ann answer is measured against: the exact top-k over the keys of one partition (every
// vector of the arena scored in place by core's search, hits kept when their key carries the label).
#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "weir/core/arena.hpp"
#include "weir/core/error.hpp"
#include "weir/core/vector_store.hpp"

namespace weir::ann {

/// The k nearest vectors (cosine) of `query` among the keys labelled `part`, best first: asks core's
/// search for more hits (x4 each round) until k are the partition's or every row was looked at. No
/// key ever labelled `part`: no hits. Fails with invalid_argument as VectorStore::search does.
/// Allocates (cold path). Thread: any.
[[nodiscard]] core::Result<std::vector<core::VectorHit>> exact_search(const core::Arena& arena, std::string_view part,
                                                                      std::span<const float> query, std::size_t k);

}  // namespace weir::ann
