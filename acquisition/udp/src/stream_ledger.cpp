// Who lost a missing packet: a refused packet that should have filled its place (malformed), the
// kernel's full socket buffer (kernel_drop), else the source (source_loss). Gap blocks say the same.
#include <algorithm>

#include "weir/udp/stream_assembler.hpp"

namespace weir::acq {

std::uint64_t StreamAssembler::packet_samples() const noexcept {
  if (step_ != 0) return step_;
  return front_.valid && front_.samples != 0 ? front_.samples : 1;
}

// What the port dropped or refused may be what a hole of this stream is missing, if it happened
// after the stream's newest packet and not long before the packet that reveals the hole: a packet
// of the stream can arrive up to the reorder window late, so port counts older than that window's
// packets of the stream (kept in a small ring) are ruled out. A packet placed past a hole moves what
// is left into the hole's budget. (A late packet placed in a hole moves nothing.)
void StreamAssembler::mark_port(std::uint64_t first) noexcept {
  if (first < max_end_) return;
  PortDrops& p = port();
  if (first > max_end_) {
    kernel_budget_ += p.kernel - std::min(p.kernel, kernel_base_);
    refused_budget_ += p.refused - std::min(p.refused, refused_base_);
    kernel_base_ = p.kernel;
    refused_base_ = p.refused;
  }
  const std::uint64_t step = packet_samples();
  const std::uint64_t window = std::min<std::uint64_t>(
      kPortMarks - 1, (std::uint64_t{config_.reorder_blocks} * config_.samples_per_block + step - 1) / step + 1);
  const PortMark& old = port_marks_[(marks_pushed_ + kPortMarks - window) % kPortMarks];
  if (marks_pushed_ >= window) {
    kernel_base_ = std::max(kernel_base_, old.kernel);
    refused_base_ = std::max(refused_base_, old.refused);
  }
  port_marks_[marks_pushed_ % kPortMarks] = PortMark{p.kernel, p.refused};
  ++marks_pushed_;
}

// No hole left among the staged blocks (a late packet filled the last): what the holes' budgets hold
// was not theirs; it goes back to wait for the next hole, within the window as ever.
void StreamAssembler::settle_budgets() noexcept {
  if (max_end_ - head_ * config_.samples_per_block != staged_) return;
  kernel_base_ -= std::min(kernel_base_, kernel_budget_);
  refused_base_ -= std::min(refused_base_, refused_budget_);
  kernel_budget_ = refused_budget_ = 0;
}

// The refused packets of this stream whose place is in [lo, hi): taken (at most `most`). Those whose
// place has passed without a hole there wait for any hole instead.
std::uint64_t StreamAssembler::take_bad_slots(std::uint64_t lo, std::uint64_t hi, std::uint64_t most) noexcept {
  std::uint64_t taken = 0;
  std::uint32_t kept = 0;
  for (std::uint32_t i = 0; i < bad_slots_; ++i) {
    const std::uint64_t at = bad_slot_[i];
    if (at >= lo && at < hi && taken < most) {
      ++taken;
    } else if (at < lo) {
      ++bad_pending_;
    } else {
      bad_slot_[kept++] = at;
    }
  }
  bad_slots_ = kept;
  return taken;
}

StreamAssembler::Split StreamAssembler::claim(std::uint64_t missing_samples, std::uint64_t lo, std::uint64_t hi) noexcept {
  const std::uint64_t step = packet_samples();
  const std::uint64_t missing = (missing_samples + step - 1) / step;
  PortDrops& p = port();
  Split s;
  s.malformed = take_bad_slots(lo, hi, missing);  // this stream's refused packets that belong here
  const std::uint64_t waiting = std::min(missing - s.malformed, bad_pending_);  // ... or anywhere
  bad_pending_ -= waiting;
  s.malformed += waiting;
  const std::uint64_t refused = std::min({missing - s.malformed, refused_budget_, p.refused - p.refused_claimed});
  refused_budget_ -= refused;
  p.refused_claimed += refused;
  s.malformed += refused;
  port_refusals_claimed_ += refused;
  s.kernel = std::min({missing - s.malformed, kernel_budget_, p.kernel - p.kernel_claimed});
  kernel_budget_ -= s.kernel;
  p.kernel_claimed += s.kernel;
  s.source = missing - s.malformed - s.kernel;
  // Refusals this hole could have been, already taken by another stream's hole: if a late packet
  // later shows that hole was not missing at all, its refusal moves to this one (PortDrops).
  p.refused_starved += std::min(s.source, refused_budget_);
  counters_.missing_packets += missing;
  counters_.malformed_missing += s.malformed;
  counters_.kernel_drop += s.kernel;
  counters_.source_loss += s.source;
  return s;
}

// `blocks` gap blocks, missing `missing_samples` samples: published run-length, each run under the
// reason of the packets it misses (a single block under the reason of most of them).
void StreamAssembler::gap_blocks(std::uint64_t blocks, std::uint64_t missing_samples, std::uint64_t lo,
                                 std::uint64_t hi) noexcept {
  const Split s = claim(missing_samples, lo, hi);
  counters_.gap_blocks += blocks;
  const std::uint64_t packets = s.malformed + s.kernel + s.source;
  if (blocks == 1 || packets == 0) {
    const core::GapReason reason = s.malformed >= s.kernel && s.malformed >= s.source ? core::GapReason::malformed
                                   : s.kernel >= s.source                              ? core::GapReason::kernel_drop
                                                                                       : core::GapReason::source_loss;
    pend_gap(blocks, reason);
    return;
  }
  // Spread over the run in proportion (which of the run's blocks each packet missed is unknown).
  const auto share = [&](std::uint64_t part) {
    return static_cast<std::uint64_t>(static_cast<double>(blocks) * static_cast<double>(part) /
                                      static_cast<double>(packets));
  };
  const std::uint64_t malformed = share(s.malformed);
  const std::uint64_t kernel = share(s.kernel);
  pend_gap(malformed, core::GapReason::malformed);
  pend_gap(kernel, core::GapReason::kernel_drop);
  pend_gap(blocks - malformed - kernel, core::GapReason::source_loss);
}

// Gap blocks wait until the run ends (a block with data, another reason, the end), so that a run
// the window closes piece by piece still reaches the channel as one skip().
void StreamAssembler::pend_gap(std::uint64_t blocks, core::GapReason reason) noexcept {
  if (blocks == 0) return;
  if (pending_gap_ != 0 && pending_reason_ != reason) flush_gap();
  pending_gap_ += blocks;
  pending_reason_ = reason;
}

void StreamAssembler::flush_gap() noexcept {
  if (pending_gap_ == 0) return;
  sink_->skip(pending_gap_, pending_reason_);
  pending_gap_ = 0;
}

// A packet that came after its block closed was counted missing: it is late, not lost.
void StreamAssembler::take_back_late() noexcept {
  if (counters_.source_loss > 0) {
    --counters_.source_loss;
  } else if (counters_.kernel_drop > 0) {
    --counters_.kernel_drop;
    --port().kernel_claimed;
  } else if (counters_.malformed_missing > 0) {
    --counters_.malformed_missing;
    if (port_refusals_claimed_ > 0) {  // a refusal of the port's: it explains a hole that went without
      --port_refusals_claimed_;
      PortDrops& p = port();
      if (p.refused_starved > 0) {
        --p.refused_starved;
        ++p.refused_moved;
      } else {
        --p.refused_claimed;
      }
    } else {
      ++bad_pending_;
    }
  }
}

}  // namespace weir::acq
