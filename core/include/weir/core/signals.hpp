#pragma once
// Signal groups: a write pulses the groups its key's labels match, and watchers sleep on a futex
// until a pulse arrives. No polling. Protocol: docs/design/signals.md.
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "weir/core/arena.hpp"
#include "weir/core/arena_layout.hpp"
#include "weir/core/error.hpp"

namespace weir::core {

/// The Bloom mask of one label: kBloomBitsPerLabel bits chosen by the label's hash.
[[nodiscard]] std::uint64_t label_mask(std::string_view label) noexcept;
/// The Bloom mask every key carries for its own name, so watchers can subscribe by key.
[[nodiscard]] std::uint64_t key_self_mask(std::uint64_t key_hash) noexcept;

/// Gives a key its labels (creating the key, empty, if missing): its Bloom mask and exact label
/// ids, so writes to it pulse the groups of those labels. Cold path. Thread: any.
[[nodiscard]] Result<void> set_labels(const Arena& arena, std::string_view key, std::span<const std::string> labels);

struct GroupInfo {
  std::uint32_t index = 0;
  GroupKind kind = GroupKind::free;
  std::string name;
  std::uint64_t mask = 0;
  std::uint64_t pulses = 0;
  std::uint32_t subscribers = 0;
  std::uint64_t waiters = 0;  // bitmap of sleeping watcher rows
};

/// The group table of one arena: cold-path lookups and creation. Thread: any.
class GroupTable {
 public:
  explicit GroupTable(const Arena& arena) noexcept;

  /// Finds or creates the group for a label and counts one more subscriber.
  /// Fails with invalid_argument when the 64-group table (or the label dictionary) is full.
  [[nodiscard]] Result<std::uint32_t> acquire_label(std::string_view label);
  /// Finds or creates the group for one key's changes and counts one more subscriber.
  [[nodiscard]] Result<std::uint32_t> acquire_key(std::string_view key);
  /// Finds or creates the group for one channel's published blocks.
  [[nodiscard]] Result<std::uint32_t> acquire_channel(std::string_view channel);
  /// Drops one subscriber; the group is freed when none remain. Thread: any.
  void release(std::uint32_t group) noexcept;
  /// Finds or adds a label in the dictionary; returns its id (bit in a slot's label_ids).
  [[nodiscard]] Result<std::uint32_t> label_id(std::string_view label);
  [[nodiscard]] std::vector<GroupInfo> list() const;

 private:
  [[nodiscard]] Result<std::uint32_t> acquire(GroupKind kind, std::string_view name, std::uint64_t mask,
                                              std::uint32_t label_id);
  ArenaHeader* header_;
  SignalGroup* groups_;
  LabelEntry* labels_;
};

enum class [[nodiscard]] WaitStatus : std::uint8_t {
  pulsed,     // at least one subscribed group pulsed since the last wait
  timed_out,  // nothing arrived within the timeout
};

/// One change a watcher learned of: the KV slot that changed and its insert generation, or, when
/// channel is set, the channel index (in slot) and the low 32 bits of the published block's sequence.
struct Change {
  std::uint32_t group = 0;
  std::uint32_t slot = 0;
  std::uint32_t generation = 0;
  bool channel = false;
};

/// A waiting party: owns one watcher row (its doorbell futex) and subscriptions to groups.
/// Thread: one thread uses a Watcher at a time; publishers in any process ring it.
class Watcher {
 public:
  /// Claims a watcher row (reclaiming rows of dead processes). Fails when all rows are live.
  [[nodiscard]] static Result<Watcher> create(const Arena& arena);
  Watcher(Watcher&& other) noexcept;
  Watcher& operator=(Watcher&& other) = delete;
  Watcher(const Watcher&) = delete;
  Watcher& operator=(const Watcher&) = delete;
  ~Watcher();

  /// Subscribes to a label's group or a key's group. Cold path.
  [[nodiscard]] Result<std::uint32_t> subscribe_label(std::string_view label);
  [[nodiscard]] Result<std::uint32_t> subscribe_key(std::string_view key);
  [[nodiscard]] Result<std::uint32_t> subscribe_channel(std::string_view channel);

  /// Sleeps until a subscribed group pulses or timeout_ns passes. Spins up to spin_ns first
  /// (for consumers that own a core), then sleeps on the doorbell futex. Returns at once when a
  /// pulse arrived since the last call. Thread: the owning thread.
  WaitStatus wait(std::int64_t timeout_ns, std::int64_t spin_ns = 0) noexcept;

  /// Hands every change logged since the last drain to fn(const Change&), oldest first. Returns
  /// how many entries were lost because the group's log wrapped (the caller rescans then).
  template <class Fn>
  std::uint64_t drain(Fn&& fn) noexcept;

  [[nodiscard]] std::uint32_t row() const noexcept { return row_; }
  [[nodiscard]] std::uint64_t groups() const noexcept { return groups_mask_; }
  /// The doorbell futex word: an eventfd bridge or a test may wait on it directly.
  [[nodiscard]] const std::atomic<std::uint32_t>& doorbell() const noexcept { return rows_[row_].doorbell; }

 private:
  Watcher(const Arena& arena, std::uint32_t row) noexcept;
  [[nodiscard]] bool any_pulse() const noexcept;
  void note_pulses() noexcept;
  bool read_log(std::uint32_t group, std::uint64_t position, Change& out) const noexcept;
  [[nodiscard]] Result<std::uint32_t> add_group(Result<std::uint32_t> group);

  const Arena* arena_;
  SignalGroup* groups_;
  LogEntry* logs_;
  WatcherRow* rows_;
  std::uint32_t log_entries_;
  std::uint32_t row_;
  std::uint64_t groups_mask_ = 0;
  std::array<std::uint64_t, kGroupCount> seen_pulses_{};
  std::array<std::uint64_t, kGroupCount> cursor_{};  // next change-log position to read per group
};

template <class Fn>
std::uint64_t Watcher::drain(Fn&& fn) noexcept {
  std::uint64_t lost = 0;
  for (std::uint64_t bits = groups_mask_; bits != 0; bits &= bits - 1) {
    const auto g = static_cast<std::uint32_t>(__builtin_ctzll(bits));
    const std::uint64_t head = groups_[g].log_head.load(std::memory_order_acquire);
    if (head - cursor_[g] > log_entries_) {
      lost += head - cursor_[g] - log_entries_;
      cursor_[g] = head - log_entries_;
    }
    for (; cursor_[g] < head; ++cursor_[g]) {
      Change c;
      if (read_log(g, cursor_[g], c)) {
        fn(c);
      } else {
        ++lost;  // overwritten while we read it, or its writer has not finished: counted, not guessed
      }
    }
  }
  return lost;
}

}  // namespace weir::core
