// Vector rows: set, get and view under each row's seqlock, plus waiting on held rows and recovering the
// rows of writers that died inside them. The search lives in vector_search.cpp. Protocol:
// docs/design/vectors.md.
#include "weir/core/vector_store.hpp"

#include <bit>
#include <cmath>
#include <limits>

#include "backing.hpp"
#include "slot_ops.hpp"
#include "vector_rows.hpp"
#include "weir/core/detail/seqlock.hpp"

namespace weir::core {

namespace detail {

namespace {

// Takes over a row whose writer is dead: exactly one recoverer wins the CAS from the odd word it saw,
// and holds the row under its own pid while it marks it torn.
bool recover_row(ArenaHeader& header, VectorRowHeader& row, std::uint64_t odd_epoch) noexcept {
  std::uint64_t expected = odd_epoch;
  const std::uint64_t mine = epoch_claimed(odd_epoch & ~(kEpochUnit - 1), current_pid());
  if (!row.epoch.compare_exchange_strong(expected, mine, std::memory_order_acquire)) return false;
  std::atomic_thread_fence(std::memory_order_release);      // still odd (now ours) before the flag below
  row.flags.fetch_or(kRowTorn, std::memory_order_relaxed);  // published by the release below
  header.recovered_slots.fetch_add(1, std::memory_order_relaxed);  // a counter: nothing orders on it
  release_row(row);
  return true;
}

}  // namespace

bool recover_if_dead(ArenaHeader& header, VectorRowHeader& row, std::uint64_t odd_epoch, std::int64_t started_ns,
                     std::int64_t now_ns) noexcept {
  return now_ns - started_ns >= kStuckAfterNs && !pid_alive(epoch_owner(odd_epoch)) &&
         recover_row(header, row, odd_epoch);
}

bool settle_row(ArenaHeader& header, VectorRowHeader& row, std::uint64_t odd_epoch, std::int64_t started_ns,
                std::int64_t deadline_ns, bool writable) noexcept {
  int spins = 0;
  for (;;) {
    if (row.epoch.load(std::memory_order_acquire) != odd_epoch) return true;
    const std::int64_t now = monotonic_ns();
    if (writable && recover_if_dead(header, row, odd_epoch, started_ns, now)) return true;
    if (now >= deadline_ns) return false;
    row_backoff(spins);
  }
}

bool claim_row(ArenaHeader& header, VectorRowHeader& row, std::int64_t deadline_ns) noexcept {
  std::int64_t started = 0;
  const std::uint32_t pid = current_pid();
  std::uint64_t epoch = row.epoch.load(std::memory_order_relaxed);
  for (;;) {
    if (!epoch_odd(epoch)) {
      // One CAS claims the row and names us in it. acquire: the previous writer's floats are ours to
      // overwrite only after its release.
      if (row.epoch.compare_exchange_weak(epoch, epoch_claimed(epoch, pid), std::memory_order_acquire,
                                          std::memory_order_relaxed))
        break;
      continue;
    }
    if (!may_wait(deadline_ns)) return false;
    if (started == 0) started = monotonic_ns();
    if (!settle_row(header, row, epoch, started, deadline_ns, true)) return false;
    epoch = row.epoch.load(std::memory_order_relaxed);
  }
  std::atomic_thread_fence(std::memory_order_release);  // odd epoch visible before any float store
  return true;
}

}  // namespace detail

namespace {

using detail::kRowPresent;
using detail::kRowTorn;

VectorStatus from_kv(KvStatus s) noexcept {
  switch (s) {
    case KvStatus::ok: return VectorStatus::ok;
    case KvStatus::not_found: return VectorStatus::not_found;
    case KvStatus::busy: return VectorStatus::busy;
    case KvStatus::full: return VectorStatus::full;
    case KvStatus::torn: return VectorStatus::torn;
    case KvStatus::key_too_long: return VectorStatus::key_too_long;
    case KvStatus::key_empty: return VectorStatus::key_empty;
    case KvStatus::value_too_large: return VectorStatus::wrong_length;
    case KvStatus::type_mismatch: return VectorStatus::not_found;
    case KvStatus::stale_handle: return VectorStatus::stale_handle;
    case KvStatus::read_only: return VectorStatus::read_only;
  }
  return VectorStatus::busy;
}

constexpr int kResolveAttempts = 8;  // set() re-resolves a key deleted between resolve and write this often

}  // namespace

const char* vector_status_name(VectorStatus s) noexcept {
  switch (s) {
    case VectorStatus::ok: return "ok";
    case VectorStatus::not_found: return "not_found";
    case VectorStatus::no_vector: return "no_vector";
    case VectorStatus::busy: return "busy";
    case VectorStatus::torn: return "torn";
    case VectorStatus::wrong_length: return "wrong_length";
    case VectorStatus::no_vectors: return "no_vectors";
    case VectorStatus::not_finite: return "not_finite";
    case VectorStatus::full: return "full";
    case VectorStatus::key_too_long: return "key_too_long";
    case VectorStatus::key_empty: return "key_empty";
    case VectorStatus::stale_handle: return "stale_handle";
    case VectorStatus::read_only: return "read_only";
    case VectorStatus::no_kernel: return "no_kernel";
  }
  return "unknown";
}

const char* vector_status_text(VectorStatus s) noexcept {
  switch (s) {
    case VectorStatus::ok: return "ok";
    case VectorStatus::not_found: return "key not found";
    case VectorStatus::no_vector: return "the key has no vector";
    case VectorStatus::busy: return "another writer holds the vector row (EAGAIN); try again";
    case VectorStatus::torn: return "a writer died mid-write: the vector is torn until set again";
    case VectorStatus::wrong_length: return "the vector does not have the arena's dimension";
    case VectorStatus::no_vectors: return "the arena was created without vectors (dimension 0)";
    case VectorStatus::not_finite: return "the vector holds NaN or infinity, or its norm overflows float";
    case VectorStatus::full: return "no free slot within the probe window: the arena is full";
    case VectorStatus::key_too_long: return "key longer than the arena's key_bytes";
    case VectorStatus::key_empty: return "empty key";
    case VectorStatus::stale_handle: return "handle's key was deleted and its slot reused";
    case VectorStatus::read_only: return "arena is mapped read-only";
    case VectorStatus::no_kernel: return "this CPU cannot run the requested search kernel";
  }
  return "unknown status";
}

const char* metric_name(Metric m) noexcept {
  switch (m) {
    case Metric::cosine: return "cosine";
    case Metric::dot: return "dot";
    case Metric::l2: return "l2";
  }
  return "unknown";
}

const char* kernel_name(Kernel k) noexcept {
  switch (k) {
    case Kernel::best: return "best";
    case Kernel::portable: return "portable";
    case Kernel::avx2: return "avx2";
    case Kernel::avx512: return "avx512";
  }
  return "unknown";
}

bool kernel_supported(Kernel k) noexcept { return detail::kernel_table(k) != nullptr; }

Kernel best_kernel() noexcept {
  if (kernel_supported(Kernel::avx512)) return Kernel::avx512;
  return kernel_supported(Kernel::avx2) ? Kernel::avx2 : Kernel::portable;
}

VectorStore::VectorStore(const Arena& arena) noexcept
    : kv_(arena),
      header_(&arena.header()),
      slots_base_(arena.region(Region::slots)),
      row_stride_(vector_row_stride(arena.geometry().vector_dim)),
      slot_stride_(arena.geometry().slot_stride),
      rows_(arena.geometry().vector_count),
      dim_(arena.geometry().vector_count == 0 ? 0 : arena.geometry().vector_dim),
      read_only_(arena.read_only()) {
  if (dim_ != 0) rows_base_ = arena.region(Region::vectors);
}

bool VectorStore::slot_holds(std::uint32_t i, std::uint32_t generation) const noexcept {
  return detail::slot_holds(slot(i), generation);
}

VectorStatus VectorStore::check_vector(std::span<const float> v, float& norm) const noexcept {
  if (dim_ == 0) return VectorStatus::no_vectors;
  if (v.size() != dim_) return VectorStatus::wrong_length;
  double sum = 0.0;  // double: an exact-enough norm for any float input, and finite unless the input is not
  for (const float x : v) sum += static_cast<double>(x) * static_cast<double>(x);
  const double n = std::sqrt(sum);
  if (!std::isfinite(n) || n > static_cast<double>(std::numeric_limits<float>::max()))
    return VectorStatus::not_finite;  // NaN or infinity in v, or a norm float cannot hold
  norm = static_cast<float>(n);
  return VectorStatus::ok;
}

VectorStatus VectorStore::write_row(KeyHandle h, std::span<const float> v, float norm,
                                    std::int64_t deadline_ns) noexcept {
  VectorRowHeader& r = row(h.slot);
  if (!detail::claim_row(*header_, r, deadline_ns)) return VectorStatus::busy;
  // Checked while holding the row: a writer for a newer incarnation of the slot that finished before
  // our claim is visible here, so an old handle never overwrites the new key's vector.
  if (!slot_holds(h.slot, h.generation)) {
    const bool reused = slot(h.slot).generation.load(std::memory_order_relaxed) != h.generation;
    detail::release_row(r);
    return reused ? VectorStatus::stale_handle : VectorStatus::not_found;
  }
  detail::seqlock_copy_in(row_data(h.slot), v.data(), v.size_bytes());
  r.norm_bits.store(std::bit_cast<std::uint32_t>(norm), std::memory_order_relaxed);  // all published by release
  r.generation.store(h.generation, std::memory_order_relaxed);
  r.flags.store(kRowPresent, std::memory_order_relaxed);  // clears torn
  detail::release_row(r);
  // Like a KV write: after the release, so a woken watcher reads the new vector. A key no group
  // watches costs a version load and three loads of its slot header, which slot_holds just read.
  const std::uint64_t bits = kv_.group_bits_unclaimed(h);
  if (bits != 0) [[unlikely]]
    kv_.publish_unclaimed(h, bits);
  return VectorStatus::ok;
}

VectorStatus VectorStore::set_impl(std::string_view key, std::span<const float> v, std::int64_t deadline_ns) noexcept {
  if (read_only_) return VectorStatus::read_only;
  float norm = 0.0F;
  if (const VectorStatus c = check_vector(v, norm); c != VectorStatus::ok) return c;
  for (int attempt = 0; attempt < kResolveAttempts; ++attempt) {
    KeyHandle h;
    if (const KvStatus st = kv_.resolve(key, h, true); st != KvStatus::ok) return from_kv(st);
    const VectorStatus st = write_row(h, v, norm, deadline_ns);
    if (st != VectorStatus::stale_handle && st != VectorStatus::not_found) return st;  // else: deleted meanwhile
  }
  return VectorStatus::busy;
}

VectorStatus VectorStore::set(std::string_view key, std::span<const float> v) noexcept {
  return set_impl(key, v, 0);
}

VectorStatus VectorStore::set_wait(std::string_view key, std::span<const float> v, std::int64_t timeout_ns) noexcept {
  return set_impl(key, v, deadline_after(timeout_ns < 1 ? 1 : timeout_ns));
}

VectorStatus VectorStore::set(KeyHandle h, std::span<const float> v, std::int64_t timeout_ns) noexcept {
  if (read_only_) return VectorStatus::read_only;
  float norm = 0.0F;
  if (const VectorStatus c = check_vector(v, norm); c != VectorStatus::ok) return c;
  if (h.slot >= rows_) return VectorStatus::stale_handle;
  return write_row(h, v, norm, deadline_after(timeout_ns));
}

// One seqlock read of row h.slot: a copy into out, or a view. Waits (bounded) for a writer inside and
// recovers a dead one's row when the mapping is writable.
VectorStatus VectorStore::read_row(KeyHandle h, std::span<float> out, VectorView* view) const noexcept {
  VectorRowHeader& r = row(h.slot);
  std::int64_t started = 0;
  int spins = 0;
  for (;;) {
    const std::uint64_t epoch = r.epoch.load(std::memory_order_acquire);  // pairs with the writer's release
    if (epoch_odd(epoch)) {
      if (++spins < kReadSpins) {
        detail::cpu_relax();
        continue;
      }
      if (started == 0) started = core::monotonic_ns();
      if (!detail::settle_row(*header_, r, epoch, started, started + kDefaultWaitNs, !read_only_))
        return VectorStatus::busy;
      spins = 0;
      continue;
    }
    const std::uint32_t flags = r.flags.load(std::memory_order_relaxed);
    const std::uint32_t generation = r.generation.load(std::memory_order_relaxed);
    const float norm = std::bit_cast<float>(r.norm_bits.load(std::memory_order_relaxed));
    VectorStatus status = VectorStatus::ok;
    if (generation != h.generation || (flags & kRowPresent) == 0) {
      status = VectorStatus::no_vector;
    } else if ((flags & kRowTorn) != 0) {
      status = VectorStatus::torn;
    } else if (view != nullptr) {
      view->data_ = row_data(h.slot);
      view->epoch_word_ = &r.epoch;
      view->epoch_ = epoch;
      view->size_ = dim_;
      view->norm_ = norm;
    } else {
      detail::seqlock_copy_out(out.data(), row_data(h.slot), out.size_bytes());
    }
    std::atomic_thread_fence(std::memory_order_acquire);  // every read above happens before the re-check
    if (r.epoch.load(std::memory_order_relaxed) != epoch) {
      spins = 0;
      continue;
    }
    // The row belongs to h's incarnation; the slot must still hold it (a deleted key has no vector).
    if (status == VectorStatus::ok && !slot_holds(h.slot, h.generation)) {
      const bool reused = slot(h.slot).generation.load(std::memory_order_relaxed) != h.generation;
      return reused ? VectorStatus::stale_handle : VectorStatus::not_found;
    }
    return status;
  }
}

VectorStatus VectorStore::lookup(std::string_view key, KeyHandle& out) const noexcept {
  if (dim_ == 0) return VectorStatus::no_vectors;
  return from_kv(kv_.resolve(key, out, false));
}

VectorStatus VectorStore::get(std::string_view key, std::span<float> out) const noexcept {
  if (dim_ == 0) return VectorStatus::no_vectors;
  if (out.size() != dim_) return VectorStatus::wrong_length;
  for (int attempt = 0; attempt < kResolveAttempts; ++attempt) {
    KeyHandle h;
    if (const VectorStatus st = lookup(key, h); st != VectorStatus::ok) return st;
    const VectorStatus st = read_row(h, out, nullptr);
    if (st != VectorStatus::stale_handle) return st;  // stale: the key was deleted and re-added meanwhile
  }
  return VectorStatus::busy;
}

VectorStatus VectorStore::get(KeyHandle h, std::span<float> out) const noexcept {
  if (dim_ == 0) return VectorStatus::no_vectors;
  if (out.size() != dim_) return VectorStatus::wrong_length;
  if (h.slot >= rows_) return VectorStatus::stale_handle;
  return read_row(h, out, nullptr);
}

VectorStatus VectorStore::view(std::string_view key, VectorView& out) const noexcept {
  for (int attempt = 0; attempt < kResolveAttempts; ++attempt) {
    KeyHandle h;
    if (const VectorStatus st = lookup(key, h); st != VectorStatus::ok) return st;
    const VectorStatus st = read_row(h, {}, &out);
    if (st != VectorStatus::stale_handle) return st;
  }
  return VectorStatus::busy;
}

VectorStatus VectorStore::view(KeyHandle h, VectorView& out) const noexcept {
  if (dim_ == 0) return VectorStatus::no_vectors;
  if (h.slot >= rows_) return VectorStatus::stale_handle;
  return read_row(h, {}, &out);
}

VectorStatus VectorStore::key_of(const VectorHit& hit, std::span<char> out, std::uint32_t& length) const noexcept {
  if (dim_ == 0) return VectorStatus::no_vectors;
  if (hit.slot >= rows_ || out.size() < kv_.key_bytes()) return VectorStatus::not_found;
  // The key of a live slot never changes while its generation stays (docs/design/kv.md, invariant 2),
  // so an unchanged generation around key_at vouches for the key belonging to the hit.
  if (!slot_holds(hit.slot, hit.generation)) return VectorStatus::not_found;
  ValueInfo info;
  const KvStatus st = kv_.key_at(hit.slot, out, length, info);
  if (st != KvStatus::ok) return from_kv(st);
  std::atomic_thread_fence(std::memory_order_acquire);  // the key copy happens before the re-check
  return slot_holds(hit.slot, hit.generation) ? VectorStatus::ok : VectorStatus::not_found;
}

}  // namespace weir::core
