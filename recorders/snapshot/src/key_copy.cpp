// /keys: every key slot copied under its seqlock, the way core's arena_copy reads values, but one
// level lower so the key, value, type, labels and epoch of a row all come from the same version.
#include <sched.h>
#include <time.h>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>

#include "parts.hpp"
#include "weir/core/arena_layout.hpp"
#include "weir/core/detail/epoch.hpp"
#include "weir/core/detail/seqlock.hpp"
#include "weir/core/detail/slot_meta.hpp"

namespace weir::rec::detail {

namespace {

constexpr std::size_t kKeyBatchRows = 4096;            // rows per HDF5 write
constexpr std::uint64_t kKeyChunkRows = 256;           // rows per HDF5 chunk: small tables stay small
constexpr std::uint64_t kKeyBatchBytes = 64ULL << 20;  // or fewer, once their values reach this
constexpr int kSpinsBeforeYield = 64;                  // odd-epoch spins before giving the CPU away
constexpr const char* kTypeNames[] = {"none", "bytes", "text", "i64", "u64", "f64", "vector"};

std::int64_t monotonic_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

struct KeyRecord {
  std::uint32_t slot = 0, generation = 0, length = 0, owner_pid = 0;
  core::ValueType type = core::ValueType::none;
  CopyStatus status = CopyStatus::ok;
  std::uint64_t epoch = 0, labels = 0, label_ids = 0, changed_ns = 0;
  std::string key;
  std::vector<std::byte> value;
};

// The memory layout of one /keys row; the file type is this, packed.
struct KeyRow {
  const char* key;
  std::uint32_t slot;
  std::uint32_t generation;
  std::uint8_t type;
  std::uint8_t status;
  std::uint32_t length;
  std::uint64_t epoch;
  std::uint64_t version;
  std::uint64_t labels;
  std::uint64_t label_ids;
  const char* label_names;
  std::uint64_t changed_ns;
  std::uint32_t owner_pid;
  double number;
  hvl_t value;
};

h5::Type key_row_type() {
  const h5::Type text = text_type(), bytes = bytes_type(), type = enum_type(kTypeNames),
                   status = enum_type(kCopyStatusNames);
  h5::Type t(H5Tcreate(H5T_COMPOUND, sizeof(KeyRow)));
  H5Tinsert(t.get(), "key", HOFFSET(KeyRow, key), text.get());
  H5Tinsert(t.get(), "slot", HOFFSET(KeyRow, slot), H5T_NATIVE_UINT32);
  H5Tinsert(t.get(), "generation", HOFFSET(KeyRow, generation), H5T_NATIVE_UINT32);
  H5Tinsert(t.get(), "type", HOFFSET(KeyRow, type), type.get());
  H5Tinsert(t.get(), "status", HOFFSET(KeyRow, status), status.get());
  H5Tinsert(t.get(), "length", HOFFSET(KeyRow, length), H5T_NATIVE_UINT32);
  H5Tinsert(t.get(), "epoch", HOFFSET(KeyRow, epoch), H5T_NATIVE_UINT64);
  H5Tinsert(t.get(), "version", HOFFSET(KeyRow, version), H5T_NATIVE_UINT64);
  H5Tinsert(t.get(), "labels", HOFFSET(KeyRow, labels), H5T_NATIVE_UINT64);
  H5Tinsert(t.get(), "label_ids", HOFFSET(KeyRow, label_ids), H5T_NATIVE_UINT64);
  H5Tinsert(t.get(), "label_names", HOFFSET(KeyRow, label_names), text.get());
  H5Tinsert(t.get(), "changed_ns", HOFFSET(KeyRow, changed_ns), H5T_NATIVE_UINT64);
  H5Tinsert(t.get(), "owner_pid", HOFFSET(KeyRow, owner_pid), H5T_NATIVE_UINT32);
  H5Tinsert(t.get(), "number", HOFFSET(KeyRow, number), H5T_NATIVE_DOUBLE);
  H5Tinsert(t.get(), "value", HOFFSET(KeyRow, value), bytes.get());
  return t;
}

// The value as a number for i64, u64 and f64 keys; NaN for the others.
double number_of(const KeyRecord& r) noexcept {
  if (r.value.size() < sizeof(std::uint64_t)) return std::numeric_limits<double>::quiet_NaN();
  std::uint64_t bits = 0;
  std::memcpy(&bits, r.value.data(), sizeof(bits));
  switch (r.type) {
    case core::ValueType::i64: return static_cast<double>(static_cast<std::int64_t>(bits));
    case core::ValueType::u64: return static_cast<double>(bits);
    case core::ValueType::f64: {
      double v = 0;
      std::memcpy(&v, &bits, sizeof(v));
      return v;
    }
    case core::ValueType::none:
    case core::ValueType::bytes:
    case core::ValueType::text:
    case core::ValueType::vector: break;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

// Reads slots in place under their seqlocks.
class SlotCopier {
 public:
  SlotCopier(const core::Arena& arena, const SnapshotOptions& options) noexcept
      : slots_(arena.region(core::Region::slots)),
        stride_(arena.geometry().slot_stride),
        key_bytes_(arena.geometry().key_bytes),
        value_bytes_(arena.geometry().value_bytes),
        value_offset_(core::value_offset_in_slot(arena.geometry().key_bytes)),
        options_(options) {}

  // Copies slot i into out; false when it holds no key (and no writer holds it).
  bool copy(std::uint32_t i, KeyRecord& out, SnapshotStats& stats) const {
    const auto& s = *reinterpret_cast<const core::SlotHeader*>(slots_ + std::uint64_t{i} * stride_);
    std::int64_t held_since = -1;
    int spins = 0, torn_copies = 0;
    for (;;) {
      const std::uint64_t e = s.epoch.load(std::memory_order_acquire);  // pairs with the writer's release
      if (core::detail::epoch_odd(e)) {
        const std::int64_t now = monotonic_ns();
        if (held_since < 0) {
          held_since = now;
          ++stats.writers_met;
        }
        if (now - held_since >= options_.busy_wait_ns) {
          record_busy(s, i, e, out);
          return true;
        }
        if (++spins % kSpinsBeforeYield == 0) sched_yield();
        core::detail::cpu_relax();
        continue;
      }
      const std::uint64_t m = s.meta.load(std::memory_order_relaxed);
      const std::uint32_t key_len = core::detail::meta_key_len(m), value_len = core::detail::meta_value_len(m);
      const bool live = core::detail::meta_live(m);
      const bool sane = key_len > 0 && key_len <= key_bytes_ && value_len <= value_bytes_;
      if (live && sane) {
        out.key.resize(key_len);
        out.value.resize(value_len);
        core::detail::seqlock_copy_out(out.key.data(), key_ptr(i), key_len);
        if (value_len > 0) core::detail::seqlock_copy_out(out.value.data(), value_ptr(i), value_len);
      }
      out.generation = s.generation.load(std::memory_order_relaxed);
      out.labels = s.labels.load(std::memory_order_relaxed);
      out.label_ids = s.label_ids.load(std::memory_order_relaxed);
      out.changed_ns = s.changed_ns.load(std::memory_order_relaxed);
      std::atomic_thread_fence(std::memory_order_acquire);  // every read above happens before the re-check
      if (s.epoch.load(std::memory_order_relaxed) != e) {
        ++stats.copies_retried;
        if (++torn_copies >= options_.attempts) {  // rewritten faster than we can copy it
          record_busy(s, i, s.epoch.load(std::memory_order_relaxed), out);
          return true;
        }
        continue;
      }
      if (!live) return false;
      const bool torn = (core::detail::meta_flags(m) & core::kSlotTorn) != 0;
      out.slot = i;
      out.type = core::detail::meta_type(m);
      out.length = value_len;
      out.epoch = e;
      out.owner_pid = 0;
      out.status = torn || !sane ? CopyStatus::torn : CopyStatus::ok;
      if (out.status == CopyStatus::torn) out.value.clear();  // never handed out as good data
      if (!sane) out.key.clear();
      return true;
    }
  }

 private:
  [[nodiscard]] const std::byte* key_ptr(std::uint32_t i) const noexcept {
    return slots_ + std::uint64_t{i} * stride_ + sizeof(core::SlotHeader);
  }
  [[nodiscard]] const std::byte* value_ptr(std::uint32_t i) const noexcept {
    return slots_ + std::uint64_t{i} * stride_ + value_offset_;
  }

  // A slot still held by a writer: its row says so, with the holder's pid and, when the key was
  // already live before the claim (its bytes then never change), the key.
  void record_busy(const core::SlotHeader& s, std::uint32_t i, std::uint64_t epoch, KeyRecord& out) const {
    const std::uint64_t m = s.meta.load(std::memory_order_relaxed);
    const std::uint32_t key_len = core::detail::meta_key_len(m);
    out.key.clear();
    if (core::detail::meta_live(m) && key_len > 0 && key_len <= key_bytes_) {
      out.key.resize(key_len);
      core::detail::seqlock_copy_out(out.key.data(), key_ptr(i), key_len);
    }
    out.value.clear();
    out.slot = i;
    out.generation = s.generation.load(std::memory_order_relaxed);
    out.type = core::detail::meta_type(m);
    out.length = 0;
    out.epoch = epoch;
    out.owner_pid = core::detail::epoch_owner(epoch);
    out.status = CopyStatus::busy;
  }

  const std::byte* slots_;
  std::uint64_t stride_;
  std::uint32_t key_bytes_;
  std::uint32_t value_bytes_;
  std::uint64_t value_offset_;
  const SnapshotOptions& options_;
};

core::Result<void> flush(Appender& table, std::vector<KeyRecord>& batch, std::size_t count, const Labels& labels) {
  std::vector<KeyRow> rows(count);
  std::vector<std::string> names(count);
  for (std::size_t j = 0; j < count; ++j) {
    const KeyRecord& r = batch[j];
    names[j] = labels.names_of(r.label_ids);
    rows[j] = KeyRow{r.key.c_str(),
                     r.slot,
                     r.generation,
                     static_cast<std::uint8_t>(r.type),
                     static_cast<std::uint8_t>(r.status),
                     r.length,
                     r.epoch,
                     core::detail::epoch_version(r.epoch),
                     r.labels,
                     r.label_ids,
                     names[j].c_str(),
                     r.changed_ns,
                     r.owner_pid,
                     number_of(r),
                     hvl_t{r.value.size(), const_cast<std::byte*>(r.value.data())}};  // HDF5 only reads it
  }
  return table.append(rows.data(), count);
}

}  // namespace

core::Result<void> write_keys(hid_t file, const core::Arena& arena, const SnapshotOptions& options,
                              const Labels& labels, std::vector<LiveKey>& live, SnapshotStats& stats) {
  const h5::Type memory_type = key_row_type();
  h5::Type file_type(H5Tcopy(memory_type.get()));
  if (!file_type || H5Tpack(file_type.get()) < 0) return tl::make_unexpected(h5::error("H5Tpack", "/keys"));
  auto table = Appender::create(file, "keys", "/keys", file_type.get(), memory_type.get(), 0, kKeyChunkRows);
  if (!table) return tl::make_unexpected(table.error());

  const SlotCopier copier(arena, options);
  std::vector<KeyRecord> batch(kKeyBatchRows);
  std::size_t count = 0;
  std::uint64_t batch_bytes = 0;
  const std::uint32_t slot_count = arena.geometry().slot_count;
  for (std::uint32_t i = 0; i < slot_count; ++i) {
    KeyRecord& r = batch[count];
    if (!copier.copy(i, r, stats)) continue;
    ++stats.keys;
    stats.bytes_copied += r.value.size();
    switch (r.status) {
      case CopyStatus::ok: break;
      case CopyStatus::busy: ++stats.keys_busy; break;
      case CopyStatus::torn: ++stats.keys_torn; break;
    }
    if (r.status != CopyStatus::busy) live.push_back(LiveKey{r.slot, r.generation, r.key});
    batch_bytes += r.value.size();
    if (++count == batch.size() || batch_bytes >= kKeyBatchBytes) {
      if (auto ok = flush(*table, batch, count, labels); !ok) return ok;
      count = 0;
      batch_bytes = 0;
    }
  }
  if (auto ok = flush(*table, batch, count, labels); !ok) return ok;
  if (auto ok = attr_u64(table->id(), "busy", stats.keys_busy); !ok) return ok;
  return attr_u64(table->id(), "torn", stats.keys_torn);
}

}  // namespace weir::rec::detail
