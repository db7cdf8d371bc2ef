// The KV protocol over seqlocked slots: lookup, insert without duplicates, write, delete, atomics.
// Why it is correct: docs/design/kv.md.
#include "weir/core/kv_store.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

#include "backing.hpp"
#include "signal_publish.hpp"
#include "slot_ops.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/signals.hpp"
#include "weir/core/detail/hash.hpp"
#include "weir/core/detail/seqlock.hpp"

namespace weir::core {

using detail::make_index;
using detail::make_meta;

namespace {

constexpr int kLookupAttempts = 64;  // key compares retried this often while a slot changes under us

using detail::is_word_type;
bool is_integer(ValueType t) noexcept { return t == ValueType::i64 || t == ValueType::u64; }

// Stores an array's shape, or zeros, into the slot's shape words. Requires: the slot is claimed (odd).
void store_shape(SlotHeader& s, const ArrayShape* shape) noexcept {
  // relaxed: inside the odd window; the release that ends it publishes them with the value
  s.array_shape.store(shape != nullptr ? detail::pack_array_shape(static_cast<std::uint32_t>(shape->elem), shape->rank) : 0,
                      std::memory_order_relaxed);
  s.array_dims.store(shape != nullptr ? detail::pack_array_dims(shape->dims[0], shape->dims[1]) : 0,
                     std::memory_order_relaxed);
}

// Reads an array's shape words. Valid only inside a seqlock window the caller re-checks.
ArrayShape load_shape(const SlotHeader& s) noexcept {
  const std::uint64_t w = s.array_shape.load(std::memory_order_relaxed);
  const std::uint64_t d = s.array_dims.load(std::memory_order_relaxed);
  ArrayShape a;
  a.elem = static_cast<Dtype>(detail::shape_dtype(w));
  a.rank = detail::shape_rank(w);
  a.dims = {detail::dims_at(d, 0), detail::dims_at(d, 1)};
  return a;
}

// What set_array accepts: a known element dtype, rank 1 or 2, no zero dim, and data of exactly
// the shape's bytes.
bool shape_ok(const ArrayShape& a, std::size_t data_bytes) noexcept {
  if (dtype_bytes(a.elem) == 0 || (a.rank != 1 && a.rank != 2)) return false;
  if (a.dims[0] == 0 || (a.rank == 2 ? a.dims[1] == 0 : a.dims[1] != 0)) return false;
  return a.bytes() == data_bytes;
}

std::span<const std::byte> word_bytes(const std::uint64_t& w) noexcept {
  return {reinterpret_cast<const std::byte*>(&w), sizeof(w)};
}

// Whether a slot whose meta word is m holds `key` (its key bytes at key_bytes). Valid only inside a
// seqlock window or while the slot is held; the caller re-checks.
bool slot_holds_key(const std::byte* key_bytes, std::uint64_t m, std::string_view key) noexcept {
  return detail::meta_key_len(m) == key.size() && detail::seqlock_equal(key_bytes, key.data(), key.size());
}

// Walks the probe window of `hash`: calls visit(i) for each live entry carrying the hash's tag
// until visit returns true. Returns whether it did; false when the window ran out or hit an empty
// entry (keys never sit past an empty entry of their window).
template <class Visit>
bool probe_tagged(const std::atomic<std::uint64_t>* index, std::uint32_t slot_count, std::uint32_t max_probe,
                  std::uint64_t hash, Visit&& visit) noexcept {
  const auto tag = static_cast<std::uint32_t>(hash >> 32);
  std::uint32_t i = detail::home_slot(hash, slot_count);
  for (std::uint32_t d = 0; d < max_probe; ++d, i = (i + 1 == slot_count) ? 0 : i + 1) {
    const std::uint64_t e = index[i].load(std::memory_order_acquire);
    const IndexState st = detail::index_state(e);
    if (st == IndexState::empty) return false;
    if (st == IndexState::live && detail::index_tag(e) == tag && visit(i)) return true;
  }
  return false;
}

}  // namespace

std::uint64_t ArrayShape::elements() const noexcept {
  if (rank == 0) return 0;
  return rank == 1 ? std::uint64_t{dims[0]} : std::uint64_t{dims[0]} * dims[1];
}

std::uint64_t ArrayShape::bytes() const noexcept { return elements() * dtype_bytes(elem); }

const char* kv_status_name(KvStatus s) noexcept {
  switch (s) {
    case KvStatus::ok: return "ok";
    case KvStatus::not_found: return "not_found";
    case KvStatus::busy: return "busy";
    case KvStatus::full: return "full";
    case KvStatus::torn: return "torn";
    case KvStatus::key_too_long: return "key_too_long";
    case KvStatus::key_empty: return "key_empty";
    case KvStatus::value_too_large: return "value_too_large";
    case KvStatus::type_mismatch: return "type_mismatch";
    case KvStatus::stale_handle: return "stale_handle";
    case KvStatus::read_only: return "read_only";
  }
  return "unknown";
}

const char* kv_status_text(KvStatus s) noexcept {
  switch (s) {
    case KvStatus::ok: return "ok";
    case KvStatus::not_found: return "key not found";
    case KvStatus::busy: return "another writer holds the slot (EAGAIN); try again";
    case KvStatus::full: return "no free slot within the probe window: the arena is full";
    case KvStatus::torn: return "a writer died mid-write: the value is torn until rewritten";
    case KvStatus::key_too_long: return "key longer than the arena's key_bytes";
    case KvStatus::key_empty: return "empty key";
    case KvStatus::value_too_large: return "value larger than the arena's value_bytes (or the read buffer)";
    case KvStatus::type_mismatch: return "value type does not fit the operation";
    case KvStatus::stale_handle: return "handle's key was deleted and its slot reused";
    case KvStatus::read_only: return "arena is mapped read-only";
  }
  return "unknown status";
}

const char* value_type_name(ValueType t) noexcept {
  switch (t) {
    case ValueType::none: return "none";
    case ValueType::bytes: return "bytes";
    case ValueType::text: return "text";
    case ValueType::i64: return "i64";
    case ValueType::u64: return "u64";
    case ValueType::f64: return "f64";
    case ValueType::vector: return "vector";
    case ValueType::array: return "array";
  }
  return "unknown";
}

KvStore::KvStore(const Arena& arena) noexcept
    : header_(&arena.header()),
      groups_(reinterpret_cast<SignalGroup*>(arena.region(Region::groups))),
      logs_(reinterpret_cast<LogEntry*>(arena.region(Region::groups) + logs_offset_in_groups())),
      watchers_(reinterpret_cast<WatcherRow*>(arena.region(Region::watchers))),
      log_entries_(arena.geometry().group_log_entries),
      index_(reinterpret_cast<std::atomic<std::uint64_t>*>(arena.region(Region::index))),
      slots_(arena.region(Region::slots)),
      stride_(arena.geometry().slot_stride),
      value_offset_(value_offset_in_slot(arena.geometry().key_bytes)),
      slot_count_(arena.geometry().slot_count),
      key_bytes_(arena.geometry().key_bytes),
      value_bytes_(arena.geometry().value_bytes),
      max_probe_(arena.geometry().max_probe),
      read_only_(arena.read_only()) {}

KvStatus KvStore::check_key(std::string_view key) const noexcept {
  if (key.empty()) return KvStatus::key_empty;
  if (key.size() > key_bytes_) return KvStatus::key_too_long;
  return KvStatus::ok;
}

// Compares slot i's key with `key`, validated by the slot's insert generation (a live slot's key
// never changes; an insert writes the key, then bumps the generation, then sets live).
bool KvStore::key_matches(std::uint32_t i, std::string_view key, std::uint32_t& generation) const noexcept {
  const SlotHeader& s = slot(i);
  for (int attempt = 0; attempt < kLookupAttempts; ++attempt) {
    const std::uint32_t g1 = s.generation.load(std::memory_order_acquire);  // pairs with the insert's release
    const std::uint64_t m1 = s.meta.load(std::memory_order_acquire);
    if (!detail::meta_live(m1) || detail::meta_key_len(m1) != key.size()) return false;
    const bool equal = detail::seqlock_equal(key_ptr(i), key.data(), key.size());
    std::atomic_thread_fence(std::memory_order_acquire);  // the compare above happens before the re-check
    const std::uint32_t g2 = s.generation.load(std::memory_order_relaxed);
    const std::uint64_t m2 = s.meta.load(std::memory_order_relaxed);
    if (g1 == g2 && detail::meta_live(m2)) {
      generation = g1;
      return equal;
    }
  }
  return false;
}

bool KvStore::find(std::string_view key, std::uint64_t hash, KeyHandle& out) const noexcept {
  return probe_tagged(index_, slot_count_, max_probe_, hash, [&](std::uint32_t i) {
    std::uint32_t generation = 0;
    if (!key_matches(i, key, generation)) return false;
    out = KeyHandle{i, generation};
    return true;
  });
}

KvStatus KvStore::write_slot(KeyHandle h, std::span<const std::byte> value, ValueType type,
                             std::int64_t deadline_ns, const ArrayShape* shape) noexcept {
  SlotHeader& s = slot(h.slot);
  if (!detail::claim_slot(*header_, s, index_[h.slot], deadline_ns)) return KvStatus::busy;
  const std::uint64_t m = s.meta.load(std::memory_order_relaxed);
  if (!detail::meta_live(m) || s.generation.load(std::memory_order_relaxed) != h.generation) {
    const bool reused = s.generation.load(std::memory_order_relaxed) != h.generation;
    detail::release_slot(s);
    return reused ? KvStatus::stale_handle : KvStatus::not_found;
  }
  const auto len = static_cast<std::uint32_t>(value.size());
  if (is_word_type(type) && len == sizeof(std::uint64_t)) {
    std::uint64_t w;
    std::memcpy(&w, value.data(), sizeof(w));
    std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(value_ptr(h.slot)))
        .store(w, std::memory_order_relaxed);  // atomic: integer ops and readers touch this word too
  } else if (len != 0) {
    detail::seqlock_copy_in(value_ptr(h.slot), value.data(), len);
  }
  if (shape != nullptr || detail::meta_is_array(m) != 0) store_shape(s, shape);  // only when it changes
  s.meta.store(make_meta(len, detail::meta_key_len(m), type, kSlotLive), std::memory_order_relaxed);  // clears torn
  const std::uint64_t bits = group_bits_locked(h.slot);
  detail::release_slot(s);
  if (bits != 0) publish(h.slot, h.generation, bits);
  return KvStatus::ok;
}

