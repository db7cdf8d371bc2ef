// Channel consumers: registration in the consumer table, in-place reads, exact loss counting.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "backing.hpp"
#include "channel_access.hpp"
#include "weir/core/assert.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/detail/seqlock.hpp"

namespace weir::core {

namespace {

constexpr std::uint32_t kBeatEvery = 64;  // reads between heartbeat stamps (a clock read each)
constexpr int kEnvelopeAttempts = 4;      // reads of the pyramid before envelope() gives up on a writer that races it

// The row's counters have one writer, its owner: a plain add, not a locked one. Readers of the row
// (`weir ls`, snapshots) see the old or the new value.
void bump(std::atomic<std::uint64_t>& counter, std::uint64_t by) noexcept {
  counter.store(counter.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
}

}  // namespace

Result<ChannelReader> ChannelReader::open(const Arena& arena, std::string_view channel, ConsumerPolicy policy,
                                          std::string_view consumer_name, StartAt start, std::uint64_t sequence) {
  auto index = find_channel(arena, channel);
  if (!index) return tl::make_unexpected(index.error());
  const std::string what = "consumer of channel '" + std::string(channel) + "'";
  if (arena.read_only()) return fail(Errc::permission_denied, what + ": registering needs a writable mapping");
  ConsumerRow* rows = detail::consumer_rows(arena);
  const std::uint32_t capacity = arena.geometry().consumer_capacity;
  const std::uint32_t me = detail::current_pid();
  ConsumerRow* row = nullptr;
  for (int pass = 0; pass < 2 && row == nullptr; ++pass) {
    for (std::uint32_t r = 0; r < capacity && row == nullptr; ++r) {
      std::uint32_t pid = rows[r].pid.load(std::memory_order_acquire);
      const bool take = pid == 0 || (pass == 1 && !pid_alive(pid));  // reap dead consumers on the second pass
      if (take && rows[r].pid.compare_exchange_strong(pid, me, std::memory_order_acq_rel)) {
        row = &rows[r];
        detail::retire_consumer(arena, *row);  // a dead process's row may still count for its channel
      }
    }
  }
  if (row == nullptr)
    return fail(Errc::invalid_argument, what + ": the consumer table is full (" + std::to_string(capacity) + " rows)");
  const ChannelDesc* d = detail::channel_desc(arena, *index);
  const std::uint64_t head = d->head.load(std::memory_order_acquire);
  std::uint64_t cursor = 0;
  switch (start) {
    case StartAt::oldest: cursor = head > d->ring_blocks ? head - d->ring_blocks + 1 : 0; break;
    case StartAt::newest: cursor = head > 0 ? head - 1 : 0; break;
    case StartAt::sequence: cursor = sequence; break;
  }
  row->active.store(0, std::memory_order_relaxed);
  row->channel.store(*index, std::memory_order_relaxed);
  row->cursor.store(cursor, std::memory_order_relaxed);
  row->policy.store(static_cast<std::uint32_t>(policy), std::memory_order_relaxed);
  row->heartbeat_ns.store(static_cast<std::uint64_t>(core::monotonic_ns()), std::memory_order_relaxed);
  row->blocks_read.store(0, std::memory_order_relaxed);
  row->samples_read.store(0, std::memory_order_relaxed);
  row->blocks_lost.store(0, std::memory_order_relaxed);
  row->registered_ns.store(static_cast<std::uint64_t>(core::realtime_ns()), std::memory_order_relaxed);
  std::memset(row->name, 0, sizeof(row->name));
  std::memcpy(row->name, consumer_name.data(), std::min(consumer_name.size(), sizeof(row->name) - 1));
  for (auto* counter : {&row->blocks_out, &row->blocks_skipped, &row->errors, &row->proc_p50_ns, &row->proc_p99_ns,
                        &row->bytes_out})
    counter->store(0, std::memory_order_relaxed);
  std::memset(row->kind, 0, sizeof(row->kind));
  ChannelDesc* desc = detail::channel_desc(arena, *index);
  if (policy == ConsumerPolicy::lossless) desc->lossless_readers.fetch_add(1, std::memory_order_acq_rel);
  row->active.store(1, std::memory_order_release);  // every field above first: writers read them after this
  // The writer's cached room in the ring ignores us until it sees the epoch move; it then finds the
  // row active (the release here pairs with its acquire before it scans the table again).
  if (policy == ConsumerPolicy::lossless) desc->lossless_epoch.fetch_add(1, std::memory_order_acq_rel);
  return ChannelReader(arena, *index, row);
}

ChannelReader::ChannelReader(const Arena& arena, std::uint32_t index, ConsumerRow* row) noexcept
    : arena_(&arena), desc_(detail::channel_desc(arena, index)), row_(row), index_(index) {}

ChannelReader::ChannelReader(ChannelReader&& o) noexcept
    : arena_(o.arena_), desc_(o.desc_), row_(o.row_), index_(o.index_), reads_since_beat_(o.reads_since_beat_) {
  o.row_ = nullptr;
}

ChannelReader::~ChannelReader() {
  if (row_ == nullptr || !arena_->is_open()) return;
  if (row_->pid.load(std::memory_order_relaxed) != detail::current_pid()) return;  // a forked child's copy
  detail::retire_consumer(*arena_, *row_);  // a lossless writer stops counting us first
  row_->pid.store(0, std::memory_order_release);
}

void ChannelReader::set_kind(std::string_view kind) noexcept {
  char text[sizeof(ConsumerRow::kind)] = {};
  std::memcpy(text, kind.data(), std::min(kind.size(), sizeof(text) - 1));
  std::memcpy(row_->kind, text, sizeof(text));  // racy readers see old or new bytes; `weir ls` only prints it
}

std::uint64_t ChannelReader::cursor() const noexcept { return row_->cursor.load(std::memory_order_relaxed); }

namespace {
constexpr std::uint64_t kGapPeekBlocks = 4;  // blocks a lapped reader looks at for the gap run it met
}  // namespace

NextStatus ChannelReader::next(BlockView& out, std::uint64_t& lost) noexcept {
  lost = 0;
  std::uint64_t c = row_->cursor.load(std::memory_order_relaxed);  // only this reader moves it
  const std::uint64_t head = desc_->head.load(std::memory_order_acquire);  // pairs with publish
  const auto policy = static_cast<ConsumerPolicy>(row_->policy.load(std::memory_order_relaxed));
  if (head == 0 || c >= head) {
    beat();  // idle, and alive
    return NextStatus::empty;
  }
  if (policy == ConsumerPolicy::latest) {
    c = head - 1;  // a scope wants the newest block only; skipped blocks are not losses to it
  } else if (head - c > desc_->ring_blocks) {
    // Lapped: every block before head - ring has been overwritten (that one may be, its state says).
    // Unless the oldest block left is a gap whose run began before: then the writer jumped over
    // them (a skip() longer than the ring) and they are that run's, for its reason.
    // The oldest block may be overwritten while we look (the writer goes on): then the next ones.
    std::uint64_t resume = head - desc_->ring_blocks;
    out.flags = 0;
    for (std::uint64_t b = resume; b < resume + kGapPeekBlocks && b < head; ++b) {
      const BlockHeader* oldest = detail::block_at(*arena_, *desc_, b);
      const std::uint64_t state = oldest->state.load(std::memory_order_acquire);
      const std::uint32_t flags = oldest->flags.load(std::memory_order_relaxed);
      const std::uint64_t from = oldest->gap_from.load(std::memory_order_relaxed);
      std::atomic_thread_fence(std::memory_order_acquire);
      if (state != block_committed_state(b) || oldest->state.load(std::memory_order_relaxed) != state) continue;
      if ((flags & kBlockGapFlag) != 0 && from < b) {
        if (from <= c) {
          out.flags = flags;  // [c, b) all of the run: the blocks before b were its too
          resume = b;
        } else {
          resume = from;  // [c, from) the writer lapped us; the run itself on the next call
        }
      }
      break;
    }
    lost = resume - c;
    bump(row_->blocks_lost, lost);
    row_->cursor.store(resume, std::memory_order_release);
    return NextStatus::lost;
  }
  const BlockHeader* b = detail::block_at(*arena_, *desc_, c);
  const std::uint64_t state = b->state.load(std::memory_order_acquire);  // pairs with the commit store
  if (state != block_committed_state(c)) {
    if (state < block_committed_state(c)) return NextStatus::empty;  // its writer died before committing
    lost = 1;  // overwritten between our head load and now
    out.flags = 0;
    bump(row_->blocks_lost, 1);
    row_->cursor.store(c + 1, std::memory_order_release);
    return NextStatus::lost;
  }
  out.flags = b->flags.load(std::memory_order_relaxed);
  if ((out.flags & kBlockGapFlag) != 0) {  // a gap the writer published: no data, one block lost
    if (policy == ConsumerPolicy::latest) return NextStatus::empty;
    lost = 1;
    bump(row_->blocks_lost, 1);
    row_->cursor.store(c + 1, std::memory_order_release);
    return NextStatus::lost;
  }
  out.data = reinterpret_cast<const std::byte*>(b + 1);
  out.samples = b->samples.load(std::memory_order_relaxed);
  out.sequence = c;
  out.realtime_ns = b->realtime_ns.load(std::memory_order_relaxed);
  out.monotonic_ns = b->monotonic_ns.load(std::memory_order_relaxed);
  out.first_sample = b->first_sample.load(std::memory_order_relaxed);
  out.state = &b->state;
  out.expected_state = state;
  if (policy == ConsumerPolicy::latest) row_->cursor.store(c, std::memory_order_relaxed);
  return NextStatus::ok;
}

bool ChannelReader::done(const BlockView& out) noexcept {
  const bool valid = out.valid();
  if (valid) {
    bump(row_->blocks_read, 1);
    bump(row_->samples_read, out.samples);
  } else {
    bump(row_->blocks_lost, 1);  // overwritten while we used it
  }
  if (++reads_since_beat_ >= kBeatEvery) beat();
  row_->cursor.store(out.sequence + 1, std::memory_order_release);  // frees the slot for a lossless writer
  return valid;
}

void ChannelReader::beat() noexcept {
  reads_since_beat_ = 0;
  row_->heartbeat_ns.store(static_cast<std::uint64_t>(core::monotonic_ns()), std::memory_order_relaxed);
}

NextStatus ChannelReader::read_copy(std::span<std::byte> dst, BlockView& meta, std::uint64_t& lost) noexcept {
  for (;;) {
    const NextStatus st = next(meta, lost);
    if (st != NextStatus::ok) return st;
    const std::size_t bytes = std::min(dst.size(), std::size_t{meta.samples} * desc_->sample_bytes);
    detail::seqlock_copy_out(dst.data(), meta.data, bytes);
    if (done(meta)) return NextStatus::ok;
    lost = 1;
    return NextStatus::lost;
  }
}

void envelope(const Arena& arena, std::uint32_t channel, std::uint64_t first_sample, std::uint64_t count,
              std::span<float> mins, std::span<float> maxs) noexcept {
  WEIR_ENFORCE(channel < arena.geometry().channel_capacity, "envelope: channel index past the channel table");
  const ChannelDesc& d = *detail::channel_desc(arena, channel);
  const std::size_t columns = std::min(mins.size(), maxs.size());
  std::fill(mins.begin(), mins.end(), std::numeric_limits<float>::quiet_NaN());
  std::fill(maxs.begin(), maxs.end(), std::numeric_limits<float>::quiet_NaN());
  if (columns == 0 || count == 0) return;
  const double per_column = static_cast<double>(count) / static_cast<double>(columns);
  // The coarsest level whose entries are still no wider than a column: never more reads than needed.
  std::uint32_t level = 0;
  while (level + 1 < d.pyramid_levels && static_cast<double>(detail::pyramid_span(d, level + 1)) <= per_column)
    ++level;
  // A level only remembers pyramid_entries entries, less one block (the writer may be overwriting the
  // oldest ones with the next block): go coarser until it reaches back to `first`.
  std::uint64_t written = d.samples_written.load(std::memory_order_acquire);
  const std::uint64_t back = written > first_sample ? written - first_sample : 0;
  while (level + 1 < d.pyramid_levels &&
         back + d.samples_per_block > std::uint64_t{d.pyramid_entries} * detail::pyramid_span(d, level))
    ++level;
  const std::uint64_t span = detail::pyramid_span(d, level);
  const std::uint64_t first_entry = first_sample / span;
  const std::uint64_t last_entry = (first_sample + count + span - 1) / span;
  // Entry e is in once samples_written reaches (e+1)*span. Its slot is reused by entry e+P (P entries
  // a level), which the writer may store while it works on samples up to samples_written plus one
  // block. So after reading, samples_written tells the oldest entry that cannot have changed under
  // us; when the writer got further than that, read again from later on.
  const std::uint64_t per_level = d.pyramid_entries;
  const auto oldest_intact = [&](std::uint64_t samples) {
    const std::uint64_t reach = (samples + d.samples_per_block) / span;
    return reach > per_level ? reach - per_level : 0;
  };
  std::uint64_t start = std::max(first_entry, oldest_intact(written));
  for (int attempt = 0; attempt < kEnvelopeAttempts; ++attempt) {
    const std::uint64_t complete = std::min(last_entry, written / span);
    for (std::uint64_t e = start; e < complete; ++e) {
      float lo = 0, hi = 0;
      unpack_range(detail::pyramid_entry(arena, d, level, e)->range.load(std::memory_order_relaxed), lo, hi);
      const std::uint64_t at = e * span < first_sample ? 0 : e * span - first_sample;
      const auto column = std::min(columns - 1, static_cast<std::size_t>(static_cast<double>(at) / per_column));
      mins[column] = std::isnan(mins[column]) ? lo : std::min(mins[column], lo);
      maxs[column] = std::isnan(maxs[column]) ? hi : std::max(maxs[column], hi);
    }
    std::atomic_thread_fence(std::memory_order_acquire);  // the entries are read before samples_written
    const std::uint64_t after = d.samples_written.load(std::memory_order_relaxed);
    if (oldest_intact(after) <= start) return;
    // Overtaken: start further on, by twice what the writer moved meanwhile, and read again.
    start = std::max(start, oldest_intact(after) + 2 * ((after - written) / span) + 1);
    written = d.samples_written.load(std::memory_order_acquire);
    std::fill(mins.begin(), mins.end(), std::numeric_limits<float>::quiet_NaN());
    std::fill(maxs.begin(), maxs.end(), std::numeric_limits<float>::quiet_NaN());
  }
}

}  // namespace weir::core
