// Signal groups: the group table and label dictionary (cold), publishing (hot), watchers (wait).
#include "weir/core/signals.hpp"

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "backing.hpp"
#include "pid_lock.hpp"
#include "signal_publish.hpp"
#include "weir/core/detail/hash.hpp"
#include "weir/core/detail/seqlock.hpp"
#include "weir/core/kv_store.hpp"

namespace weir::core {

namespace {

constexpr std::uint64_t kDeadWaiterRings = 64;  // a ring that wakes nobody checks the waiter's process once in this many

long futex(std::atomic<std::uint32_t>* word, int op, std::uint32_t value, const timespec* timeout) noexcept {
  // Shared (not PRIVATE) futex ops: the word lives in a mapping other processes share.
  return syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), op, value, timeout, nullptr, 0);
}

std::uint64_t mask_from_hash(std::uint64_t h) noexcept {
  std::uint64_t m = 0;
  for (std::uint32_t i = 0; i < kBloomBitsPerLabel; ++i) m |= std::uint64_t{1} << ((h >> (6 * i)) & 63U);
  return m;
}

LabelState label_state(const LabelEntry& e) noexcept {
  return static_cast<LabelState>(e.state.load(std::memory_order_acquire));  // pairs with the ready store
}

bool same_name(const char* stored, std::uint32_t stored_bytes, std::string_view name) noexcept {
  return stored_bytes == name.size() && std::memcmp(stored, name.data(), name.size()) == 0;
}

}  // namespace

std::uint64_t label_mask(std::string_view label) noexcept { return mask_from_hash(detail::hash_key(label)); }

std::uint64_t key_self_mask(std::uint64_t key_hash) noexcept {
  return mask_from_hash(detail::fold_mul(key_hash, 0x9e3779b97f4a7c15ULL));  // independent of home and tag bits
}

// ---- publisher ---------------------------------------------------------------------------------

