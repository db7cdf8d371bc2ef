#pragma once
// The ledger's arithmetic over one channel's sequence space (one arena incarnation): the spans the
// files account for (recorded blocks, gap rows) swept once in order, never block by block.
// Private to the audit. Thread: any.
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "weir/ledger/audit.hpp"

namespace weir::ledger::detail {

inline constexpr std::uint8_t kRecordedKind = kReasonCount;  // a span of recorded blocks; below: a gap reason
inline constexpr std::uint8_t kDeletedKind = kReasonCount + 1;  // a stretch a deleted file held: counts only where
                                                                 // nothing else accounts for it

/// Sequences [lo, hi) of one kind: recorded blocks, or a gap row's blocks with its reason.
struct Span {
  std::uint64_t lo = 0, hi = 0;
  std::uint8_t kind = kRecordedKind;
};

/// What one channel's files (of one incarnation) and the run record say.
struct Evidence {
  std::vector<Span> spans;
  std::uint64_t dropped_at_source = 0;  // blocks of dropped_at_source rows (no sequence numbers)
  std::uint64_t durable = 0;            // recorded block rows in files closed before the last sync
  std::optional<std::uint64_t> first;   // the record's first_sequence
  std::optional<std::uint64_t> written; // the record's written
};

/// Appends the rows of one file's block_sequence as spans: consecutive sequences of one kind
/// (recorded, or for blocks flagged core::kBlockGapFlag the reason in their flags' low 8 bits,
/// h5::flagged_row_reason) make one span.
void add_blocks(const std::vector<std::uint64_t>& sequence, const std::vector<std::uint32_t>& flags,
                std::vector<Span>& spans);

/// The ledger of one sequence space: first, end, written, recorded, duplicates, gaps, unaccounted,
/// tail (blocks past the spans up to the record's written, counted under `tail_reason`).
/// Leaves channel, durable and incarnations alone.
[[nodiscard]] ChannelLedger sweep(Evidence evidence, std::uint8_t tail_reason);

/// One remaining file's reach in a channel's sequence space (its blocks and gap rows), with its segment.
struct Reach {
  std::uint64_t segment = 0;
  std::uint64_t lo = 0, hi = 0;  // [lo, hi)
};

/// The stretches of a channel's sequence space [first, end) that files retention deleted held, as
/// kDeletedKind spans: between two remaining files (in segment order), before the first or after the
/// last, each where a deleted segment number lies; the whole space when no file remains.
[[nodiscard]] std::vector<Span> deleted_spans(std::vector<Reach> reaches, const std::vector<std::uint64_t>& deleted_segments,
                                              std::uint64_t first, std::uint64_t end);

/// Adds one incarnation's ledger to a channel's total (sequence spaces laid end to end).
void add_incarnation(ChannelLedger& total, const ChannelLedger& part);

}  // namespace weir::ledger::detail
