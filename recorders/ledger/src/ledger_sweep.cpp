// The ledger's arithmetic: spans sorted into boundary events and swept once; between two
// consecutive boundaries every sequence is covered by the same spans, so each stretch is counted
// whole (recorded, a gap reason, duplicated, unaccounted) whatever its length.
#include "ledger_sweep.hpp"

#include <algorithm>

#include "weir/core/arena_layout.hpp"
#include "weir/h5/recording_format.hpp"

namespace weir::ledger::detail {

namespace {

constexpr std::size_t kKinds = kReasonCount + 2;  // the gap reasons, then recorded, then deleted
constexpr auto kDroppedAtSource = static_cast<std::size_t>(h5::GapReason::dropped_at_source);

struct Event {
  std::uint64_t at = 0;
  std::uint8_t kind = 0;
  bool opens = false;
};

// A recorded row flagged as a gap: the reason in its flags (h5::flagged_row_reason).
std::uint8_t gap_kind(std::uint32_t flags) noexcept {
  return static_cast<std::uint8_t>(h5::flagged_row_reason(flags));
}

}  // namespace

void add_blocks(const std::vector<std::uint64_t>& sequence, const std::vector<std::uint32_t>& flags,
                std::vector<Span>& spans) {
  const std::size_t rows = std::min(sequence.size(), flags.size());
  for (std::size_t i = 0; i < rows; ++i) {
    const std::uint64_t s = sequence[i];
    if (s == h5::kUnwrittenSequence) break;
    const std::uint8_t kind = (flags[i] & core::kBlockGapFlag) != 0 ? gap_kind(flags[i]) : kRecordedKind;
    if (i > 0 && !spans.empty() && spans.back().kind == kind && spans.back().hi == s) {
      spans.back().hi = s + 1;
    } else {
      spans.push_back(Span{s, s + 1, kind});
    }
  }
}

ChannelLedger sweep(Evidence evidence, std::uint8_t tail_reason) {
  ChannelLedger out;
  std::erase_if(evidence.spans, [](const Span& s) { return s.hi <= s.lo; });  // markers (recorder_restart rows)
  std::vector<Event> events;
  events.reserve(evidence.spans.size() * 2);
  std::uint64_t lowest = UINT64_MAX, highest = 0;
  for (const Span& s : evidence.spans) {
    events.push_back(Event{s.lo, s.kind, true});
    events.push_back(Event{s.hi, s.kind, false});
    lowest = std::min(lowest, s.lo);
    highest = std::max(highest, s.hi);
  }
  const bool any = !evidence.spans.empty();
  out.first = evidence.first ? (any ? std::min(*evidence.first, lowest) : *evidence.first) : (any ? lowest : 0);
  const std::uint64_t evidence_end = any ? highest : out.first;
  out.end = std::max(evidence_end, evidence.written.value_or(0));
  out.end = std::max(out.end, out.first);
  out.tail = out.end - evidence_end;
  out.gaps[tail_reason] += out.tail;

  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.at < b.at; });
  std::array<std::uint64_t, kKinds> open{};  // spans of each kind covering the current stretch
  std::uint64_t covering = 0, covered = 0;  // covering: spans other than deleted stretches
  std::uint64_t at = out.first;
  for (const Event& e : events) {
    if (e.at > at && covering == 0 && open[kDeletedKind] > 0) {
      out.deleted += e.at - at;
      covered += e.at - at;
    } else if (e.at > at && covering > 0) {
      const std::uint64_t length = e.at - at;
      covered += length;
      if (covering > 1) out.duplicates += length;
      if (open[kRecordedKind] > 0) {
        out.recorded += length;
      } else {
        const auto reason = static_cast<std::size_t>(std::find_if(open.begin(), open.end(), [](std::uint64_t n) {
                                                       return n > 0;
                                                     }) - open.begin());
        out.gaps[reason] += length;
      }
    }
    at = std::max(at, e.at);
    const std::uint64_t counts = e.kind == kDeletedKind ? 0 : 1;
    if (e.opens) {
      ++open[e.kind];
      covering += counts;
    } else {
      --open[e.kind];
      covering -= counts;
    }
  }
  out.unaccounted = evidence_end - out.first - covered;
  out.gaps[kDroppedAtSource] += evidence.dropped_at_source;
  out.written = out.end - out.first + evidence.dropped_at_source;
  out.durable = std::min(evidence.durable, out.recorded);
  return out;
}

std::vector<Span> deleted_spans(std::vector<Reach> reaches, const std::vector<std::uint64_t>& deleted_segments,
                                std::uint64_t first, std::uint64_t end) {
  std::vector<Span> out;
  if (deleted_segments.empty() || end <= first) return out;
  const auto deleted_between = [&](std::uint64_t after, std::uint64_t before) {  // a deleted segment in (after, before)
    return std::any_of(deleted_segments.begin(), deleted_segments.end(),
                       [&](std::uint64_t s) { return s > after && s < before; });
  };
  const auto add = [&](std::uint64_t lo, std::uint64_t hi) {
    lo = std::max(lo, first);
    hi = std::min(hi, end);
    if (hi > lo) out.push_back(Span{lo, hi, kDeletedKind});
  };
  std::erase_if(reaches, [](const Reach& r) { return r.hi <= r.lo; });
  if (reaches.empty()) {
    add(first, end);
    return out;
  }
  std::sort(reaches.begin(), reaches.end(), [](const Reach& a, const Reach& b) { return a.segment < b.segment; });
  constexpr std::uint64_t kNone = UINT64_MAX;
  if (*std::min_element(deleted_segments.begin(), deleted_segments.end()) < reaches.front().segment)
    add(first, reaches.front().lo);
  for (std::size_t i = 0; i + 1 < reaches.size(); ++i)
    if (deleted_between(reaches[i].segment, reaches[i + 1].segment)) add(reaches[i].hi, reaches[i + 1].lo);
  if (deleted_between(reaches.back().segment, kNone)) add(reaches.back().hi, end);
  return out;
}

void add_incarnation(ChannelLedger& total, const ChannelLedger& part) {
  if (total.incarnations == 0) {
    total.first = part.first;
    total.end = part.first;
  }
  total.end += part.end - part.first;
  total.written += part.written;
  total.recorded += part.recorded;
  total.duplicates += part.duplicates;
  for (std::size_t r = 0; r < kReasonCount; ++r) total.gaps[r] += part.gaps[r];
  total.unaccounted += part.unaccounted;
  total.deleted += part.deleted;
  total.tail += part.tail;
  total.durable += part.durable;
  ++total.incarnations;
}

}  // namespace weir::ledger::detail