namespace detail {

std::uint64_t refresh_group_bits(const SignalView& v, SlotHeader& s, const std::byte* key, std::uint32_t key_len,
                                 std::uint64_t version) noexcept {
  const std::uint64_t bits = match_group_bits(v, s.labels.load(std::memory_order_relaxed),
                                              s.label_ids.load(std::memory_order_relaxed), key, key_len);
  s.group_bits.store(bits, std::memory_order_relaxed);
  s.groups_seen.store(version, std::memory_order_relaxed);  // a cache: a stale version only costs a refresh
  return bits;
}

std::uint64_t match_group_bits(const SignalView& v, std::uint64_t labels, std::uint64_t ids, const std::byte* key,
                               std::uint32_t key_len) noexcept {
  std::uint64_t bits = 0;
  for (std::uint32_t g = 0; g < kGroupCount; ++g) {
    const SignalGroup& group = v.groups[g];
    const auto kind = static_cast<GroupKind>(group.kind.load(std::memory_order_acquire));
    const std::uint64_t m = group.mask.load(std::memory_order_relaxed);
    if (kind == GroupKind::free || (labels & m) != m) continue;  // the Bloom filter: cheap, may say yes wrongly
    const bool exact = kind == GroupKind::label
                           ? (ids >> group.label_id.load(std::memory_order_relaxed) & 1U) != 0
                           : same_name(group.name, group.name_bytes, {reinterpret_cast<const char*>(key), key_len});
    if (exact) bits |= std::uint64_t{1} << g;
  }
  return bits;
}

std::uint64_t channel_group_bits(const SignalView& v, ChannelDesc& d) noexcept {
  const std::uint64_t version = v.header->groups_version.load(std::memory_order_acquire);  // pairs with table edits
  if (d.groups_seen.load(std::memory_order_relaxed) == version) return d.group_bits.load(std::memory_order_relaxed);
  std::uint64_t bits = 0;
  for (std::uint32_t g = 0; g < kGroupCount; ++g) {
    const SignalGroup& group = v.groups[g];
    const auto kind = static_cast<GroupKind>(group.kind.load(std::memory_order_acquire));
    const std::uint64_t m = group.mask.load(std::memory_order_relaxed);
    if ((kind != GroupKind::label && kind != GroupKind::channel) || (d.labels & m) != m) continue;
    const bool exact = kind == GroupKind::label ? (d.label_ids >> group.label_id.load(std::memory_order_relaxed) & 1U) != 0
                                                : same_name(group.name, group.name_bytes, d.name);
    if (exact) bits |= std::uint64_t{1} << g;
  }
  d.group_bits.store(bits, std::memory_order_relaxed);
  d.groups_seen.store(version, std::memory_order_relaxed);
  return bits;
}

void pulse_groups(const SignalView& v, std::uint64_t bits, std::uint64_t item) noexcept {
  std::uint64_t wake = 0;
  for (std::uint64_t b = bits; b != 0; b &= b - 1) {
    SignalGroup& group = v.groups[__builtin_ctzll(b)];
    const std::uint64_t position = group.log_head.fetch_add(1, std::memory_order_relaxed);
    LogEntry& e = v.logs[std::uint64_t{static_cast<std::uint32_t>(__builtin_ctzll(b))} * v.log_entries +
                         (position & (v.log_entries - 1))];
    e.seq.store(0, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);  // seq 0 is visible before the new item
    e.item.store(item, std::memory_order_relaxed);
    e.seq.store(position + 1, std::memory_order_release);
    // seq_cst: the pulse and the waiters load form a Dekker pair with Watcher::wait.
    group.pulses.fetch_add(1, std::memory_order_seq_cst);
    wake |= group.waiters.load(std::memory_order_seq_cst);
  }
  for (; wake != 0; wake &= wake - 1) {
    const auto r = static_cast<std::uint32_t>(__builtin_ctzll(wake));
    WatcherRow& row = v.rows[r];
    row.doorbell.fetch_add(1, std::memory_order_release);
    const std::uint64_t rings = row.wakeups.fetch_add(1, std::memory_order_relaxed);
    v.header->wake_syscalls.fetch_add(1, std::memory_order_relaxed);  // a counter: nothing orders on it
    // A ring that wakes nobody is most often a waiter an earlier ring woke that has not run yet (its
    // bits go when it does): its process is looked up (a /proc read) on one ring in kDeadWaiterRings.
    if (futex(&row.doorbell, FUTEX_WAKE, INT_MAX, nullptr) == 0 && rings % kDeadWaiterRings == 0 &&
        !pid_alive(row.pid.load(std::memory_order_relaxed))) {
      // Nobody woke and the row's process is gone: it was killed while waiting. Drop its waiter
      // bits so later publishes make no syscall for it; the row itself is reclaimed on reuse.
      const std::uint64_t bit = std::uint64_t{1} << r;
      for (std::uint32_t g = 0; g < kGroupCount; ++g) v.groups[g].waiters.fetch_and(~bit, std::memory_order_relaxed);
    }
  }
}

}  // namespace detail

// ---- group table -------------------------------------------------------------------------------

GroupTable::GroupTable(const Arena& arena) noexcept
    : header_(&arena.header()),
      groups_(reinterpret_cast<SignalGroup*>(arena.region(Region::groups))),
      labels_(reinterpret_cast<LabelEntry*>(arena.region(Region::groups) + labels_offset_in_groups())) {}

Result<std::uint32_t> GroupTable::label_id(std::string_view label) {
  if (label.empty() || label.size() > sizeof(LabelEntry::name))
    return fail(Errc::invalid_argument, "label '" + std::string(label) + "': use 1 to " +
                                            std::to_string(sizeof(LabelEntry::name)) + " bytes");
  for (std::uint32_t i = 0; i < kLabelCapacity; ++i) {  // lock-free fast path: entries never change once ready
    const LabelEntry& e = labels_[i];
    if (label_state(e) == LabelState::ready && same_name(e.name, e.name_bytes, label)) return i;
  }
  detail::PidLock lock(header_->groups_lock);
  for (std::uint32_t i = 0; i < kLabelCapacity; ++i) {
    LabelEntry& e = labels_[i];
    const LabelState state = label_state(e);
    if (state == LabelState::ready && same_name(e.name, e.name_bytes, label)) return i;
    if (state == LabelState::free || state == LabelState::writing) {  // writing: its writer died holding the lock
      e.state.store(static_cast<std::uint32_t>(LabelState::writing), std::memory_order_relaxed);
      e.name_bytes = static_cast<std::uint32_t>(label.size());
      e.mask = label_mask(label);
      std::memset(e.name, 0, sizeof(e.name));
      std::memcpy(e.name, label.data(), label.size());
      e.state.store(static_cast<std::uint32_t>(LabelState::ready), std::memory_order_release);
      return i;
    }
  }
  return fail(Errc::invalid_argument, "label '" + std::string(label) + "': the label dictionary is full (" +
                                          std::to_string(kLabelCapacity) + " distinct labels per arena)");
}

