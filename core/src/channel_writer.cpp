// The channel writer: claim a block slot in place, publish it, pulse the groups (the pyramid it
// keeps: channel_pyramid.cpp).
#include <time.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>

#include "backing.hpp"
#include "channel_access.hpp"
#include "signal_publish.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/detail/seqlock.hpp"

namespace weir::core {

namespace {

constexpr std::int64_t kLosslessPollNs = 20'000;  // a writer held back by a lossless reader looks this often
constexpr std::int64_t kLosslessPidCheckNs = 10'000'000;  // ... and checks the holder is still alive this often

bool writer_held(std::uint32_t pid) noexcept { return pid != 0 && pid_alive(pid); }  // ours counts: one writer object

}  // namespace

Result<ChannelWriter> ChannelWriter::open(const Arena& arena, std::string_view name) {
  auto index = find_channel(arena, name);
  if (!index) return tl::make_unexpected(index.error());
  if (arena.read_only()) return fail(Errc::permission_denied, "channel '" + std::string(name) + "': arena is read-only");
  ChannelDesc* d = detail::channel_desc(arena, *index);
  const std::uint32_t me = detail::current_pid();
  std::uint32_t holder = d->writer_pid.load(std::memory_order_acquire);
  for (;;) {
    if (writer_held(holder))
      return fail(Errc::already_exists, "channel '" + std::string(name) + "' already has a writer: pid " +
                                            std::to_string(holder));
    // Free or a dead writer's: take it. A dead writer's half-written block is simply rewritten.
    if (d->writer_pid.compare_exchange_weak(holder, me, std::memory_order_acq_rel)) break;
  }
  return ChannelWriter(arena, *index);
}

ChannelWriter::ChannelWriter(const Arena& arena, std::uint32_t index) noexcept
    : arena_(&arena), desc_(detail::channel_desc(arena, index)), index_(index),
      seq_(desc_->head.load(std::memory_order_acquire)),
      samples_written_(desc_->samples_written.load(std::memory_order_relaxed)) {}

ChannelWriter::ChannelWriter(ChannelWriter&& o) noexcept
    : arena_(o.arena_), desc_(o.desc_), index_(o.index_), seq_(o.seq_), claimed_(o.claimed_), acc_(o.acc_),
      samples_written_(o.samples_written_), groups_version_seen_(o.groups_version_seen_), group_bits_(o.group_bits_),
      room_until_(o.room_until_), room_epoch_(o.room_epoch_) {
  o.desc_ = nullptr;
}

ChannelWriter::~ChannelWriter() {
  if (desc_ == nullptr || !arena_->is_open()) return;
  std::uint32_t me = detail::current_pid();
  desc_->writer_pid.compare_exchange_strong(me, 0, std::memory_order_acq_rel);
}

// Whether every live lossless reader of this channel has room for block seq; reaps dead ones.
// Readers only ever move their cursors forward, so the room measured once holds until the writer
// reaches it or a new lossless reader registers (the epoch moves): only then is the table scanned.
bool ChannelWriter::wait_for_lossless(std::uint64_t seq) noexcept {
  if (desc_->lossless_readers.load(std::memory_order_acquire) == 0) return true;  // lossy readers never hold us
  const std::uint32_t epoch = desc_->lossless_epoch.load(std::memory_order_acquire);  // pairs with registration
  if (seq < room_until_ && epoch == room_epoch_) return true;
  ConsumerRow* rows = detail::consumer_rows(*arena_);
  const std::uint32_t capacity = arena_->geometry().consumer_capacity;
  const std::uint64_t ring = desc_->ring_blocks;
  // Measures the room every lossless reader leaves; returns a reader that has none for seq.
  const auto full_row = [&]() -> ConsumerRow* {
    std::uint64_t room = ~std::uint64_t{0};
    ConsumerRow* full = nullptr;
    for (std::uint32_t r = 0; r < capacity; ++r) {
      ConsumerRow& row = rows[r];
      if (row.active.load(std::memory_order_acquire) == 0 || row.channel.load(std::memory_order_relaxed) != index_ ||
          static_cast<ConsumerPolicy>(row.policy.load(std::memory_order_relaxed)) != ConsumerPolicy::lossless)
        continue;
      const std::uint64_t until = row.cursor.load(std::memory_order_acquire) + ring;  // pairs with done()
      room = std::min(room, until);
      if (seq >= until && full == nullptr) full = &row;
    }
    room_until_ = room;
    room_epoch_ = epoch;
    return full;
  };
  ConsumerRow* blocking = full_row();
  if (blocking == nullptr) return true;
  if (desc_->full_policy == FullPolicy::drop) return false;
  desc_->writer_waits.fetch_add(1, std::memory_order_relaxed);
  const std::int64_t deadline = core::monotonic_ns() + desc_->wait_timeout_ns;
  std::int64_t next_pid_check = 0;
  for (; blocking != nullptr; blocking = full_row()) {
    const std::uint32_t pid = blocking->pid.load(std::memory_order_relaxed);
    const std::int64_t now = core::monotonic_ns();
    // pid_alive reads /proc: look every kLosslessPidCheckNs, not on every poll.
    const bool check = now >= next_pid_check;
    if (check) next_pid_check = now + kLosslessPidCheckNs;
    if (check && !pid_alive(pid)) {  // killed while registered lossless: reap it so it never holds us back
      detail::retire_consumer(*arena_, *blocking);
      std::uint32_t expected = pid;
      blocking->pid.compare_exchange_strong(expected, 0, std::memory_order_acq_rel);
      continue;
    }
    if (now >= deadline) return false;
    const timespec pause{0, kLosslessPollNs};
    nanosleep(&pause, nullptr);
  }
  return true;
}

ClaimStatus ChannelWriter::claim(std::span<std::byte>& out) noexcept {
  if (!wait_for_lossless(seq_)) {
    desc_->dropped_at_source.fetch_add(1, std::memory_order_relaxed);  // a counter: nothing orders on it
    claimed_ = false;
    return ClaimStatus::dropped;
  }
  BlockHeader* b = detail::block_at(*arena_, *desc_, seq_);
  b->state.store(block_writing_state(seq_), std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);  // readers of the old block see "writing" before new bytes
  out = {reinterpret_cast<std::byte*>(b + 1), std::size_t{desc_->samples_per_block} * desc_->sample_bytes};
  claimed_ = true;
  return ClaimStatus::ok;
}

void ChannelWriter::publish(std::uint32_t samples, std::uint64_t realtime_ns, std::uint64_t monotonic_ns,
                            std::uint32_t flags) noexcept {
  if (!claimed_) return;
  claimed_ = false;
  if (samples > desc_->samples_per_block) samples = desc_->samples_per_block;
  BlockHeader* b = detail::block_at(*arena_, *desc_, seq_);
  const std::uint64_t first_sample = samples_written_;
  update_pyramid(reinterpret_cast<const std::byte*>(b + 1), samples, first_sample);
  b->samples.store(samples, std::memory_order_relaxed);
  b->first_sample.store(first_sample, std::memory_order_relaxed);
  b->flags.store(flags & ~kBlockGapFlag, std::memory_order_relaxed);  // bit 31 is skip()'s alone
  if (realtime_ns == 0) realtime_ns = static_cast<std::uint64_t>(core::realtime_ns());
  if (monotonic_ns == 0) monotonic_ns = static_cast<std::uint64_t>(core::monotonic_ns());
  b->realtime_ns.store(realtime_ns, std::memory_order_relaxed);
  b->monotonic_ns.store(monotonic_ns, std::memory_order_relaxed);
  b->state.store(block_committed_state(seq_), std::memory_order_release);  // samples and header first
  samples_written_ = first_sample + samples;
  // Three stores in a row to the line readers poll: one transfer of it per publish. samples_written
  // releases the pyramid entries this block completed (envelope() acquires it).
  desc_->samples_written.store(samples_written_, std::memory_order_release);
  desc_->last_publish_ns.store(realtime_ns, std::memory_order_relaxed);
  desc_->head.store(++seq_, std::memory_order_release);  // the block is visible before the head moves
  pulse();
}

void ChannelWriter::skip(std::uint64_t blocks, GapReason reason) noexcept {
  if (blocks == 0 || claimed_) return;
  const std::uint64_t from = seq_;
  const std::uint32_t flags = kBlockGapFlag | (static_cast<std::uint32_t>(reason) & kBlockGapReasonMask);
  const std::uint64_t ring = desc_->ring_blocks;
  const bool jump = blocks > ring;
  if (jump) {
    // No reader could see more than the last `ring` of them anyway: jump past the rest once every
    // lossless reader has read what the ring holds, so nothing unread is overwritten. The head moves
    // once, after the ring holds the run's last `ring` blocks: a reader lapped by the jump finds the
    // run (and its start, gap_from) in the oldest block it can read.
    (void)wait_for_lossless(seq_ + ring - 1);
    seq_ += blocks - ring;
    blocks = ring;
  }
  const std::uint64_t first_sample = samples_written_;
  for (; blocks > 0; --blocks) {
    // After a jump every slot of the ring has been read already; otherwise wait as claim() does (a
    // gap is lost anyway: on a timeout it goes ahead).
    if (!jump) (void)wait_for_lossless(seq_);
    BlockHeader* b = detail::block_at(*arena_, *desc_, seq_);
    b->state.store(block_writing_state(seq_), std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    b->samples.store(0, std::memory_order_relaxed);
    b->flags.store(flags, std::memory_order_relaxed);
    b->gap_from.store(from, std::memory_order_relaxed);
    b->first_sample.store(first_sample, std::memory_order_relaxed);
    b->realtime_ns.store(0, std::memory_order_relaxed);
    b->monotonic_ns.store(0, std::memory_order_relaxed);
    b->state.store(block_committed_state(seq_), std::memory_order_release);
    ++seq_;
    if (!jump) desc_->head.store(seq_, std::memory_order_release);
  }
  if (jump) desc_->head.store(seq_, std::memory_order_release);
  pulse();
}

void ChannelWriter::pulse() noexcept {
  // The group table rarely changes: rebuild the bits only when its version moves.
  const std::uint64_t version = arena_->header().groups_version.load(std::memory_order_acquire);
  if (version == groups_version_seen_ && group_bits_ == 0) return;
  std::byte* g = arena_->region(Region::groups);
  const detail::SignalView v{&arena_->header(), reinterpret_cast<SignalGroup*>(g),
                             reinterpret_cast<LogEntry*>(g + logs_offset_in_groups()),
                             reinterpret_cast<WatcherRow*>(arena_->region(Region::watchers)),
                             arena_->geometry().group_log_entries};
  if (version != groups_version_seen_) {
    group_bits_ = detail::channel_group_bits(v, *desc_);
    groups_version_seen_ = version;  // loaded first: a newer table only makes us rebuild once more
  }
  if (group_bits_ != 0) detail::pulse_groups(v, group_bits_, index_ | detail::kChannelItem | ((seq_ - 1) << 32));
}

}  // namespace weir::core
