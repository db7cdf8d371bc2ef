#pragma once
// Copies of a channel's blocks for readers that do not register as consumers (snapshots, a web
// scope, a C or Python client): one block or a range of blocks with their metadata, each validated
// against its block state word, every block that could not be copied reported with the reason.
// Protocol: docs/design/read_api.md.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "weir/core/arena.hpp"
#include "weir/core/arena_layout.hpp"
#include "weir/core/error.hpp"

namespace weir::core {

enum class [[nodiscard]] BlockStatus : std::uint8_t {
  ok = 0,           // samples and metadata of the block, unchanged while copied
  overwritten = 1,  // the writer reused the slot for a later block, before or while it was copied
  unwritten = 2,    // not published yet (or its writer died before committing it)
  too_small = 3,    // copy() only: the destination cannot hold a full block (block_bytes())
};

/// "ok", "overwritten", ... for messages and JSON.
[[nodiscard]] const char* block_status_name(BlockStatus status) noexcept;

/// One block's metadata as copied; only sequence and status mean anything unless status is ok.
struct BlockRecord {
  std::uint64_t sequence = 0;
  std::uint64_t offset_bytes = 0;  // where its samples start in the destination
  std::uint64_t realtime_ns = 0;   // acquisition time, ns since the epoch
  std::uint64_t monotonic_ns = 0;  // acquisition time, CLOCK_MONOTONIC
  std::uint64_t first_sample = 0;  // index of its first sample in the channel's stream
  std::uint32_t samples = 0;       // at most samples_per_block
  std::uint32_t flags = 0;         // driver flags; kBlockGapFlag marks a gap (no samples)
  BlockStatus status = BlockStatus::unwritten;
};

/// What one copy_range() did.
struct BlockRange {
  std::size_t visited = 0;      // records written: blocks [first, first + visited); go on from there
  std::uint64_t bytes = 0;      // bytes of dst filled, copied blocks back to back
  std::uint64_t copied = 0;     // records with ok
  std::uint64_t overwritten = 0;
  std::uint64_t unwritten = 0;
};

/// Reads one channel's ring in place without registering: it never holds the writer back, and the
/// writer may overwrite a block while it is copied (then reported overwritten, never handed out).
/// Holds only pointers into the mapping. Thread: any number of copiers in any threads and processes.
class BlockCopier {
 public:
  /// Binds to ready channel `channel` (an index, as ChannelInfo::index), after checking that its
  /// descriptor fits the mapping. Fails with not_found (no such ready channel) or layout_mismatch
  /// (an inconsistent descriptor), naming the channel. Thread: any.
  [[nodiscard]] static Result<BlockCopier> open(const Arena& arena, std::uint32_t channel);
  /// As above, by name.
  [[nodiscard]] static Result<BlockCopier> open(const Arena& arena, std::string_view name);

  [[nodiscard]] const ChannelDesc& desc() const noexcept { return *desc_; }
  [[nodiscard]] std::uint32_t sample_bytes() const noexcept { return desc_->sample_bytes; }
  [[nodiscard]] std::uint32_t samples_per_block() const noexcept { return desc_->samples_per_block; }
  [[nodiscard]] std::uint32_t ring_blocks() const noexcept { return desc_->ring_blocks; }
  /// Payload bytes of a full block: a destination this long holds any block.
  [[nodiscard]] std::uint64_t block_bytes() const noexcept {
    return std::uint64_t{desc_->samples_per_block} * desc_->sample_bytes;
  }
  /// Blocks published so far, i.e. the next block's sequence; the ring holds at most the last
  /// ring_blocks() of them. Thread: any.
  [[nodiscard]] std::uint64_t head() const noexcept { return desc_->head.load(std::memory_order_acquire); }

  /// Copies block `sequence` (its samples to the start of dst) and its metadata into out; returns
  /// out.status. Thread: any. Allocates nothing.
  BlockStatus copy(std::uint64_t sequence, std::span<std::byte> dst, BlockRecord& out) const noexcept;
  /// Block `sequence`'s metadata alone (no samples), validated as copy() validates it; returns
  /// out.status. Thread: any. Allocates nothing.
  BlockStatus peek(std::uint64_t sequence, BlockRecord& out) const noexcept;
  /// Copies blocks first, first + 1, ... before end, oldest first (the writer overwrites the oldest
  /// first, so this order stays ahead of it), their samples back to back in dst, one record per block
  /// visited, copied or not. Stops at end, when records is full, or when dst has no room for another
  /// full block. Thread: any. Allocates nothing.
  BlockRange copy_range(std::uint64_t first, std::uint64_t end, std::span<std::byte> dst,
                        std::span<BlockRecord> records) const noexcept;

 private:
  BlockCopier(const Arena& arena, const ChannelDesc& desc) noexcept;
  // dst null: metadata only.
  BlockStatus copy_one(std::uint64_t sequence, std::byte* dst, BlockRecord& out) const noexcept;

  const ChannelDesc* desc_;
  const std::byte* ring_;
};

}  // namespace weir::core