Result<std::uint32_t> GroupTable::acquire(GroupKind kind, std::string_view name, std::uint64_t mask,
                                          std::uint32_t label_id) {
  if (name.size() > sizeof(SignalGroup::name))
    return fail(Errc::invalid_argument, "group '" + std::string(name) + "': longer than " +
                                            std::to_string(sizeof(SignalGroup::name)) + " bytes");
  detail::PidLock lock(header_->groups_lock);
  std::uint32_t free_group = kGroupCount;
  for (std::uint32_t g = 0; g < kGroupCount; ++g) {
    SignalGroup& group = groups_[g];
    const auto k = static_cast<GroupKind>(group.kind.load(std::memory_order_relaxed));
    if (k == kind && same_name(group.name, group.name_bytes, name)) {
      group.subscribers.fetch_add(1, std::memory_order_relaxed);
      return g;
    }
    if (k == GroupKind::free && free_group == kGroupCount) free_group = g;
  }
  if (free_group == kGroupCount)
    return fail(Errc::invalid_argument, "group '" + std::string(name) + "': the signal group table is full (" +
                                            std::to_string(kGroupCount) + " groups per arena)");
  SignalGroup& group = groups_[free_group];
  group.mask.store(mask, std::memory_order_relaxed);
  group.label_id.store(label_id, std::memory_order_relaxed);
  group.name_bytes = static_cast<std::uint32_t>(name.size());
  std::memset(group.name, 0, sizeof(group.name));
  std::memcpy(group.name, name.data(), name.size());
  group.subscribers.store(1, std::memory_order_relaxed);
  group.kind.store(static_cast<std::uint32_t>(kind), std::memory_order_release);  // the fields above first
  header_->groups_version.fetch_add(1, std::memory_order_acq_rel);  // slots rebuild their group bits
  return free_group;
}

Result<std::uint32_t> GroupTable::acquire_label(std::string_view label) {
  auto id = label_id(label);
  if (!id) return tl::make_unexpected(id.error());
  return acquire(GroupKind::label, label, label_mask(label), *id);
}

Result<std::uint32_t> GroupTable::acquire_channel(std::string_view channel) {
  if (channel.empty()) return fail(Errc::invalid_argument, "cannot watch a channel with an empty name");
  return acquire(GroupKind::channel, channel, label_mask("chan:" + std::string(channel)), 0);
}

Result<std::uint32_t> GroupTable::acquire_key(std::string_view key) {
  if (key.empty()) return fail(Errc::invalid_argument, "cannot watch an empty key");
  return acquire(GroupKind::key, key, key_self_mask(detail::hash_key(key)), 0);
}

void GroupTable::release(std::uint32_t g) noexcept {
  if (g >= kGroupCount) return;
  detail::PidLock lock(header_->groups_lock);
  SignalGroup& group = groups_[g];
  if (group.subscribers.load(std::memory_order_relaxed) == 0 || group.subscribers.fetch_sub(1) != 1) return;
  group.kind.store(static_cast<std::uint32_t>(GroupKind::free), std::memory_order_release);
  header_->groups_version.fetch_add(1, std::memory_order_acq_rel);
}

std::vector<GroupInfo> GroupTable::list() const {
  std::vector<GroupInfo> out;
  for (std::uint32_t g = 0; g < kGroupCount; ++g) {
    const SignalGroup& group = groups_[g];
    const auto kind = static_cast<GroupKind>(group.kind.load(std::memory_order_acquire));
    if (kind == GroupKind::free) continue;
    out.push_back(GroupInfo{g, kind, std::string(group.name, std::min<std::uint32_t>(group.name_bytes, sizeof(group.name))),
                            group.mask.load(std::memory_order_relaxed), group.pulses.load(std::memory_order_relaxed),
                            group.subscribers.load(std::memory_order_relaxed),
                            group.waiters.load(std::memory_order_relaxed)});
  }
  return out;
}