// Which groups slot i's writes pulse. Requires: slot i is claimed (or pinned), so its key is stable.
std::uint64_t KvStore::group_bits_locked(std::uint32_t i) noexcept {
  SlotHeader& s = slot(i);
  const detail::SignalView v{header_, groups_, logs_, watchers_, log_entries_};
  const std::uint64_t bits =
      detail::slot_group_bits(v, s, key_ptr(i), detail::meta_key_len(s.meta.load(std::memory_order_relaxed)));
  if (bits != 0) s.changed_ns.store(static_cast<std::uint64_t>(core::realtime_ns()), std::memory_order_relaxed);
  return bits;
}

void KvStore::publish(std::uint32_t i, std::uint32_t generation, std::uint64_t bits) noexcept {
  const detail::SignalView v{header_, groups_, logs_, watchers_, log_entries_};
  detail::pulse_groups(v, bits, std::uint64_t{i} | (std::uint64_t{generation} << 32));
}

// A vector write holds its row, not the slot: the slot's labels are read in a seqlock window and
// matched without touching the slot's cache (only a claim may write it). A slot held through every
// attempt (a long value write) gives the last words read; its labels change only in set_labels, so
// a vector write racing a label change pulses the groups of the old labels, the new, or both.
std::uint64_t KvStore::group_bits_unclaimed_slow(KeyHandle h) const noexcept {
  const SlotHeader& s = slot(h.slot);
  std::byte key[kMaxKeyBytes];
  std::uint64_t labels = 0;
  std::uint64_t ids = 0;
  std::uint32_t key_len = 0;
  for (int attempt = 0; attempt < kLookupAttempts; ++attempt) {
    const std::uint64_t epoch = s.epoch.load(std::memory_order_acquire);  // pairs with the writer's release
    key_len = std::min(detail::meta_key_len(s.meta.load(std::memory_order_relaxed)), key_bytes_);
    labels = s.labels.load(std::memory_order_relaxed);
    ids = s.label_ids.load(std::memory_order_relaxed);
    detail::seqlock_copy_out(key, key_ptr(h.slot), key_len);
    std::atomic_thread_fence(std::memory_order_acquire);  // the reads above happen before the re-check
    if (!epoch_odd(epoch) && s.epoch.load(std::memory_order_relaxed) == epoch) break;
    detail::cpu_relax();
  }
  // The key of a live generation never changes (docs/design/kv.md, invariant 2): if the slot still
  // holds h's generation, the bytes read are h's key.
  if (!detail::meta_live(s.meta.load(std::memory_order_acquire)) ||
      s.generation.load(std::memory_order_acquire) != h.generation)
    return 0;  // deleted meanwhile: the delete pulsed the groups
  const detail::SignalView v{header_, groups_, logs_, watchers_, log_entries_};
  return detail::match_group_bits(v, labels, ids, key, key_len);
}

