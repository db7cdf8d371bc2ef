#pragma once
// An HNSW graph (Debian's hnswlib 0.6.2) over copies of a partition's vectors, labelled by KV slot,
// whose distances are weir's vector kernels (AVX-512, AVX2+FMA or portable, picked at run time)
// rather than hnswlib's compile-time SIMD: weir's binaries are portable.
//
// Concurrency (hnswlib's contract, narrowed): add() and remove() from one thread at a time, or add()
// of distinct new slots from several threads while nothing else runs (the initial build); search()
// from one other thread meanwhile. Distances against a node being replaced may read a mix of its
// old and new floats: one candidate's score, not the graph, is off for that search.
#include <cstdint>
#include <memory>
#include <span>

#include "weir/core/error.hpp"
#include "weir/core/vector_store.hpp"

namespace weir::ann {

struct IndexParams {
  std::uint32_t m = 16;                 // links per node (level 0 keeps 2 m)
  std::uint32_t ef_construction = 100;  // candidate list while linking a new node
  core::Metric metric = core::Metric::cosine;
  core::Kernel kernel = core::Kernel::best;
};

struct Neighbour {
  std::uint32_t slot = 0;
  float score = 0.0F;  // as VectorStore::search reports it: cosine, dot, or L2 distance
};

class HnswIndex {
 public:
  /// An empty index for up to `capacity` slots (labels 0..capacity-1) of `dim` floats. Allocates
  /// its node table at once (virtual memory: pages are touched as nodes arrive). Cold path.
  [[nodiscard]] static core::Result<HnswIndex> create(std::uint32_t dim, std::uint32_t capacity,
                                                      const IndexParams& params);
  HnswIndex(HnswIndex&&) noexcept;
  HnswIndex& operator=(HnswIndex&&) noexcept;
  ~HnswIndex();

  /// The vector as the index stores it: normalised for cosine (a zero vector stays zero), as is
  /// otherwise. out.size() == in.size() == dim. Thread: any.
  void prepare(std::span<const float> in, std::span<float> out) const noexcept;

  /// Adds slot's vector (prepared), or replaces it if the slot is in the index (deleted or not).
  /// false when the index refused it (out of memory); nothing then changed. Thread: see above.
  [[nodiscard]] bool add(std::uint32_t slot, std::span<const float> prepared) noexcept;
  /// Marks slot's node deleted: searches skip it until add() brings it back. false if absent.
  [[nodiscard]] bool remove(std::uint32_t slot) noexcept;

  /// The nearest live nodes of `prepared` (a prepared query), best first; returns how many were
  /// written (<= out.size()). ef: candidate list (raised to out.size()). Thread: one search thread.
  /// Allocates (hnswlib's candidate queues); -1 when it failed to.
  [[nodiscard]] std::int64_t search(std::span<const float> prepared, std::uint32_t ef, std::span<Neighbour> out) noexcept;

  /// Live nodes (added, not deleted). Thread: any (read without a lock: a moment's figure).
  [[nodiscard]] std::uint64_t live() const noexcept;
  [[nodiscard]] std::uint32_t dim() const noexcept;
  [[nodiscard]] core::Kernel kernel() const noexcept;

 private:
  struct Impl;
  explicit HnswIndex(std::unique_ptr<Impl> impl) noexcept;
  std::unique_ptr<Impl> impl_;
};

}  // namespace weir::ann