Result<void> set_labels(const Arena& arena, std::string_view key, std::span<const std::string> labels) {
  GroupTable table(arena);
  std::uint64_t mask = 0, ids = 0;
  for (const auto& label : labels) {
    auto id = table.label_id(label);
    if (!id) return tl::make_unexpected(id.error());
    mask |= label_mask(label);
    ids |= std::uint64_t{1} << *id;
  }
  KvStore kv(arena);
  KeyHandle h;
  KvStatus st = kv.resolve(key, h, true);
  if (st == KvStatus::ok) st = kv.set_labels(key, mask, ids);
  if (st != KvStatus::ok)
    return fail(Errc::invalid_argument, "labels of key '" + std::string(key) + "': " + kv_status_text(st));
  return {};
}

// ---- watchers ----------------------------------------------------------------------------------

namespace {

// Frees a dead process's watcher row: its waiter bits and its subscriptions.
void reclaim_row(const Arena& arena, WatcherRow* rows, std::uint32_t r) noexcept {
  auto* groups = reinterpret_cast<SignalGroup*>(arena.region(Region::groups));
  const std::uint64_t bit = std::uint64_t{1} << r;
  for (std::uint32_t g = 0; g < kGroupCount; ++g) groups[g].waiters.fetch_and(~bit, std::memory_order_acq_rel);
  GroupTable table(arena);
  for (std::uint64_t subs = rows[r].groups.exchange(0); subs != 0; subs &= subs - 1)
    table.release(static_cast<std::uint32_t>(__builtin_ctzll(subs)));
}

}  // namespace

Result<Watcher> Watcher::create(const Arena& arena) {
  if (arena.read_only()) return fail(Errc::permission_denied, arena.location().describe() + ": watching needs a writable mapping");
  auto* rows = reinterpret_cast<WatcherRow*>(arena.region(Region::watchers));
  const std::uint32_t me = detail::current_pid();
  for (int pass = 0; pass < 2; ++pass) {
    for (std::uint32_t r = 0; r < kWatcherCapacity; ++r) {
      std::uint32_t pid = rows[r].pid.load(std::memory_order_acquire);
      if (pid == 0 && rows[r].pid.compare_exchange_strong(pid, me, std::memory_order_acq_rel)) return Watcher(arena, r);
      if (pass == 1 && pid != 0 && !pid_alive(pid) && rows[r].pid.compare_exchange_strong(pid, me)) {
        reclaim_row(arena, rows, r);  // killed while watching: its bits would keep publishers making syscalls
        return Watcher(arena, r);
      }
    }
  }
  return fail(Errc::invalid_argument, arena.location().describe() + ": all " + std::to_string(kWatcherCapacity) +
                                          " watcher rows are held by live processes");
}

Watcher::Watcher(const Arena& arena, std::uint32_t row) noexcept
    : arena_(&arena),
      groups_(reinterpret_cast<SignalGroup*>(arena.region(Region::groups))),
      logs_(reinterpret_cast<LogEntry*>(arena.region(Region::groups) + logs_offset_in_groups())),
      rows_(reinterpret_cast<WatcherRow*>(arena.region(Region::watchers))),
      log_entries_(arena.geometry().group_log_entries),
      row_(row) {
  rows_[row_].groups.store(0, std::memory_order_relaxed);
}

Watcher::Watcher(Watcher&& o) noexcept
    : arena_(o.arena_),
      groups_(o.groups_),
      logs_(o.logs_),
      rows_(o.rows_),
      log_entries_(o.log_entries_),
      row_(o.row_),
      groups_mask_(o.groups_mask_),
      seen_pulses_(o.seen_pulses_),
      cursor_(o.cursor_) {
  o.arena_ = nullptr;
}

Watcher::~Watcher() {
  if (arena_ == nullptr || !arena_->is_open()) return;
  const std::uint32_t me = detail::current_pid();
  if (rows_[row_].pid.load(std::memory_order_acquire) != me) return;  // a forked child's copy
  reclaim_row(*arena_, rows_, row_);
  rows_[row_].pid.store(0, std::memory_order_release);
}

Result<std::uint32_t> Watcher::add_group(Result<std::uint32_t> group) {
  if (!group) return group;
  const std::uint32_t g = *group;
  const std::uint64_t bit = std::uint64_t{1} << g;
  if ((groups_mask_ & bit) != 0) {
    GroupTable(*arena_).release(g);  // already ours: keep one subscription per watcher
    return g;
  }
  groups_mask_ |= bit;
  rows_[row_].groups.fetch_or(bit, std::memory_order_relaxed);
  seen_pulses_[g] = groups_[g].pulses.load(std::memory_order_acquire);
  cursor_[g] = groups_[g].log_head.load(std::memory_order_acquire);
  return g;
}