void KvStore::publish_unclaimed(KeyHandle h, std::uint64_t bits) noexcept {
  // A time, not a payload of the slot's seqlock window: a relaxed store outside the claim is enough.
  slot(h.slot).changed_ns.store(static_cast<std::uint64_t>(core::realtime_ns()), std::memory_order_relaxed);
  publish(h.slot, h.generation, bits);
}

KvStatus KvStore::insert(std::string_view key, std::uint64_t hash, std::span<const std::byte> value, ValueType type,
                         bool overwrite, std::int64_t deadline_ns, KeyHandle& out, const ArrayShape* shape) noexcept {
  const auto tag = static_cast<std::uint32_t>(hash >> 32);
  const std::uint32_t home = detail::home_slot(hash, slot_count_);
  const auto at = [&](std::uint32_t d) { return home + d >= slot_count_ ? home + d - slot_count_ : home + d; };
  const auto use_existing = [&](KeyHandle found) {
    out = found;
    return overwrite ? write_slot(found, value, type, deadline_ns, shape) : KvStatus::ok;
  };
  for (;;) {
    // 1. Look for the key; remember the first free entry of the window.
    std::uint32_t free_d = max_probe_;
    for (std::uint32_t d = 0; d < max_probe_; ++d) {
      const std::uint32_t i = at(d);
      const std::uint64_t e = index_[i].load(std::memory_order_acquire);
      const IndexState st = detail::index_state(e);
      std::uint32_t generation = 0;
      if (st == IndexState::empty || st == IndexState::tombstone) {
        if (free_d == max_probe_) free_d = d;
        if (st == IndexState::empty) break;
      } else if (st == IndexState::live && detail::index_tag(e) == tag && key_matches(i, key, generation)) {
        const KvStatus st2 = use_existing(KeyHandle{i, generation});
        if (st2 == KvStatus::stale_handle || st2 == KvStatus::not_found) goto retry;  // deleted meanwhile
        return st2;
      }
    }
    if (free_d == max_probe_) return KvStatus::full;
    {
      // 2. Claim the free slot, then mark its entry inserting with our tag.
      const std::uint32_t mine = at(free_d);
      SlotHeader& s = slot(mine);
      if (!detail::claim_slot(*header_, s, index_[mine], deadline_ns)) return KvStatus::busy;
      std::uint64_t e = index_[mine].load(std::memory_order_relaxed);
      const IndexState st = detail::index_state(e);
      if ((st != IndexState::empty && st != IndexState::tombstone) ||
          !index_[mine].compare_exchange_strong(e, make_index(IndexState::inserting, tag), std::memory_order_seq_cst)) {
        detail::release_slot(s);
        goto retry;
      }
      const auto abandon = [&] {
        index_[mine].store(make_index(IndexState::tombstone, tag), std::memory_order_seq_cst);
        detail::release_slot(s);
      };
      // 3. Look for a rival: the same key live, or another insert with our tag. seq_cst loads pair
      //    with the rival's seq_cst claim, so of two racing inserters at least one sees the other.
      for (bool rescan = true; rescan;) {
        rescan = false;
        for (std::uint32_t d = 0; d < max_probe_; ++d) {
          if (d == free_d) continue;
          const std::uint32_t j = at(d);
          const std::uint64_t r = index_[j].load(std::memory_order_seq_cst);
          const IndexState rs = detail::index_state(r);
          if (rs == IndexState::empty) break;
          if (detail::index_tag(r) != tag) continue;
          std::uint32_t generation = 0;
          if (rs == IndexState::live && key_matches(j, key, generation)) {
            abandon();
            const KvStatus st2 = use_existing(KeyHandle{j, generation});
            if (st2 == KvStatus::stale_handle || st2 == KvStatus::not_found) goto retry;
            return st2;
          }
          if (rs != IndexState::inserting) continue;
          // The rival nearer home wins; the farther one steps back and waits for the outcome.
          if (d < free_d) abandon();
          if (!wait_entry(j, r, deadline_ns)) {
            if (d > free_d) abandon();
            return KvStatus::busy;
          }
          if (d < free_d) goto retry;
          rescan = true;
          break;
        }
      }
      // 4. Commit: key, value, generation, meta, then the entry goes live; the seqlock release ends it.
      detail::seqlock_copy_in(key_ptr(mine), key.data(), key.size());
      const auto len = static_cast<std::uint32_t>(value.size());
      if (is_word_type(type) && len == sizeof(std::uint64_t)) {
        std::uint64_t w;
        std::memcpy(&w, value.data(), sizeof(w));
        std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(value_ptr(mine)))
            .store(w, std::memory_order_relaxed);
      } else if (len != 0) {
        detail::seqlock_copy_in(value_ptr(mine), value.data(), len);
      }
      const std::uint32_t generation = s.generation.load(std::memory_order_relaxed) + 1;
      s.labels.store(key_self_mask(hash), std::memory_order_relaxed);  // a new key has only its own name
      s.label_ids.store(0, std::memory_order_relaxed);
      store_shape(s, shape);  // a reused slot may hold a deleted array's shape
      s.group_bits.store(0, std::memory_order_relaxed);
      s.groups_seen.store(0, std::memory_order_relaxed);  // version 0 has no groups; later ones force a refresh
      s.generation.store(generation, std::memory_order_release);  // key bytes before the new generation
      s.meta.store(make_meta(len, static_cast<std::uint32_t>(key.size()), type, kSlotLive),
                   std::memory_order_release);  // the generation before live
      index_[mine].store(make_index(IndexState::live, tag), std::memory_order_seq_cst);
      const std::uint64_t bits = group_bits_locked(mine);
      detail::release_slot(s);
      if (bits != 0) publish(mine, generation, bits);
      out = KeyHandle{mine, generation};
      return KvStatus::ok;
    }
  retry:
    if (!detail::may_wait(deadline_ns)) return KvStatus::busy;
    if (core::monotonic_ns() >= deadline_ns) return KvStatus::busy;
  }
}

