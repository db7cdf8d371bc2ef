#pragma once
// Seqlock writer side, waiting and dead-writer recovery for vector rows, and the scoring kernels.
// Private to core. The same protocol as KV slots (slot_ops.hpp), minus pins: rows have no atomic ops.
#include <sched.h>

#include <atomic>
#include <cstdint>

#include "slot_ops.hpp"
#include "vector_panel.hpp"
#include "weir/core/arena_layout.hpp"
#include "weir/core/detail/seqlock.hpp"
#include "weir/core/vector_store.hpp"

namespace weir::core::detail {

// VectorRowHeader::flags bits (see arena_layout.hpp).
inline constexpr std::uint32_t kRowPresent = 1U << 0;  // a vector was written for `generation`
inline constexpr std::uint32_t kRowTorn = 1U << 1;     // its writer died mid-write

inline constexpr int kRowSpinsBeforeYield = 64;  // pause-spins before a waiter yields the CPU

/// Spins a little, then yields. Thread: any waiter.
inline void row_backoff(int& spins) noexcept {
  if (++spins < kRowSpinsBeforeYield) {
    cpu_relax();
  } else {
    sched_yield();
  }
}

/// Whether KV slot `s` is live and still holds the incarnation `generation`: a row counts only then.
/// Acquire pairs with insert's release stores of generation and meta. Thread: any.
inline bool slot_holds(const SlotHeader& s, std::uint32_t generation) noexcept {
  const std::uint32_t g = s.generation.load(std::memory_order_acquire);
  const std::uint64_t m = s.meta.load(std::memory_order_acquire);
  return g == generation && meta_live(m) && s.generation.load(std::memory_order_relaxed) == g;
}

/// Claims the row's seqlock: even -> odd with our pid in the word (epoch_claimed()), one CAS. With deadline 0 a held row fails at
/// once; otherwise it waits, recovering a dead owner's row, until the deadline. Thread: any writer.
[[nodiscard]] bool claim_row(ArenaHeader& header, VectorRowHeader& row, std::int64_t deadline_ns) noexcept;

/// Ends a claim: odd -> even, owner cleared and version bumped in one release store.
inline void release_row(VectorRowHeader& row) noexcept {
  const std::uint64_t odd = row.epoch.load(std::memory_order_relaxed);  // ours: nobody else moves it now
  row.epoch.store(epoch_released(odd), std::memory_order_release);   // every float is visible before even
}

/// Waits (bounded) for an odd epoch to move on; once the row has been odd for kStuckAfterNs since
/// started_ns, checks the owner and recovers the row of a dead one (marking it torn). Returns false
/// when the deadline passed first. Thread: any; recovery only when writable.
[[nodiscard]] bool settle_row(ArenaHeader& header, VectorRowHeader& row, std::uint64_t odd_epoch,
                              std::int64_t started_ns, std::int64_t deadline_ns, bool writable) noexcept;

/// One pass of settle_row's check, without waiting: if the row has held odd_epoch since started_ns for
/// at least kStuckAfterNs and the pid in it is dead, recovers it. Returns whether it recovered the row.
[[nodiscard]] bool recover_if_dead(ArenaHeader& header, VectorRowHeader& row, std::uint64_t odd_epoch,
                                   std::int64_t started_ns, std::int64_t now_ns) noexcept;

/// Raw kernel result for one row: the dot product (cosine, dot) or squared distance (l2) of q and v.
/// v points into a row that a writer may change meanwhile: the caller validates with the epoch.
using RowKernel = float (*)(const float* q, const float* v, std::uint32_t n) noexcept;

/// Raw results of four queries against four rows at once, each bit-identical to the RowKernel of the
/// same code path on that pair: out[4 * r + q] is the kernel of q[q] and v[r]. Rows as for RowKernel.
using TileKernel = void (*)(const float* const* q, const float* const* v, std::uint32_t n, float* out) noexcept;
inline constexpr std::uint32_t kTileSide = 4;  // queries and rows of one tile

struct KernelTable {
  RowKernel dot;
  RowKernel l2sq;
  TileKernel dot_tile;   // nullptr: batched searches call the row kernel per pair
  TileKernel l2sq_tile;
  PanelKernel dot_panel;  // nullptr: batched searches score with the tile (or row) kernels alone
};

/// The kernels of one code path, or nullptr when this CPU cannot run it. best resolves here.
[[nodiscard]] const KernelTable* kernel_table(Kernel kernel) noexcept;

}  // namespace weir::core::detail