Result<std::uint32_t> Watcher::subscribe_label(std::string_view label) {
  return add_group(GroupTable(*arena_).acquire_label(label));
}

Result<std::uint32_t> Watcher::subscribe_channel(std::string_view channel) {
  return add_group(GroupTable(*arena_).acquire_channel(channel));
}

Result<std::uint32_t> Watcher::subscribe_key(std::string_view key) {
  return add_group(GroupTable(*arena_).acquire_key(key));
}

bool Watcher::any_pulse() const noexcept {
  for (std::uint64_t b = groups_mask_; b != 0; b &= b - 1) {
    const auto g = static_cast<std::uint32_t>(__builtin_ctzll(b));
    if (groups_[g].pulses.load(std::memory_order_seq_cst) != seen_pulses_[g]) return true;
  }
  return false;
}

void Watcher::note_pulses() noexcept {
  for (std::uint64_t b = groups_mask_; b != 0; b &= b - 1) {
    const auto g = static_cast<std::uint32_t>(__builtin_ctzll(b));
    seen_pulses_[g] = groups_[g].pulses.load(std::memory_order_acquire);
  }
}

WaitStatus Watcher::wait(std::int64_t timeout_ns, std::int64_t spin_ns) noexcept {
  if (any_pulse()) {
    note_pulses();
    return WaitStatus::pulsed;
  }
  const std::int64_t start = core::monotonic_ns();
  const std::int64_t deadline = start + timeout_ns;
  if (spin_ns > 0) {  // adaptive: a consumer that owns a core skips the sleep and its wake-up cost
    const std::int64_t spin_end = start + std::min(spin_ns, timeout_ns);
    for (int i = 0;; ++i) {
      if (any_pulse()) {
        note_pulses();
        return WaitStatus::pulsed;
      }
      detail::cpu_relax();
      if ((i & 63) == 63 && core::monotonic_ns() >= spin_end) break;
    }
  }
  WatcherRow& row = rows_[row_];
  const std::uint64_t bit = std::uint64_t{1} << row_;
  for (;;) {
    const std::uint32_t bell = row.doorbell.load(std::memory_order_acquire);
    // seq_cst: our waiter bit and the pulse re-check form a Dekker pair with pulse_groups.
    for (std::uint64_t b = groups_mask_; b != 0; b &= b - 1)
      groups_[__builtin_ctzll(b)].waiters.fetch_or(bit, std::memory_order_seq_cst);
    const bool pulsed = any_pulse();
    std::int64_t left = deadline - core::monotonic_ns();
    if (!pulsed && left > 0) {
      const timespec ts{static_cast<time_t>(left / 1'000'000'000), static_cast<long>(left % 1'000'000'000)};
      futex(&row.doorbell, FUTEX_WAIT, bell, &ts);  // returns at once if a publisher rang after `bell`
    }
    for (std::uint64_t b = groups_mask_; b != 0; b &= b - 1)
      groups_[__builtin_ctzll(b)].waiters.fetch_and(~bit, std::memory_order_relaxed);
    if (pulsed || any_pulse()) {
      note_pulses();
      return WaitStatus::pulsed;
    }
    left = deadline - core::monotonic_ns();
    if (left <= 0) return WaitStatus::timed_out;
  }
}

bool Watcher::read_log(std::uint32_t group, std::uint64_t position, Change& out) const noexcept {
  const LogEntry& e = logs_[std::uint64_t{group} * log_entries_ + (position & (log_entries_ - 1))];
  for (int attempt = 0; attempt < kReadSpins; ++attempt) {
    const std::uint64_t seq = e.seq.load(std::memory_order_acquire);
    if (seq != position + 1) {
      if (seq > position + 1) return false;  // lapped by a newer entry
      detail::cpu_relax();                   // its writer is between log_head and seq: nearly done
      continue;
    }
    const std::uint64_t item = e.item.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);  // the item load happens before the re-check
    if (e.seq.load(std::memory_order_relaxed) != seq) return false;
    const auto low = static_cast<std::uint32_t>(item);
    out = Change{group, low & ~static_cast<std::uint32_t>(detail::kChannelItem), static_cast<std::uint32_t>(item >> 32),
                 (item & detail::kChannelItem) != 0};
    return true;
  }
  return false;
}

}  // namespace weir::core
