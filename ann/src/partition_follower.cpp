// PartitionFollower: the arena's vectors of one partition, mirrored into the HNSW index.
#include "partition_follower.hpp"

#include <algorithm>
#include <thread>

namespace weir::ann::detail {

namespace {

constexpr int kCopyAttempts = 4;  // copies of a row a writer keeps changing before the follower waits for its pulse

}  // namespace

PartitionFollower::PartitionFollower(const core::Arena& arena, HnswIndex& index, std::uint32_t part_id)
    : arena_(&arena),
      index_(&index),
      vectors_(arena),
      slots_(arena.region(core::Region::slots)),
      slot_stride_(arena.geometry().slot_stride),
      rows_(vectors_.rows()),
      part_bit_(std::uint64_t{1} << part_id),
      tracked_(rows_),
      published_(std::make_unique<std::atomic<std::uint64_t>[]>(rows_)),
      raw_(index.dim()),
      prepared_(index.dim()) {}

const core::SlotHeader& PartitionFollower::slot_header(std::uint32_t slot) const noexcept {
  return *reinterpret_cast<const core::SlotHeader*>(slots_ + std::uint64_t{slot} * slot_stride_);
}

bool PartitionFollower::labelled(std::uint32_t slot) const noexcept {
  // Exact label ids, not the Bloom mask: another label may share PART's mask bits. Relaxed: the
  // caller re-reads the slot's generation after, and a change of labels alone pulses nothing anyway.
  return (slot_header(slot).label_ids.load(std::memory_order_relaxed) & part_bit_) != 0;
}

void PartitionFollower::drop(std::uint32_t slot) noexcept {
  Tracked& t = tracked_[slot];
  if (!t.indexed) return;
  (void)index_->remove(slot);
  t.indexed = false;
  published_[slot].store(0, std::memory_order_release);  // pairs with indexed_generation's acquire
  deletes_.fetch_add(1, std::memory_order_relaxed);
}

void PartitionFollower::refresh(std::uint32_t slot) noexcept {
  if (slot < rows_) refresh_with(slot, raw_, prepared_);
}

void PartitionFollower::refresh_with(std::uint32_t slot, std::span<float> raw, std::span<float> prepared) noexcept {
  const core::SlotHeader& s = slot_header(slot);
  Tracked& t = tracked_[slot];
  for (int attempt = 0; attempt < kCopyAttempts; ++attempt) {
    const std::uint32_t generation = s.generation.load(std::memory_order_acquire);  // pairs with insert's release
    if (!labelled(slot)) return drop(slot);
    const core::KeyHandle handle{slot, generation};
    core::VectorView view;
    const core::VectorStatus viewed = vectors_.view(handle, view);
    if (viewed == core::VectorStatus::busy) return;  // its writer pulses again when done
    if (viewed != core::VectorStatus::ok) return drop(slot);  // deleted, reused without a vector, torn
    const std::uint64_t epoch = view.epoch();
    if (t.indexed && t.generation == generation && t.epoch == epoch) return;  // nothing new
    // The copy goes through get()'s seqlock: it may be newer than `epoch`, never older, so a write
    // that lands meanwhile is indexed again on its own pulse, never missed.
    const core::VectorStatus copied = vectors_.get(handle, raw);
    if (copied == core::VectorStatus::busy) continue;
    if (copied != core::VectorStatus::ok) return drop(slot);
    if (s.generation.load(std::memory_order_acquire) != generation) continue;  // reused meanwhile
    index_->prepare(raw, prepared);
    if (!index_->add(slot, prepared)) {
      refused_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    t = Tracked{epoch, generation, true};
    published_[slot].store(std::uint64_t{generation} << 1 | 1U, std::memory_order_release);
    inserts_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
}

void PartitionFollower::rescan() noexcept {
  for (std::uint32_t slot = 0; slot < rows_; ++slot)
    if (tracked_[slot].indexed || labelled(slot)) refresh_with(slot, raw_, prepared_);
}

std::uint64_t PartitionFollower::build(std::uint32_t threads) {
  std::vector<std::uint32_t> todo;
  for (std::uint32_t slot = 0; slot < rows_; ++slot)
    if (labelled(slot)) todo.push_back(slot);
  const std::uint64_t before = inserts();
  threads = std::clamp<std::uint32_t>(threads, 1U, static_cast<std::uint32_t>(std::max<std::size_t>(todo.size(), 1)));
  std::atomic<std::size_t> next{0};
  constexpr std::size_t kChunk = 64;  // slots a build thread takes at a time
  auto work = [&](std::span<float> raw, std::span<float> prepared) {
    for (;;) {
      const std::size_t begin = next.fetch_add(kChunk, std::memory_order_relaxed);  // a ticket: orders nothing
      if (begin >= todo.size()) return;
      const std::size_t end = std::min(begin + kChunk, todo.size());
      for (std::size_t i = begin; i < end; ++i) refresh_with(todo[i], raw, prepared);
    }
  };
  std::vector<std::thread> pool;
  std::vector<std::vector<float>> buffers(2 * std::size_t{threads}, std::vector<float>(index_->dim()));
  for (std::uint32_t i = 1; i < threads; ++i) pool.emplace_back(work, std::span<float>(buffers[2 * i]), std::span<float>(buffers[2 * i + 1]));
  work(raw_, prepared_);
  for (std::thread& thread : pool) thread.join();
  return inserts() - before;
}

bool PartitionFollower::indexed_generation(std::uint32_t slot, std::uint32_t& generation) const noexcept {
  if (slot >= rows_) return false;
  const std::uint64_t v = published_[slot].load(std::memory_order_acquire);
  generation = static_cast<std::uint32_t>(v >> 1);
  return (v & 1U) != 0;
}

}  // namespace weir::ann::detail