bool KvStore::wait_entry(std::uint32_t j, std::uint64_t seen, std::int64_t deadline_ns) noexcept {
  if (!detail::may_wait(deadline_ns)) return false;
  const std::int64_t started = core::monotonic_ns();
  SlotHeader& s = slot(j);
  while (index_[j].load(std::memory_order_seq_cst) == seen) {
    const std::uint64_t epoch = s.epoch.load(std::memory_order_acquire);
    if ((epoch & 1U) != 0) {
      // The rival holds slot j's seqlock while inserting: settle waits on it and recovers a dead rival.
      if (!detail::settle_slot(*header_, s, index_[j], epoch, started, deadline_ns, !read_only_)) return false;
    } else if (core::monotonic_ns() >= deadline_ns) {
      return false;
    } else {
      detail::cpu_relax();
    }
  }
  return true;
}

// One seqlock read of slot i. The slot is identified either by a handle's generation or, when
// `key` is not empty, by comparing the key inside the same epoch window (insert and delete hold
// the seqlock, so an unchanged epoch vouches for key and value together). In key mode a slot that
// holds another key, or none, answers stale_handle: the caller keeps probing.
KvStatus KvStore::read_slot(std::uint32_t i, std::uint32_t generation, std::string_view key, std::span<std::byte> out,
                            ValueInfo& info, ValueView* view) const noexcept {
  SlotHeader& s = slot(i);
  std::int64_t started = 0;
  int spins = 0;
  for (;;) {
    const std::uint64_t epoch = s.epoch.load(std::memory_order_acquire);  // pairs with the writer's release
    if ((epoch & 1U) != 0) {
      if (++spins < kReadSpins) {
        detail::cpu_relax();
        continue;
      }
      if (started == 0) started = core::monotonic_ns();
      if (!detail::settle_slot(*header_, s, index_[i], epoch, started, started + kDefaultWaitNs, !read_only_))
        return KvStatus::busy;
      spins = 0;
      continue;
    }
    const std::uint64_t m = s.meta.load(std::memory_order_relaxed);
    info = ValueInfo{detail::meta_type(m), detail::meta_value_len(m), epoch, {}};
    if (detail::meta_is_array(m) != 0) info.array = load_shape(s);  // validated by the re-check below
    KvStatus status = KvStatus::ok;
    if (!key.empty()) {
      if (!detail::meta_live(m) || !slot_holds_key(key_ptr(i), m, key)) status = KvStatus::stale_handle;
    } else if (s.generation.load(std::memory_order_relaxed) != generation) {
      status = KvStatus::stale_handle;
    } else if (!detail::meta_live(m)) {
      status = KvStatus::not_found;
    }
    if (status != KvStatus::ok) {
    } else if ((detail::meta_flags(m) & kSlotTorn) != 0) {
      status = KvStatus::torn;
    } else if (info.length > value_bytes_) {
      status = KvStatus::torn;  // cannot happen for a value we wrote; refuse rather than overread
    } else if (view != nullptr) {
      view->data_ = value_ptr(i);
      view->epoch_word_ = &s.epoch;
      view->info_ = info;
    } else if (info.length > out.size()) {
      status = KvStatus::value_too_large;
    } else if (info.length <= detail::kSmallCopyBytes && out.size() >= detail::kSmallCopyBytes) {
      // One fixed-size copy, no call; integer values too: integer ops bump the epoch checked below.
      detail::seqlock_copy_out_small(out.data(), value_ptr(i));
    } else if (is_word_type(info.type) && info.length == sizeof(std::uint64_t)) {
      const std::uint64_t w = std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(value_ptr(i)))
                                  .load(std::memory_order_relaxed);
      std::memcpy(out.data(), &w, sizeof(w));
    } else if (info.length != 0) {
      detail::seqlock_copy_out(out.data(), value_ptr(i), info.length);
    }
    std::atomic_thread_fence(std::memory_order_acquire);  // every read above happens before the re-check
    if (s.epoch.load(std::memory_order_relaxed) == epoch) return status;
    spins = 0;
  }
}

