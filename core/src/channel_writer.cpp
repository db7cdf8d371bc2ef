// The channel writer: claim a block slot in place, publish it, keep the pyramid, pulse the groups.
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

// Min and max of one level-0 entry's kPyramidFactor samples: a fixed-size loop over locals, which
// the compiler vectorises (the running accumulators stay out of memory until the entry is done).
template <class T>
void entry_range(const std::byte* p, float& lo, float& hi) noexcept {
  static_assert(kPyramidFactor == 16, "the halving tree below is written for 16 samples");
  T v[kPyramidFactor];
  std::memcpy(v, p, sizeof(v));
  float l[8], h[8];
  // A halving tree of independent lanes: element-wise min/max the compiler turns into vector ops
  // (a running scalar min is a serial chain it must not reorder).
  for (int i = 0; i < 8; ++i) {
    const auto a = static_cast<float>(v[i]), b = static_cast<float>(v[i + 8]);
    l[i] = a < b ? a : b;
    h[i] = a > b ? a : b;
  }
  for (int w = 4; w >= 1; w /= 2)
    for (int i = 0; i < w; ++i) {
      l[i] = l[i] < l[i + w] ? l[i] : l[i + w];
      h[i] = h[i] > h[i + w] ? h[i] : h[i + w];
    }
  lo = l[0] < lo ? l[0] : lo;
  hi = h[0] > hi ? h[0] : hi;
}

// The same for a partial entry of n < kPyramidFactor samples (block edges only).
template <class T>
void partial_range(const std::byte* p, std::uint32_t n, float& lo, float& hi) noexcept {
  for (std::uint32_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, p + std::size_t{i} * sizeof(T), sizeof(T));
    const auto f = static_cast<float>(v);
    lo = f < lo ? f : lo;
    hi = f > hi ? f : hi;
  }
}

// Complex samples are drawn by their real part: read them as pairs and keep the first.
struct RealOfComplex {
  float re, im;
  explicit operator float() const noexcept { return re; }
};

void store_entry(PyramidEntry& e, std::uint64_t entry, float lo, float hi) noexcept {
  e.tag.store(0, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);  // tag 0 is visible before the new values
  e.min_bits.store(std::bit_cast<std::uint32_t>(lo), std::memory_order_relaxed);
  e.max_bits.store(std::bit_cast<std::uint32_t>(hi), std::memory_order_relaxed);
  e.tag.store(entry + 1, std::memory_order_release);
}

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
      seq_(desc_->head.load(std::memory_order_acquire)) {}

ChannelWriter::ChannelWriter(ChannelWriter&& o) noexcept
    : arena_(o.arena_), desc_(o.desc_), index_(o.index_), seq_(o.seq_), claimed_(o.claimed_),
      acc_(o.acc_) {
  o.desc_ = nullptr;
}

ChannelWriter::~ChannelWriter() {
  if (desc_ == nullptr || !arena_->is_open()) return;
  std::uint32_t me = detail::current_pid();
  desc_->writer_pid.compare_exchange_strong(me, 0, std::memory_order_acq_rel);
}

