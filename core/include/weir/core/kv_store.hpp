#pragma once
// The key-value face of an arena: named keys hashed onto seqlocked slots with bounded probing.
// Protocol and proofs: docs/design/kv.md.
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "weir/core/arena.hpp"
#include "weir/core/arena_layout.hpp"
#include "weir/core/detail/pid.hpp"
#include "weir/core/detail/seqlock.hpp"
#include "weir/core/detail/slot_meta.hpp"

namespace weir::core {

enum class [[nodiscard]] KvStatus : std::int8_t {
  ok = 0,
  not_found = 1,        // no such key (or a handle whose key was deleted)
  busy = 2,             // EAGAIN: another writer holds the slot; try again
  full = 3,             // no free slot within the probe window
  torn = 4,             // a writer died mid-write; the value is not trustworthy until rewritten
  key_too_long = 5,     // longer than the arena's key_bytes
  key_empty = 6,        // keys have at least one byte
  value_too_large = 7,  // larger than the arena's value_bytes, or than the caller's buffer on get
  type_mismatch = 8,    // an integer op on a non-integer key, or a typed get of another type
  stale_handle = 9,     // the handle's key was deleted and its slot reused
  read_only = 10,       // the arena is mapped read-only
};

/// "ok", "not_found", ... for messages and JSON.
const char* kv_status_name(KvStatus status) noexcept;
/// Human text: "another writer holds the slot (EAGAIN)".
const char* kv_status_text(KvStatus status) noexcept;
const char* value_type_name(ValueType type) noexcept;

/// A resolved key: slot index plus the slot's insert generation. No hashing on use.
struct KeyHandle {
  std::uint32_t slot = 0;
  std::uint32_t generation = 0;
};

/// The element type and shape of an array value (ValueType::array): rank 1 [dims[0]] or rank 2
/// [dims[0]][dims[1]], row-major, native byte order. Packed into SlotHeader::array_shape/array_dims.
struct ArrayShape {
  Dtype elem = Dtype::u8;
  std::uint32_t rank = 0;               // 1 or 2 for an array value, 0 otherwise
  std::array<std::uint32_t, 2> dims{};  // dims[1] is 0 for rank 1
  /// Product of the dims (0 for rank 0).
  [[nodiscard]] std::uint64_t elements() const noexcept;
  /// elements() * dtype_bytes(elem); 0 for an unknown dtype.
  [[nodiscard]] std::uint64_t bytes() const noexcept;
  friend bool operator==(const ArrayShape&, const ArrayShape&) = default;
};

struct ValueInfo {
  ValueType type = ValueType::none;
  std::uint32_t length = 0;
  std::uint64_t epoch = 0;  // the slot's even seqlock word when read: it changes on every write
  ArrayShape array;         // filled when type == ValueType::array, read in the same seqlock window
  /// Completed writes to the slot so far (the epoch's version field, epoch_version()).
  [[nodiscard]] std::uint64_t version() const noexcept { return epoch_version(epoch); }
};

/// Zero-copy view of a value in place. Read what you need, then call valid(): false means a writer
/// changed the value meanwhile and what you read must be discarded.
class ValueView {
 public:
  [[nodiscard]] const std::byte* data() const noexcept { return data_; }
  [[nodiscard]] std::uint32_t size() const noexcept { return info_.length; }
  [[nodiscard]] const ValueInfo& info() const noexcept { return info_; }
  /// Thread: the viewing thread. Acquire fence keeps the caller's reads before the re-check.
  [[nodiscard]] bool valid() const noexcept {
    std::atomic_thread_fence(std::memory_order_acquire);
    return epoch_word_ != nullptr && epoch_word_->load(std::memory_order_relaxed) == info_.epoch;
  }

 private:
  friend class KvStore;
  const std::byte* data_ = nullptr;
  const std::atomic<std::uint64_t>* epoch_word_ = nullptr;
  ValueInfo info_{};
};

enum class AtomicOp : std::uint8_t { add, bit_and, bit_or, bit_xor, bit_not };

/// Reads and writes keys of one attached arena. Cheap to construct; holds no state of its own
/// beyond pointers into the mapping. Thread: any number of KvStores in any threads and processes.
class KvStore {
 public:
  explicit KvStore(const Arena& arena) noexcept;