KvStatus KvStore::atomic_slot(KeyHandle h, AtomicOp op, std::uint64_t operand, std::uint64_t& result) noexcept {
  if (read_only_) return KvStatus::read_only;
  SlotHeader& s = slot(h.slot);
  std::int64_t started = 0;
  for (;;) {
    s.pins.fetch_add(1, std::memory_order_seq_cst);  // Dekker pair with claim_slot's CAS + pins load
    const std::uint64_t epoch = s.epoch.load(std::memory_order_seq_cst);
    if ((epoch & 1U) != 0) {
      detail::unpin(s);  // a writer is inside: let it finish, never fail with EAGAIN
      if (started == 0) started = core::monotonic_ns();
      if (!detail::settle_slot(*header_, s, index_[h.slot], epoch, started, started + kDefaultWaitNs, true))
        return KvStatus::busy;
      continue;
    }
    // No writer can enter while we hold the pin, so meta and generation are stable here.
    const std::uint64_t m = s.meta.load(std::memory_order_relaxed);
    KvStatus status = KvStatus::ok;
    if (s.generation.load(std::memory_order_relaxed) != h.generation) {
      status = KvStatus::stale_handle;
    } else if (!detail::meta_live(m)) {
      status = KvStatus::not_found;
    } else if (!is_integer(detail::meta_type(m)) || detail::meta_value_len(m) != sizeof(std::uint64_t)) {
      status = KvStatus::type_mismatch;
    } else if ((detail::meta_flags(m) & kSlotTorn) != 0) {
      status = KvStatus::torn;
    } else {
      std::atomic_ref<std::uint64_t> word(*reinterpret_cast<std::uint64_t*>(value_ptr(h.slot)));
      switch (op) {  // relaxed: the epoch bump below publishes the change to seqlock readers
        case AtomicOp::add: result = word.fetch_add(operand, std::memory_order_relaxed) + operand; break;
        case AtomicOp::bit_and: result = word.fetch_and(operand, std::memory_order_relaxed) & operand; break;
        case AtomicOp::bit_or: result = word.fetch_or(operand, std::memory_order_relaxed) | operand; break;
        case AtomicOp::bit_xor: result = word.fetch_xor(operand, std::memory_order_relaxed) ^ operand; break;
        case AtomicOp::bit_not: result = ~word.fetch_xor(~std::uint64_t{0}, std::memory_order_relaxed); break;
      }
      s.epoch.fetch_add(kEpochUnit, std::memory_order_release);  // stays even: readers see a new version
    }
    const std::uint64_t bits = status == KvStatus::ok ? group_bits_locked(h.slot) : 0;  // pinned: key stable
    detail::unpin(s);
    if (bits != 0) publish(h.slot, h.generation, bits);
    return status;
  }
}

// ---- public face -------------------------------------------------------------------------------

KvStatus KvStore::set(std::string_view key, std::span<const std::byte> value, ValueType type) noexcept {
  return set_impl(key, value, type, 0);
}