// Whether every live lossless reader of this channel has room for block seq; reaps dead ones.
bool ChannelWriter::wait_for_lossless(std::uint64_t seq) noexcept {
  if (desc_->lossless_readers.load(std::memory_order_acquire) == 0) return true;  // lossy readers never hold us
  ConsumerRow* rows = detail::consumer_rows(*arena_);
  const std::uint32_t capacity = arena_->geometry().consumer_capacity;
  const auto full_row = [&]() -> ConsumerRow* {
    for (std::uint32_t r = 0; r < capacity; ++r) {
      ConsumerRow& row = rows[r];
      if (row.active.load(std::memory_order_acquire) == 0 || row.channel.load(std::memory_order_relaxed) != index_ ||
          static_cast<ConsumerPolicy>(row.policy.load(std::memory_order_relaxed)) != ConsumerPolicy::lossless)
        continue;
      if (seq - row.cursor.load(std::memory_order_acquire) < desc_->ring_blocks) continue;  // pairs with done()
      return &row;
    }
    return nullptr;
  };
  ConsumerRow* blocking = full_row();
  if (blocking == nullptr) return true;
  if (desc_->full_policy == FullPolicy::drop) return false;
  desc_->writer_waits.fetch_add(1, std::memory_order_relaxed);
  const std::int64_t deadline = detail::monotonic_ns() + desc_->wait_timeout_ns;
  std::int64_t next_pid_check = 0;
  for (; blocking != nullptr; blocking = full_row()) {
    const std::uint32_t pid = blocking->pid.load(std::memory_order_relaxed);
    const std::int64_t now = detail::monotonic_ns();
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
  b->state.store(detail::writing_state(seq_), std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);  // readers of the old block see "writing" before new bytes
  out = {reinterpret_cast<std::byte*>(b + 1), std::size_t{desc_->samples_per_block} * desc_->sample_bytes};
  claimed_ = true;
  return ClaimStatus::ok;
}

void ChannelWriter::update_pyramid(const std::byte* samples, std::uint32_t count, std::uint64_t first_sample) noexcept {
  switch (desc_->dtype) {
    case Dtype::i8: update_pyramid_as<std::int8_t>(samples, count, first_sample); break;
    case Dtype::u8: update_pyramid_as<std::uint8_t>(samples, count, first_sample); break;
    case Dtype::i16: update_pyramid_as<std::int16_t>(samples, count, first_sample); break;
    case Dtype::u16: update_pyramid_as<std::uint16_t>(samples, count, first_sample); break;
    case Dtype::i32: update_pyramid_as<std::int32_t>(samples, count, first_sample); break;
    case Dtype::u32: update_pyramid_as<std::uint32_t>(samples, count, first_sample); break;
    case Dtype::i64: update_pyramid_as<std::int64_t>(samples, count, first_sample); break;
    case Dtype::f32: update_pyramid_as<float>(samples, count, first_sample); break;
    case Dtype::f64: update_pyramid_as<double>(samples, count, first_sample); break;
    case Dtype::c64: update_pyramid_as<RealOfComplex>(samples, count, first_sample); break;
  }
}

template <class T>
void ChannelWriter::update_pyramid_as(const std::byte* samples, std::uint32_t count, std::uint64_t first_sample) noexcept {
  static_assert(kPyramidFactor > 0 && (kPyramidFactor & (kPyramidFactor - 1)) == 0, "a power of two: masks, no division");
  Accumulator& a0 = acc_[0];
  for (std::uint32_t i = 0; i < count;) {
    const std::uint64_t sample = first_sample + i;
    const auto offset = static_cast<std::uint32_t>(sample & (kPyramidFactor - 1));
    const std::byte* p = samples + std::size_t{i} * sizeof(T);
    std::uint32_t take = kPyramidFactor - offset;
    if (offset == 0 && count - i >= kPyramidFactor) {
      entry_range<T>(p, a0.lo, a0.hi);  // the common case: a whole entry
    } else {
      take = std::min(take, count - i);
      partial_range<T>(p, take, a0.lo, a0.hi);
    }
    i += take;
    if (((sample + take) & (kPyramidFactor - 1)) != 0) continue;  // the entry goes on in the next block
    // An entry is complete: store it and fold it into the level above, and so on up.
    std::uint64_t entry = sample / kPyramidFactor;
    for (std::uint32_t level = 0; level < kPyramidLevels; ++level) {
      Accumulator& a = acc_[level];
      store_entry(*detail::pyramid_entry(*arena_, *desc_, level, entry), entry, a.lo, a.hi);
      const bool last_level = level + 1 == kPyramidLevels;
      if (!last_level) {
        Accumulator& up = acc_[level + 1];
        up.lo = std::min(up.lo, a.lo);
        up.hi = std::max(up.hi, a.hi);
      }
      a = Accumulator{};
      if (last_level || (entry + 1) % kPyramidFactor != 0) break;
      entry /= kPyramidFactor;
    }
  }
}

void ChannelWriter::publish(std::uint32_t samples, std::uint64_t realtime_ns, std::uint64_t monotonic_ns,
                            std::uint32_t flags) noexcept {
  if (!claimed_) return;
  claimed_ = false;
  if (samples > desc_->samples_per_block) samples = desc_->samples_per_block;
  BlockHeader* b = detail::block_at(*arena_, *desc_, seq_);
  const std::uint64_t first_sample = desc_->samples_written.load(std::memory_order_relaxed);
  update_pyramid(reinterpret_cast<const std::byte*>(b + 1), samples, first_sample);
  b->samples.store(samples, std::memory_order_relaxed);
  b->first_sample.store(first_sample, std::memory_order_relaxed);
  b->flags.store(flags & ~kBlockGapFlag, std::memory_order_relaxed);  // bit 31 is skip()'s alone
  b->realtime_ns.store(realtime_ns != 0 ? realtime_ns : static_cast<std::uint64_t>(detail::realtime_ns()),
                       std::memory_order_relaxed);
  b->monotonic_ns.store(monotonic_ns != 0 ? monotonic_ns : static_cast<std::uint64_t>(detail::monotonic_ns()),
                        std::memory_order_relaxed);
  b->state.store(detail::committed_state(seq_), std::memory_order_release);  // samples and header first
  desc_->samples_written.store(first_sample + samples, std::memory_order_relaxed);
  desc_->last_publish_ns.store(b->realtime_ns.load(std::memory_order_relaxed), std::memory_order_relaxed);
  desc_->head.store(++seq_, std::memory_order_release);  // the block is visible before the head moves
  pulse();
}

void ChannelWriter::skip(std::uint64_t blocks) noexcept {
  if (blocks == 0 || claimed_) return;
  const std::uint64_t ring = desc_->ring_blocks;
  const bool jump = blocks > ring;
  if (jump) {
    // No reader could see more than the last `ring` of them anyway: jump the head past the rest once
    // every lossless reader has read what the ring holds, so nothing unread is overwritten. Readers
    // then find themselves lapped and count the jump lost.
    (void)wait_for_lossless(seq_ + ring - 1);
    seq_ += blocks - ring;
    desc_->head.store(seq_, std::memory_order_release);
    blocks = ring;
  }
  const std::uint64_t first_sample = desc_->samples_written.load(std::memory_order_relaxed);
  for (; blocks > 0; --blocks) {
    // After a jump every slot of the ring has been read already; otherwise wait as claim() does (a
    // gap is lost anyway: on a timeout it goes ahead).
    if (!jump) (void)wait_for_lossless(seq_);
    BlockHeader* b = detail::block_at(*arena_, *desc_, seq_);
    b->state.store(detail::writing_state(seq_), std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    b->samples.store(0, std::memory_order_relaxed);
    b->flags.store(kBlockGapFlag, std::memory_order_relaxed);
    b->first_sample.store(first_sample, std::memory_order_relaxed);
    b->realtime_ns.store(0, std::memory_order_relaxed);
    b->monotonic_ns.store(0, std::memory_order_relaxed);
    b->state.store(detail::committed_state(seq_), std::memory_order_release);
    desc_->head.store(++seq_, std::memory_order_release);
  }
  pulse();
}

void ChannelWriter::pulse() noexcept {
  std::byte* g = arena_->region(Region::groups);
  const detail::SignalView v{&arena_->header(), reinterpret_cast<SignalGroup*>(g),
                             reinterpret_cast<LogEntry*>(g + logs_offset_in_groups()),
                             reinterpret_cast<WatcherRow*>(arena_->region(Region::watchers)),
                             arena_->geometry().group_log_entries};
  const std::uint64_t bits = detail::channel_group_bits(v, *desc_);
  if (bits != 0) detail::pulse_groups(v, bits, index_ | detail::kChannelItem | ((seq_ - 1) << 32));
}

}  // namespace weir::core