  /// Writes a value, inserting the key if missing. Returns busy at once if another writer holds the
  /// slot (EAGAIN). Thread: any. Requires: value.size() <= value_bytes.
  KvStatus set(std::string_view key, std::span<const std::byte> value, ValueType type = ValueType::bytes) noexcept;
  /// As set, but retries a busy slot until timeout_ns (and recovers a dead writer's slot).
  KvStatus set_wait(std::string_view key, std::span<const std::byte> value, ValueType type = ValueType::bytes,
                    std::int64_t timeout_ns = kDefaultWaitNs) noexcept;

  /// Writes an array value (ValueType::array) with its element dtype and shape, inserting the key if
  /// missing; waits, bounded, for a writer inside like set_wait. type_mismatch when data.size() !=
  /// shape.bytes() or the rank is not 1 or 2 (or a dim is 0); value_too_large when it does not fit
  /// value_bytes. Thread: any.
  KvStatus set_array(std::string_view key, const ArrayShape& shape, std::span<const std::byte> data) noexcept;
  /// As above, by handle; busy at once when another writer holds the slot. Thread: any.
  KvStatus set_array(KeyHandle handle, const ArrayShape& shape, std::span<const std::byte> data) noexcept;

  /// Copies the value into out. value_too_large when out is smaller (info.length tells the size).
  /// Bytes of out past info.length are unspecified.
  KvStatus get(std::string_view key, std::span<std::byte> out, ValueInfo& info) const noexcept;
  /// Zero-copy: points into the arena. Check view.valid() after using the bytes.
  KvStatus view(std::string_view key, ValueView& out) const noexcept;
  KvStatus del(std::string_view key) noexcept;

  /// Resolves a key once, inserting it empty (type none) when create is set.
  KvStatus resolve(std::string_view key, KeyHandle& out, bool create = false) noexcept;
  /// By handle: the uncontended case is inline (one CAS, one copy, one release store); anything
  /// unusual (held slot, stale handle, pulsed groups, integer values) takes the out-of-line path.
  /// Always inlined: an out-of-line copy costs a frame and five saved registers, a third of a set.
  /// In a hot loop, build `out` from a buffer in scope (`std::span(array)`) rather than reusing a
  /// span object kept in memory: std::byte stores may alias it, so it is reloaded every call.
  [[gnu::always_inline]] inline KvStatus set(KeyHandle handle, std::span<const std::byte> value,
                                             ValueType type = ValueType::bytes) noexcept;
  [[gnu::always_inline]] inline KvStatus get(KeyHandle handle, std::span<std::byte> out,
                                             ValueInfo& info) const noexcept;
  KvStatus view(KeyHandle handle, ValueView& out) const noexcept;

  /// Atomic read-modify-write on an integer key (i64 or u64): never fails with busy; waits, bounded,
  /// for a writer inside the slot. A missing key starts at 0 as i64. result is the new value.
  KvStatus atomic(std::string_view key, AtomicOp op, std::uint64_t operand, std::uint64_t& result) noexcept;
  KvStatus atomic(KeyHandle handle, AtomicOp op, std::uint64_t operand, std::uint64_t& result) noexcept;

  /// Typed helpers over set/get.
  KvStatus set_i64(std::string_view key, std::int64_t v) noexcept;
  KvStatus set_u64(std::string_view key, std::uint64_t v) noexcept;
  KvStatus set_f64(std::string_view key, double v) noexcept;
  KvStatus set_text(std::string_view key, std::string_view text) noexcept;
  /// Reads an integer or float key into its 8-byte representation; type tells which.
  KvStatus get_scalar(std::string_view key, std::uint64_t& bits, ValueType& type) const noexcept;

  /// Calls fn(std::string_view key, const ValueInfo&) for every live key. Not a snapshot: keys
  /// written meanwhile may or may not appear. Thread: any.
  template <class Fn>
  void for_each_key(Fn&& fn) const;
  [[nodiscard]] std::uint64_t count() const noexcept;

  [[nodiscard]] std::uint32_t key_bytes() const noexcept { return key_bytes_; }
  [[nodiscard]] std::uint32_t value_bytes() const noexcept { return value_bytes_; }

