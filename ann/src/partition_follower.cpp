// PartitionFollower: the arena's vectors of one partition, mirrored into the HNSW index.
#include "partition_follower.hpp"

#include <algorithm>
#include <thread>

namespace weir::ann::detail {

namespace {

constexpr int kCopyAttempts = 4;            // copies of a row a writer keeps changing before the follower waits for its pulse
constexpr std::size_t kParallelBatch = 64;  // changes worth starting the other threads for (a thread start costs ~50 us)

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
      published_(std::make_unique<std::atomic<std::uint64_t>[]>(rows_)) {}

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

void PartitionFollower::apply(std::span<const std::uint32_t> slots) {
  const std::uint32_t dim = index_->dim();
  while (buffers_.size() < 2 * std::size_t{threads_}) buffers_.emplace_back(dim);
  const std::uint32_t threads = slots.size() >= kParallelBatch ? threads_ : 1U;
  auto work = [&](std::uint32_t t) {
    const std::span<float> raw(buffers_[2 * t]), prepared(buffers_[2 * t + 1]);
    for (const std::uint32_t slot : slots)
      if (slot < rows_ && slot % threads == t) refresh_with(slot, raw, prepared);
  };
  std::vector<std::thread> pool;
  for (std::uint32_t t = 1; t < threads; ++t) pool.emplace_back(work, t);
  work(0);
  for (std::thread& thread : pool) thread.join();
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

void PartitionFollower::rescan() {
  scan_.clear();
  for (std::uint32_t slot = 0; slot < rows_; ++slot)
    if (tracked_[slot].indexed || labelled(slot)) scan_.push_back(slot);
  apply(scan_);
}

std::uint64_t PartitionFollower::build() {
  const std::uint64_t before = inserts();
  rescan();
  return inserts() - before;
}

bool PartitionFollower::indexed_generation(std::uint32_t slot, std::uint32_t& generation) const noexcept {
  if (slot >= rows_) return false;
  const std::uint64_t v = published_[slot].load(std::memory_order_acquire);
  generation = static_cast<std::uint32_t>(v >> 1);
  return (v & 1U) != 0;
}

}  // namespace weir::ann::detail