KvStatus KvStore::set_wait(std::string_view key, std::span<const std::byte> value, ValueType type,
                           std::int64_t timeout_ns) noexcept {
  return set_impl(key, value, type, deadline_after(timeout_ns < 1 ? 1 : timeout_ns));
}

KvStatus KvStore::set_impl(std::string_view key, std::span<const std::byte> value, ValueType type,
                           std::int64_t deadline_ns, const ArrayShape* shape) noexcept {
  if (read_only_) return KvStatus::read_only;
  if (const KvStatus k = check_key(key); k != KvStatus::ok) return k;
  if ((type == ValueType::array) != (shape != nullptr)) return KvStatus::type_mismatch;  // arrays: set_array
  if (value.size() > value_bytes_) return KvStatus::value_too_large;
  const std::uint64_t hash = detail::hash_key(key);
  if (!detail::is_word_type(type) && shape == nullptr) {
    bool written = false;
    probe_tagged(index_, slot_count_, max_probe_, hash, [&](std::uint32_t i) {
      const WriteFast r = try_set_by_key(i, key, value, type);
      written = r == WriteFast::done;
      return r != WriteFast::other_key;  // not_taken: the general way below sorts it out
    });
    if (written) return KvStatus::ok;
  }
  for (;;) {
    KeyHandle h;
    if (find(key, hash, h)) {
      const KvStatus st = write_slot(h, value, type, deadline_ns, shape);
      if (st == KvStatus::busy && detail::may_wait(deadline_ns) && core::monotonic_ns() < deadline_ns) continue;
      if (st != KvStatus::stale_handle && st != KvStatus::not_found) return st;
    }
    KeyHandle inserted;
    return insert(key, hash, value, type, true, deadline_ns, inserted, shape);
  }
}

KvStatus KvStore::set_array(std::string_view key, const ArrayShape& shape, std::span<const std::byte> data) noexcept {
  if (!shape_ok(shape, data.size())) return KvStatus::type_mismatch;
  return set_impl(key, data, ValueType::array, deadline_after(kDefaultWaitNs), &shape);
}

KvStatus KvStore::set_array(KeyHandle h, const ArrayShape& shape, std::span<const std::byte> data) noexcept {
  if (read_only_) return KvStatus::read_only;
  if (h.slot >= slot_count_) return KvStatus::stale_handle;
  if (!shape_ok(shape, data.size())) return KvStatus::type_mismatch;
  if (data.size() > value_bytes_) return KvStatus::value_too_large;
  return write_slot(h, data, ValueType::array, 0, &shape);
}

KvStatus KvStore::get(std::string_view key, std::span<std::byte> out, ValueInfo& info) const noexcept {
  return lookup_read(key, out, info, nullptr);
}

KvStatus KvStore::view(std::string_view key, ValueView& out) const noexcept {
  ValueInfo info;
  return lookup_read(key, {}, info, &out);
}

// The common write by key: in one seqlock window the slot is live, holds `key`, and pulses no
// group; then the claim from that same epoch, which proves the key compare still holds.
KvStore::WriteFast KvStore::try_set_by_key(std::uint32_t i, std::string_view key, std::span<const std::byte> value,
                                           ValueType type) noexcept {
  std::byte* const base = slots_ + std::uint64_t{i} * stride_;
  SlotHeader& s = *reinterpret_cast<SlotHeader*>(base);
  const std::uint64_t version = header_->groups_version.load(std::memory_order_acquire);
  const std::uint64_t epoch = s.epoch.load(std::memory_order_acquire);  // pairs with the writer's release
  const std::uint64_t m = s.meta.load(std::memory_order_relaxed);
  if (epoch_odd(epoch) || !detail::meta_live(m)) return WriteFast::not_taken;
  const bool equal = slot_holds_key(base + sizeof(SlotHeader), m, key);
  if (!equal) {
    std::atomic_thread_fence(std::memory_order_acquire);  // the compare happens before the re-check
    return s.epoch.load(std::memory_order_relaxed) == epoch ? WriteFast::other_key : WriteFast::not_taken;
  }
  if (s.groups_seen.load(std::memory_order_relaxed) != version || s.group_bits.load(std::memory_order_relaxed) != 0)
    return WriteFast::not_taken;
  return claim_and_write(s, base + value_offset_, epoch, m, value, type) == KvStatus::ok ? WriteFast::done
                                                                                          : WriteFast::not_taken;
}

// The common read by key, without read_slot's generality: one seqlock window in which the slot is
// live, not torn, holds `key` and a value of at most kSmallCopyBytes, copied with one fixed-size
// copy. The key is compared before the copy, so `out` is only written for the key asked for.
inline KvStore::ReadFast KvStore::read_small_by_key(std::uint32_t i, std::string_view key,
                                                    std::span<std::byte> out, ValueInfo& info) const noexcept {
  const std::byte* const base = slots_ + std::uint64_t{i} * stride_;
  const SlotHeader& s = *reinterpret_cast<const SlotHeader*>(base);
  const std::uint64_t epoch = s.epoch.load(std::memory_order_acquire);  // pairs with the writer's release
  const std::uint64_t m = s.meta.load(std::memory_order_relaxed);
  const std::uint32_t length = detail::meta_value_len(m);
  const std::uint64_t unusual = (epoch & kEpochOdd) | ((m ^ detail::kMetaLive) & detail::kMetaLiveTorn);
  if ((unusual | detail::meta_is_array(m)) != 0 || length > detail::kSmallCopyBytes) return ReadFast::not_taken;
  const bool equal = slot_holds_key(base + sizeof(SlotHeader), m, key);
  if (equal) detail::seqlock_copy_out_small(out.data(), base + value_offset_);
  std::atomic_thread_fence(std::memory_order_acquire);  // the compare and copy happen before the re-check
  if (s.epoch.load(std::memory_order_relaxed) != epoch) return ReadFast::not_taken;
  if (!equal) return ReadFast::other_key;
  info = ValueInfo{detail::meta_type(m), length, epoch, {}};
  return ReadFast::done;
}

