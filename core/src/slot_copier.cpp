// Whole-slot copies under the seqlock: the same protocol as KvStore's reads, one level lower, so the
// key, value, type, labels and epoch of a copy all come from one version of the slot.
#include "weir/core/slot_copier.hpp"

#include <sched.h>

#include "weir/core/assert.hpp"
#include "weir/core/clock.hpp"
#include "weir/core/detail/seqlock.hpp"
#include "weir/core/detail/slot_meta.hpp"

namespace weir::core {

namespace {

// Caller buffers: a key or value longer than its buffer is measured, not copied.
struct SpanSink {
  std::span<char> key;
  std::span<std::byte> value;
  char* key_at(std::uint32_t n) const noexcept { return n <= key.size() ? key.data() : nullptr; }
  std::byte* value_at(std::uint32_t n) const noexcept { return n <= value.size() ? value.data() : nullptr; }
  void drop_key() const noexcept {}
  void drop_value() const noexcept {}
};

// A reusable copy: the strings grow to fit (their capacity stays for the next copy).
struct GrowSink {
  std::string& key;
  std::vector<std::byte>& value;
  char* key_at(std::uint32_t n) {
    key.resize(n);
    return key.data();
  }
  std::byte* value_at(std::uint32_t n) {
    value.resize(n);
    return value.data();
  }
  void drop_key() noexcept { key.clear(); }
  void drop_value() noexcept { value.clear(); }
};

}  // namespace

const char* slot_status_name(SlotStatus status) noexcept {
  switch (status) {
    case SlotStatus::ok: return "ok";
    case SlotStatus::busy: return "busy";
    case SlotStatus::torn: return "torn";
    case SlotStatus::empty: return "empty";
    case SlotStatus::too_small: return "too_small";
  }
  return "unknown";
}

SlotCopier::SlotCopier(const Arena& arena, const SlotCopyOptions& options) noexcept
    : slots_(arena.region(Region::slots)),
      stride_(arena.geometry().slot_stride),
      value_offset_(value_offset_in_slot(arena.geometry().key_bytes)),
      slot_count_(arena.geometry().slot_count),
      key_bytes_(arena.geometry().key_bytes),
      value_bytes_(arena.geometry().value_bytes),
      options_(options) {}

SlotStatus SlotCopier::copy(std::uint32_t slot, std::span<char> key, std::span<std::byte> value,
                            SlotRecord& out) const noexcept {
  SpanSink sink{key, value};
  return copy_with(slot, sink, out);
}

SlotStatus SlotCopier::copy(std::uint32_t slot, SlotCopy& out) const {
  GrowSink sink{out.key, out.value};
  return copy_with(slot, sink, out.record);
}

template <class Sink>
SlotStatus SlotCopier::copy_with(std::uint32_t i, Sink& sink, SlotRecord& out) const {
  WEIR_ENFORCE(i < slot_count_, "SlotCopier::copy: slot index past the arena's slot count");
  const std::byte* const base = slots_ + std::uint64_t{i} * stride_;
  const auto& s = *reinterpret_cast<const SlotHeader*>(base);
  out = SlotRecord{};
  out.slot = i;
  std::int64_t held_since = -1;
  int spins = 0;
  for (;;) {
    const std::uint64_t e = s.epoch.load(std::memory_order_acquire);  // pairs with the writer's release
    if (epoch_odd(e)) {
      const std::int64_t now = monotonic_ns();
      if (held_since < 0) {
        held_since = now;
        out.met_writer = true;
      }
      if (now - held_since >= options_.wait_ns) {
        record_busy(i, e, sink, out);
        return out.status;
      }
      if (++spins % kSlotCopySpinsBeforeYield == 0) sched_yield();
      detail::cpu_relax();
      continue;
    }
    const std::uint64_t m = s.meta.load(std::memory_order_relaxed);
    const std::uint32_t key_len = detail::meta_key_len(m), value_len = detail::meta_value_len(m);
    const bool live = detail::meta_live(m);
    const bool torn = (detail::meta_flags(m) & kSlotTorn) != 0;
    const bool sane = key_len > 0 && key_len <= key_bytes_ && value_len <= value_bytes_;
    bool fits = true;
    if (live && sane) {
      char* const k = sink.key_at(key_len);
      std::byte* const v = torn ? nullptr : sink.value_at(value_len);  // a torn value is never handed out
      fits = k != nullptr && (torn || v != nullptr);
      if (k != nullptr) detail::seqlock_copy_out(k, base + sizeof(SlotHeader), key_len);
      if (v != nullptr && value_len > 0) detail::seqlock_copy_out(v, base + value_offset_, value_len);
    }
    out.generation = s.generation.load(std::memory_order_relaxed);
    out.labels = s.labels.load(std::memory_order_relaxed);
    out.label_ids = s.label_ids.load(std::memory_order_relaxed);
    out.changed_ns = s.changed_ns.load(std::memory_order_relaxed);
    const std::uint64_t shape_word = s.array_shape.load(std::memory_order_relaxed);  // used for arrays only
    const std::uint64_t dims_word = s.array_dims.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);  // every read above happens before the re-check
    if (s.epoch.load(std::memory_order_relaxed) != e) {
      if (++out.retries >= static_cast<std::uint32_t>(options_.attempts)) {  // rewritten faster than we copy
        record_busy(i, s.epoch.load(std::memory_order_relaxed), sink, out);
        return out.status;
      }
      continue;
    }
    out.type = detail::meta_type(m);
    out.array = ArrayShape{};
    if (live && out.type == ValueType::array) {
      out.array.elem = static_cast<Dtype>(detail::shape_dtype(shape_word));
      out.array.rank = detail::shape_rank(shape_word);
      out.array.dims = {detail::dims_at(dims_word, 0), detail::dims_at(dims_word, 1)};
    }
    out.epoch = e;
    out.value_length = value_len;
    out.key_length = sane ? key_len : 0;
    if (!live) {
      out.type = ValueType::none;
      out.value_length = 0;
      out.key_length = 0;
      out.status = SlotStatus::empty;
    } else if (!sane) {
      out.status = SlotStatus::torn;
    } else if (!fits) {
      out.status = SlotStatus::too_small;
    } else {
      out.status = torn ? SlotStatus::torn : SlotStatus::ok;
    }
    if (out.status != SlotStatus::ok) sink.drop_value();
    if (out.key_length == 0 || out.status == SlotStatus::too_small) sink.drop_key();
    return out.status;
  }
}