  /// Replaces a key's labels: its Bloom mask (OR of label_mask() of each label) and its exact label
  /// ids (bits of the label dictionary). Its own name stays in the mask. Waits, bounded, for a
  /// writer inside the slot. Thread: any. See also core::set_labels in signals.hpp.
  KvStatus set_labels(std::string_view key, std::uint64_t mask, std::uint64_t label_ids) noexcept;

  /// Reads slot i's key into out (at least key_bytes long) if live. Thread: any.
  KvStatus key_at(std::uint32_t slot, std::span<char> out, std::uint32_t& length, ValueInfo& info) const noexcept;

 private:
  [[nodiscard]] SlotHeader& slot(std::uint32_t i) const noexcept {
    return *reinterpret_cast<SlotHeader*>(slots_ + std::uint64_t{i} * stride_);
  }
  [[nodiscard]] std::byte* key_ptr(std::uint32_t i) const noexcept {
    return slots_ + std::uint64_t{i} * stride_ + sizeof(SlotHeader);
  }
  [[nodiscard]] std::byte* value_ptr(std::uint32_t i) const noexcept {
    return slots_ + std::uint64_t{i} * stride_ + value_offset_;
  }
  KvStatus check_key(std::string_view key) const noexcept;
  bool find(std::string_view key, std::uint64_t hash, KeyHandle& out) const noexcept;
  bool key_matches(std::uint32_t i, std::string_view key, std::uint32_t& generation) const noexcept;
  KvStatus insert(std::string_view key, std::uint64_t hash, std::span<const std::byte> value, ValueType type,
                  bool overwrite, std::int64_t deadline_ns, KeyHandle& out, const ArrayShape* shape = nullptr) noexcept;
  KvStatus write_slot(KeyHandle handle, std::span<const std::byte> value, ValueType type,
                      std::int64_t deadline_ns, const ArrayShape* shape = nullptr) noexcept;
  KvStatus read_slot(std::uint32_t i, std::uint32_t generation, std::string_view key, std::span<std::byte> out,
                     ValueInfo& info, ValueView* view) const noexcept;
  KvStatus atomic_slot(KeyHandle handle, AtomicOp op, std::uint64_t operand, std::uint64_t& result) noexcept;
  KvStatus set_impl(std::string_view key, std::span<const std::byte> value, ValueType type,
                    std::int64_t deadline_ns, const ArrayShape* shape = nullptr) noexcept;
  enum class ReadFast : std::uint8_t { done, other_key, not_taken };
  [[gnu::always_inline]] inline ReadFast read_small_by_key(std::uint32_t i, std::string_view key,
                                                           std::span<std::byte> out, ValueInfo& info) const noexcept;
  KvStatus lookup_read(std::string_view key, std::span<std::byte> out, ValueInfo& info,
                       ValueView* view) const noexcept;
  bool wait_entry(std::uint32_t j, std::uint64_t seen, std::int64_t deadline_ns) noexcept;

  /// The uncontended write by handle: ok, or busy (held by another writer), or not_found meaning
  /// "not taken, nothing changed": anything unusual, left to the out-of-line paths.
  [[gnu::always_inline]] inline KvStatus try_set_fast(KeyHandle handle, std::span<const std::byte> value,
                                                      ValueType type) noexcept;
  /// The claim, copy and release shared by the write fast paths, for a slot already checked at
  /// `epoch` (even) with meta `m`: ok, busy (the CAS met another writer), or not_found (lost the
  /// CAS to a change, or an integer op is in flight; nothing changed).
  [[gnu::always_inline]] inline KvStatus claim_and_write(SlotHeader& s, std::byte* dst, std::uint64_t epoch,
                                                         std::uint64_t m, std::span<const std::byte> value,
                                                         ValueType type) noexcept;
  /// set(key)'s common case on probe entry i: ok, other_key (keep probing), or not_found (not taken).
  enum class WriteFast : std::uint8_t { done, other_key, not_taken };
  WriteFast try_set_by_key(std::uint32_t i, std::string_view key, std::span<const std::byte> value,
                           ValueType type) noexcept;
  KvStatus set_handle_slow(KeyHandle handle, std::span<const std::byte> value, ValueType type) noexcept;
  KvStatus get_handle_slow(KeyHandle handle, std::span<std::byte> out, ValueInfo& info) const noexcept;
  void publish(std::uint32_t i, std::uint32_t generation, std::uint64_t group_bits) noexcept;
  std::uint64_t group_bits_locked(std::uint32_t i) noexcept;