KvStatus KvStore::lookup_read(std::string_view key, std::span<std::byte> out, ValueInfo& info,
                              ValueView* view) const noexcept {
  if (const KvStatus k = check_key(key); k != KvStatus::ok) return k;
  KvStatus result = KvStatus::not_found;
  probe_tagged(index_, slot_count_, max_probe_, detail::hash_key(key), [&](std::uint32_t i) {
    if (view == nullptr && out.size() >= detail::kSmallCopyBytes) {
      const ReadFast r = read_small_by_key(i, key, out, info);
      if (r == ReadFast::done) {
        result = KvStatus::ok;
        return true;
      }
      if (r == ReadFast::other_key) return false;
    }
    result = read_slot(i, 0, key, out, info, view);
    return result != KvStatus::stale_handle;  // stale_handle: another key lives here; keep probing
  });
  return result == KvStatus::stale_handle ? KvStatus::not_found : result;
}

KvStatus KvStore::del(std::string_view key) noexcept {
  if (read_only_) return KvStatus::read_only;
  if (const KvStatus k = check_key(key); k != KvStatus::ok) return k;
  const std::uint64_t hash = detail::hash_key(key);
  KeyHandle h;
  if (!find(key, hash, h)) return KvStatus::not_found;
  SlotHeader& s = slot(h.slot);
  if (!detail::claim_slot(*header_, s, index_[h.slot], 0)) return KvStatus::busy;
  const std::uint64_t m = s.meta.load(std::memory_order_relaxed);
  if (!detail::meta_live(m) || s.generation.load(std::memory_order_relaxed) != h.generation) {
    detail::release_slot(s);
    return KvStatus::not_found;  // someone else deleted it first
  }
  const std::uint64_t bits = group_bits_locked(h.slot);  // watchers hear of deletions too
  s.meta.store(make_meta(0, detail::meta_key_len(m), ValueType::none, 0), std::memory_order_relaxed);
  const std::uint64_t e = index_[h.slot].load(std::memory_order_relaxed);
  index_[h.slot].store(make_index(IndexState::tombstone, detail::index_tag(e)), std::memory_order_seq_cst);
  detail::release_slot(s);
  if (bits != 0) publish(h.slot, h.generation, bits);
  return KvStatus::ok;
}

KvStatus KvStore::resolve(std::string_view key, KeyHandle& out, bool create) noexcept {
  if (const KvStatus k = check_key(key); k != KvStatus::ok) return k;
  const std::uint64_t hash = detail::hash_key(key);
  if (find(key, hash, out)) return KvStatus::ok;
  if (!create) return KvStatus::not_found;
  if (read_only_) return KvStatus::read_only;
  return insert(key, hash, {}, ValueType::none, false, deadline_after(kDefaultWaitNs), out);
}

KvStatus KvStore::set_handle_slow(KeyHandle h, std::span<const std::byte> value, ValueType type) noexcept {
  if (read_only_) return KvStatus::read_only;
  if (h.slot >= slot_count_) return KvStatus::stale_handle;
  if (type == ValueType::array) return KvStatus::type_mismatch;  // arrays carry a shape: set_array
  if (value.size() > value_bytes_) return KvStatus::value_too_large;
  return write_slot(h, value, type, 0);
}

KvStatus KvStore::get_handle_slow(KeyHandle h, std::span<std::byte> out, ValueInfo& info) const noexcept {
  if (h.slot >= slot_count_) return KvStatus::stale_handle;
  return read_slot(h.slot, h.generation, {}, out, info, nullptr);
}

KvStatus KvStore::view(KeyHandle h, ValueView& out) const noexcept {
  if (h.slot >= slot_count_) return KvStatus::stale_handle;
  ValueInfo info;
  return read_slot(h.slot, h.generation, {}, {}, info, &out);
}

KvStatus KvStore::atomic(std::string_view key, AtomicOp op, std::uint64_t operand, std::uint64_t& result) noexcept {
  if (read_only_) return KvStatus::read_only;
  if (const KvStatus k = check_key(key); k != KvStatus::ok) return k;
  const std::uint64_t hash = detail::hash_key(key);
  const std::uint64_t zero = 0;
  for (int attempt = 0; attempt < kLookupAttempts; ++attempt) {
    KeyHandle h;
    if (!find(key, hash, h)) {
      const KvStatus st = insert(key, hash, word_bytes(zero), ValueType::i64, false, deadline_after(kDefaultWaitNs), h);
      if (st != KvStatus::ok) return st;
    }
    const KvStatus st = atomic_slot(h, op, operand, result);
    if (st != KvStatus::stale_handle && st != KvStatus::not_found) return st;
  }
  return KvStatus::busy;
}

