#pragma once
// Keeps an HnswIndex equal to a partition's vectors: which slots it indexed, with which key
// generation and vector-row epoch, so an overwrite (same slot and generation, new epoch), a delete
// (slot no longer live, or its vector or label gone) and a reuse (new generation) are each seen.
// Private to ann/.
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "weir/ann/hnsw_index.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/vector_store.hpp"

namespace weir::ann::detail {

class PartitionFollower {
 public:
  /// part_id: the partition label's dictionary id (bit of a slot's label_ids).
  PartitionFollower(const core::Arena& arena, HnswIndex& index, std::uint32_t part_id);

  /// Indexes every labelled vector now present, on `threads` threads. Cold path; nothing else may
  /// touch the index meanwhile. Returns how many vectors it indexed.
  std::uint64_t build(std::uint32_t threads);
  /// Brings one slot's node in line with the arena. Thread: the follower (or build) thread.
  void refresh(std::uint32_t slot) noexcept;
  /// refresh() of every slot that is labelled or indexed: after lost change-log entries.
  void rescan() noexcept;

  /// The generation slot was indexed with; false when the slot is not in the index. Thread: any
  /// (the request thread maps hits to (slot, generation) with it).
  [[nodiscard]] bool indexed_generation(std::uint32_t slot, std::uint32_t& generation) const noexcept;

  [[nodiscard]] std::uint64_t inserts() const noexcept { return inserts_.load(std::memory_order_relaxed); }
  [[nodiscard]] std::uint64_t deletes() const noexcept { return deletes_.load(std::memory_order_relaxed); }
  [[nodiscard]] std::uint64_t refused() const noexcept { return refused_.load(std::memory_order_relaxed); }
  [[nodiscard]] std::uint32_t rows() const noexcept { return rows_; }

 private:
  struct Tracked {
    std::uint64_t epoch = 0;       // the vector row's epoch when indexed
    std::uint32_t generation = 0;  // the key's insert generation when indexed
    bool indexed = false;
  };
  [[nodiscard]] const core::SlotHeader& slot_header(std::uint32_t slot) const noexcept;
  [[nodiscard]] bool labelled(std::uint32_t slot) const noexcept;
  void refresh_with(std::uint32_t slot, std::span<float> raw, std::span<float> prepared) noexcept;
  void drop(std::uint32_t slot) noexcept;

  const core::Arena* arena_;
  HnswIndex* index_;
  core::VectorStore vectors_;
  const std::byte* slots_;
  std::uint64_t slot_stride_;
  std::uint32_t rows_;
  std::uint64_t part_bit_;
  std::vector<Tracked> tracked_;                          // per slot; the follower's own
  std::unique_ptr<std::atomic<std::uint64_t>[]> published_;  // per slot: generation << 1 | indexed
  std::vector<float> raw_, prepared_;                     // the follower thread's buffers
  std::atomic<std::uint64_t> inserts_{0}, deletes_{0}, refused_{0};
};

}  // namespace weir::ann::detail