  // VectorStore writes a key's vector row under the row's own seqlock, not the slot's, then pulses
  // the key's groups like any write (docs/design/vectors.md, "Signals").
  friend class VectorStore;
  /// The groups a write to h's key pulses, read without claiming the slot: the slot's cached bitmap,
  /// checked current in one seqlock window (a version load and three loads of the slot header), or,
  /// when it is stale or the slot is held, group_bits_unclaimed_slow. 0 when the key was deleted.
  [[gnu::always_inline]] inline std::uint64_t group_bits_unclaimed(KeyHandle handle) const noexcept;
  /// Matches the slot's labels and key against the group table without storing anything. Lock-free.
  std::uint64_t group_bits_unclaimed_slow(KeyHandle handle) const noexcept;
  /// Stamps the slot's changed_ns and pulses `bits` with (slot, generation). Thread: any writer.
  void publish_unclaimed(KeyHandle handle, std::uint64_t bits) noexcept;

  ArenaHeader* header_ = nullptr;
  SignalGroup* groups_ = nullptr;
  LogEntry* logs_ = nullptr;
  WatcherRow* watchers_ = nullptr;
  std::uint32_t log_entries_ = 0;
  std::atomic<std::uint64_t>* index_ = nullptr;
  std::byte* slots_ = nullptr;
  std::uint64_t stride_ = 0;
  std::uint64_t value_offset_ = 0;
  std::uint32_t slot_count_ = 0;
  std::uint32_t key_bytes_ = 0;
  std::uint32_t value_bytes_ = 0;
  std::uint32_t max_probe_ = 0;
  bool read_only_ = false;
};

KvStatus KvStore::get(KeyHandle h, std::span<std::byte> out, ValueInfo& info) const noexcept {
  if (h.slot < slot_count_ && out.size() >= detail::kSmallCopyBytes) [[likely]] {
    // Both addresses first: members read after the acquire load below would be read again.
    const std::byte* const base = slots_ + std::uint64_t{h.slot} * stride_;
    const std::byte* const src = base + value_offset_;
    const SlotHeader& s = *reinterpret_cast<const SlotHeader*>(base);
    const std::uint64_t epoch = s.epoch.load(std::memory_order_acquire);  // pairs with the writer's release
    const std::uint32_t generation = s.generation.load(std::memory_order_relaxed);
    const std::uint64_t m = s.meta.load(std::memory_order_relaxed);
    const std::uint32_t length = detail::meta_value_len(m);
    // One branch for all five: held (odd), not live or torn, a stale handle, an array (its shape is
    // read on the slow path), too long for the small copy. Integer values are copied like any bytes:
    // integer ops bump the epoch, so the re-check sees them.
    const std::uint64_t unusual = (epoch & kEpochOdd) | ((m ^ detail::kMetaLive) & detail::kMetaLiveTorn) |
                                  (generation ^ h.generation) | detail::meta_is_array(m);
    if (unusual == 0 && length <= detail::kSmallCopyBytes) [[likely]] {
      detail::seqlock_copy_out_small(out.data(), src);  // bytes past length: unspecified
      std::atomic_thread_fence(std::memory_order_acquire);  // the copy happens before the re-check
      if (s.epoch.load(std::memory_order_relaxed) == epoch) [[likely]] {
        info = ValueInfo{detail::meta_type(m), length, epoch, {}};
        return KvStatus::ok;
      }
    }
  }
  return get_handle_slow(h, out, info);
}

KvStatus KvStore::claim_and_write(SlotHeader& s, std::byte* dst, std::uint64_t epoch, std::uint64_t m,
                                  std::span<const std::byte> value, ValueType type) noexcept {
  const std::uint64_t claimed = epoch_claimed(epoch, detail::current_pid());
  // seq_cst CAS: the claim and the pins load below form a Dekker pair with integer ops.
  if (!s.epoch.compare_exchange_strong(epoch, claimed, std::memory_order_seq_cst, std::memory_order_relaxed))
    return epoch_odd(epoch) ? KvStatus::busy : KvStatus::not_found;
  std::atomic_thread_fence(std::memory_order_release);  // the odd epoch is visible before the payload
  if (s.pins.load(std::memory_order_seq_cst) != 0) [[unlikely]] {
    // An integer op is in flight: hand the slot back untouched (a version bump without a change).
    s.epoch.store(epoch_released(claimed), std::memory_order_release);
    return KvStatus::not_found;
  }
  const auto length = static_cast<std::uint32_t>(value.size());
  if (length != 0) detail::seqlock_copy_in(dst, value.data(), length);
  if (detail::meta_is_array(m) != 0) [[unlikely]] {
    s.array_shape.store(0, std::memory_order_relaxed);  // inside the odd window, like meta
    s.array_dims.store(0, std::memory_order_relaxed);
  }
  s.meta.store(detail::make_meta(length, detail::meta_key_len(m), type, kSlotLive), std::memory_order_relaxed);
  s.epoch.store(epoch_released(claimed), std::memory_order_release);  // payload visible first
  return KvStatus::ok;
}

KvStatus KvStore::try_set_fast(KeyHandle h, std::span<const std::byte> value, ValueType type) noexcept {
  if (h.slot >= slot_count_ || value.size() > value_bytes_ || read_only_ || detail::is_word_type(type) ||
      type == ValueType::array)
    return KvStatus::not_found;
  std::byte* const base = slots_ + std::uint64_t{h.slot} * stride_;
  std::byte* const dst = base + value_offset_;
  SlotHeader& s = *reinterpret_cast<SlotHeader*>(base);
  const std::uint64_t version = header_->groups_version.load(std::memory_order_acquire);
  const std::uint64_t epoch = s.epoch.load(std::memory_order_acquire);
  // Checked before the claim, so they overlap the CAS instead of waiting behind it. Every writer
  // of these fields holds the slot odd, so a claim from this very epoch proves none came between.
  const std::uint64_t m = s.meta.load(std::memory_order_relaxed);
  const bool plain = s.generation.load(std::memory_order_relaxed) == h.generation && detail::meta_live(m) &&
                     s.groups_seen.load(std::memory_order_relaxed) == version &&
                     s.group_bits.load(std::memory_order_relaxed) == 0;
  if (epoch_odd(epoch)) return KvStatus::busy;  // EAGAIN at once, as the contract says
  if (!plain) return KvStatus::not_found;
  return claim_and_write(s, dst, epoch, m, value, type);
}

KvStatus KvStore::set(KeyHandle h, std::span<const std::byte> value, ValueType type) noexcept {
  const KvStatus fast = try_set_fast(h, value, type);
  if (fast != KvStatus::not_found) [[likely]]
    return fast;
  return set_handle_slow(h, value, type);
}

std::uint64_t KvStore::group_bits_unclaimed(KeyHandle h) const noexcept {
  const SlotHeader& s = slot(h.slot);
  const std::uint64_t version = header_->groups_version.load(std::memory_order_acquire);  // pairs with table edits
  const std::uint64_t epoch = s.epoch.load(std::memory_order_acquire);  // pairs with the writer's release
  const std::uint64_t seen = s.groups_seen.load(std::memory_order_relaxed);
  const std::uint64_t bits = s.group_bits.load(std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);  // both loads happen before the re-check
  const std::uint64_t unusual = (epoch & kEpochOdd) | (seen ^ version) | (s.epoch.load(std::memory_order_relaxed) ^ epoch);
  if (unusual == 0) [[likely]]
    return bits;
  return group_bits_unclaimed_slow(h);
}

template <class Fn>
void KvStore::for_each_key(Fn&& fn) const {
  char buf[kMaxKeyBytes];
  for (std::uint32_t i = 0; i < slot_count_; ++i) {
    std::uint32_t length = 0;
    ValueInfo info;
    if (key_at(i, std::span<char>(buf, key_bytes_), length, info) == KvStatus::ok)
      fn(std::string_view(buf, length), info);
  }
}

}  // namespace weir::core