// A slot still held by a writer: the holder's pid and, when the key was live before the claim (its
// bytes then never change while the claim lasts), the key; never the value.
template <class Sink>
void SlotCopier::record_busy(std::uint32_t i, std::uint64_t epoch, Sink& sink, SlotRecord& out) const {
  const std::byte* const base = slots_ + std::uint64_t{i} * stride_;
  const auto& s = *reinterpret_cast<const SlotHeader*>(base);
  const std::uint64_t m = s.meta.load(std::memory_order_relaxed);
  const std::uint32_t key_len = detail::meta_key_len(m);
  char* const k = detail::meta_live(m) && key_len > 0 && key_len <= key_bytes_ ? sink.key_at(key_len) : nullptr;
  if (k != nullptr) {
    detail::seqlock_copy_out(k, base + sizeof(SlotHeader), key_len);
    out.key_length = key_len;
  } else {
    sink.drop_key();
    out.key_length = 0;
  }
  sink.drop_value();
  out.generation = s.generation.load(std::memory_order_relaxed);
  out.labels = s.labels.load(std::memory_order_relaxed);
  out.label_ids = s.label_ids.load(std::memory_order_relaxed);
  out.changed_ns = s.changed_ns.load(std::memory_order_relaxed);
  out.type = detail::meta_type(m);
  out.value_length = 0;
  out.epoch = epoch;
  out.owner_pid = epoch_owner(epoch);
  out.status = SlotStatus::busy;
}

}  // namespace weir::core
