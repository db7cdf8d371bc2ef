#pragma once
// The floors under a signal group's wake-up: two processes hand a sequence number back and forth
// through two shared 32-bit words, sleeping on them with FUTEX_WAIT and waking each other with
// FUTEX_WAKE, or spinning on them. Nothing else: no groups, no waiter bitmap, no key lookup.
// Private to bench/.
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <type_traits>

#include "bare_seqlock.hpp"
#include "harness.hpp"
#include "weir/core/limits.hpp"

namespace weir::bench {

inline constexpr std::int64_t kNsPerSecond = 1'000'000'000;
inline constexpr int kSpinClockMask = 63;  // a spinning receiver reads the clock every 64 turns

/// What receive() learned.
enum class [[nodiscard]] RecvStatus : std::uint8_t {
  ok,           // the awaited message arrived; latency_ns is set
  timed_out,    // nothing within the timeout: the other side is gone or hung
  wrong_value,  // something arrived, but not the awaited sequence number: a lost or merged wake
};

/// One direction of the bare ping-pong, one cache line, in a MAP_SHARED mapping made before fork.
struct alignas(core::kCacheLine) BareWord {  // off size
  std::atomic<std::uint32_t> seq;            //   0   4  the futex word: the last sequence number sent
  std::uint32_t reserved;                    //   4   4  zero
  std::atomic<std::int64_t> sent_ns;         //   8   8  the sender's core::monotonic_ns() just before it stored seq
};
static_assert(std::atomic<std::uint32_t>::is_always_lock_free && std::atomic<std::int64_t>::is_always_lock_free);
static_assert(std::is_standard_layout_v<BareWord> && sizeof(BareWord) == core::kCacheLine);
static_assert(offsetof(BareWord, sent_ns) == 8);

inline long futex_call(std::atomic<std::uint32_t>& word, int op, std::uint32_t value,
                       const timespec* timeout) noexcept {
  // Shared (not PRIVATE) ops, as weir's doorbells: the word lives in a mapping two processes share.
  return ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), op, value, timeout, nullptr, 0);
}

enum class BareMode : std::uint8_t {
  futex,  // the receiver sleeps in FUTEX_WAIT; the sender always calls FUTEX_WAKE
  spin,   // the receiver spins on the word; the sender only stores
};

/// One process's end of the bare ping-pong: sends on `out`, receives on `in`.
/// Thread: one thread per end; the two ends live in two processes.
class BareEnd {
 public:
  BareEnd(BareWord& out, BareWord& in, BareMode mode) noexcept : out_(out), in_(in), mode_(mode) {}

  /// Stamps and sends sequence number seq (truncated to the 32-bit word) and wakes the other end.
  [[nodiscard]] bool send(std::uint64_t seq) noexcept {
    out_.sent_ns.store(core::monotonic_ns(), std::memory_order_relaxed);  // ordered before seq by its release store
    out_.seq.store(static_cast<std::uint32_t>(seq), std::memory_order_release);  // the stamp is visible first
    if (mode_ == BareMode::futex) (void)futex_call(out_.seq, FUTEX_WAKE, 1, nullptr);
    return true;
  }

  /// Waits up to timeout_ns for sequence number seq; latency_ns is core::monotonic_ns() once it is here, less
  /// the sender's stamp.
  RecvStatus receive(std::uint64_t seq, std::int64_t timeout_ns, std::int64_t& latency_ns) noexcept {
    const auto want = static_cast<std::uint32_t>(seq);
    const std::int64_t deadline_ns = core::monotonic_ns() + timeout_ns;
    for (int i = 0;; ++i) {
      const std::uint32_t got = in_.seq.load(std::memory_order_acquire);  // pairs with send's release
      if (got == want) {
        const std::int64_t sent_ns = in_.sent_ns.load(std::memory_order_relaxed);  // after the acquire above
        latency_ns = core::monotonic_ns() - sent_ns;
        return RecvStatus::ok;
      }
      if (got != want - 1) return RecvStatus::wrong_value;  // strict alternation: only the last one
      if (mode_ == BareMode::spin) {
        cpu_relax();
        if ((i & kSpinClockMask) == kSpinClockMask && core::monotonic_ns() > deadline_ns) return RecvStatus::timed_out;
        continue;
      }
      const std::int64_t left_ns = deadline_ns - core::monotonic_ns();
      if (left_ns <= 0) return RecvStatus::timed_out;
      const timespec ts{static_cast<time_t>(left_ns / kNsPerSecond), static_cast<long>(left_ns % kNsPerSecond)};
      (void)futex_call(in_.seq, FUTEX_WAIT, got, &ts);  // returns at once if seq moved past `got`
    }
  }

 private:
  BareWord& out_;
  BareWord& in_;
  BareMode mode_;
};

}  // namespace weir::bench