KvStatus KvStore::atomic(KeyHandle h, AtomicOp op, std::uint64_t operand, std::uint64_t& result) noexcept {
  if (h.slot >= slot_count_) return KvStatus::stale_handle;
  return atomic_slot(h, op, operand, result);
}

KvStatus KvStore::set_i64(std::string_view key, std::int64_t v) noexcept {
  const auto w = std::bit_cast<std::uint64_t>(v);
  return set_wait(key, word_bytes(w), ValueType::i64);
}

KvStatus KvStore::set_u64(std::string_view key, std::uint64_t v) noexcept {
  return set_wait(key, word_bytes(v), ValueType::u64);
}

KvStatus KvStore::set_f64(std::string_view key, double v) noexcept {
  const auto w = std::bit_cast<std::uint64_t>(v);
  return set_wait(key, word_bytes(w), ValueType::f64);
}

KvStatus KvStore::set_text(std::string_view key, std::string_view text) noexcept {
  return set_wait(key, {reinterpret_cast<const std::byte*>(text.data()), text.size()}, ValueType::text);
}

KvStatus KvStore::get_scalar(std::string_view key, std::uint64_t& bits, ValueType& type) const noexcept {
  ValueInfo info;
  std::uint64_t w = 0;
  const KvStatus st = get(key, {reinterpret_cast<std::byte*>(&w), sizeof(w)}, info);
  if (st == KvStatus::value_too_large) return KvStatus::type_mismatch;
  if (st != KvStatus::ok) return st;
  if (!is_word_type(info.type) || info.length != sizeof(w)) return KvStatus::type_mismatch;
  bits = w;
  type = info.type;
  return KvStatus::ok;
}

KvStatus KvStore::set_labels(std::string_view key, std::uint64_t mask, std::uint64_t label_ids) noexcept {
  if (read_only_) return KvStatus::read_only;
  if (const KvStatus k = check_key(key); k != KvStatus::ok) return k;
  const std::uint64_t hash = detail::hash_key(key);
  KeyHandle h;
  if (!find(key, hash, h)) return KvStatus::not_found;
  SlotHeader& s = slot(h.slot);
  if (!detail::claim_slot(*header_, s, index_[h.slot], deadline_after(kDefaultWaitNs))) return KvStatus::busy;
  const bool same = s.generation.load(std::memory_order_relaxed) == h.generation &&
                    detail::meta_live(s.meta.load(std::memory_order_relaxed));
  if (same) {
    s.labels.store(mask | key_self_mask(hash), std::memory_order_relaxed);
    s.label_ids.store(label_ids, std::memory_order_relaxed);
    // Rebuilt now, under the claim, so that writes that do not claim the slot (vector rows) find
    // the cache current and pay nothing for it.
    const detail::SignalView v{header_, groups_, logs_, watchers_, log_entries_};
    detail::refresh_group_bits(v, s, key_ptr(h.slot), detail::meta_key_len(s.meta.load(std::memory_order_relaxed)),
                               header_->groups_version.load(std::memory_order_acquire));
  }
  detail::release_slot(s);
  return same ? KvStatus::ok : KvStatus::not_found;
}

KvStatus KvStore::key_at(std::uint32_t i, std::span<char> out, std::uint32_t& length, ValueInfo& info) const noexcept {
  if (i >= slot_count_ || out.size() < key_bytes_) return KvStatus::not_found;
  if (detail::index_state(index_[i].load(std::memory_order_acquire)) != IndexState::live) return KvStatus::not_found;
  const SlotHeader& s = slot(i);
  for (int attempt = 0; attempt < kLookupAttempts; ++attempt) {
    const std::uint64_t e = s.epoch.load(std::memory_order_acquire);  // arrays: the shape's window
    const std::uint32_t g1 = s.generation.load(std::memory_order_acquire);
    const std::uint64_t m = s.meta.load(std::memory_order_acquire);
    if (!detail::meta_live(m)) return KvStatus::not_found;
    length = std::min(detail::meta_key_len(m), key_bytes_);
    detail::seqlock_copy_out(out.data(), key_ptr(i), length);
    const bool array = detail::meta_is_array(m) != 0;
    info = ValueInfo{detail::meta_type(m), detail::meta_value_len(m), s.epoch.load(std::memory_order_relaxed), {}};
    if (array) info.array = load_shape(s);
    std::atomic_thread_fence(std::memory_order_acquire);  // the copy happens before the re-check
    // An array's shape can change with meta unchanged: its shape needs the epoch unchanged and even too.
    const bool shape_stable = !array || (!epoch_odd(e) && s.epoch.load(std::memory_order_relaxed) == e);
    if (s.generation.load(std::memory_order_relaxed) == g1 && s.meta.load(std::memory_order_relaxed) == m &&
        shape_stable)
      return KvStatus::ok;
  }
  return KvStatus::busy;
}

std::uint64_t KvStore::count() const noexcept {
  std::uint64_t n = 0;
  for (std::uint32_t i = 0; i < slot_count_; ++i)
    n += detail::index_state(index_[i].load(std::memory_order_relaxed)) == IndexState::live ? 1U : 0U;
  return n;
}

}  // namespace weir::core
