// /keys: every key slot copied whole by core's SlotCopier, so the key, value, type, labels and
// epoch of a row all come from the same version.
#include <array>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>

#include "parts.hpp"
#include "weir/core/arena_layout.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/slot_copier.hpp"

namespace weir::rec::detail {

namespace {

constexpr std::size_t kKeyBatchRows = 4096;            // rows per HDF5 write
constexpr std::uint64_t kKeyChunkRows = 256;           // rows per HDF5 chunk: small tables stay small
constexpr std::uint64_t kKeyBatchBytes = 64ULL << 20;  // or fewer, once their values reach this
constexpr const char* kTypeNames[] = {"none", "bytes", "text", "i64", "u64", "f64", "vector", "array"};

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
  const char* array_dtype;                 // array values: the element dtype's name; "" otherwise
  std::uint8_t array_rank;                 // 1 or 2; 0 for other values
  std::array<std::uint32_t, 2> array_dims;  // [n, 0] or [rows, cols]
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
  const hsize_t two[1] = {2};
  const h5::Type dims(H5Tarray_create2(H5T_NATIVE_UINT32, 1, two));
  H5Tinsert(t.get(), "array_dtype", HOFFSET(KeyRow, array_dtype), text.get());
  H5Tinsert(t.get(), "array_rank", HOFFSET(KeyRow, array_rank), H5T_NATIVE_UINT8);
  H5Tinsert(t.get(), "array_dims", HOFFSET(KeyRow, array_dims), dims.get());
  return t;
}

// The value as a number for i64, u64 and f64 keys; NaN for the others.
double number_of(const core::SlotCopy& r) noexcept {
  if (r.value.size() < sizeof(std::uint64_t)) return std::numeric_limits<double>::quiet_NaN();
  std::uint64_t bits = 0;
  std::memcpy(&bits, r.value.data(), sizeof(bits));
  switch (r.record.type) {
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
    case core::ValueType::vector:
    case core::ValueType::array: break;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

// The file's copy status of a slot copied whole (empty slots are not written).
CopyStatus copy_status(core::SlotStatus status) noexcept {
  switch (status) {
    case core::SlotStatus::ok: return CopyStatus::ok;
    case core::SlotStatus::busy: return CopyStatus::busy;
    case core::SlotStatus::torn: return CopyStatus::torn;
    case core::SlotStatus::empty:
    case core::SlotStatus::too_small: break;  // neither is written: empty is skipped, too_small never happens
  }
  return CopyStatus::torn;
}

core::Result<void> flush(Appender& table, std::vector<core::SlotCopy>& batch, std::size_t count, const Labels& labels) {
  std::vector<KeyRow> rows(count);
  std::vector<std::string> names(count);
  for (std::size_t j = 0; j < count; ++j) {
    const core::SlotCopy& c = batch[j];
    const core::SlotRecord& r = c.record;
    names[j] = labels.names_of(r.label_ids);
    rows[j] = KeyRow{c.key.c_str(),
                     r.slot,
                     r.generation,
                     static_cast<std::uint8_t>(r.type),
                     static_cast<std::uint8_t>(copy_status(r.status)),
                     r.value_length,
                     r.epoch,
                     r.version(),
                     r.labels,
                     r.label_ids,
                     names[j].c_str(),
                     r.changed_ns,
                     r.owner_pid,
                     number_of(c),
                     hvl_t{c.value.size(), const_cast<std::byte*>(c.value.data())},  // HDF5 only reads it
                     r.type == core::ValueType::array ? core::dtype_name(r.array.elem) : "",
                     static_cast<std::uint8_t>(r.type == core::ValueType::array ? r.array.rank : 0),
                     r.type == core::ValueType::array ? r.array.dims : std::array<std::uint32_t, 2>{}};
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

  const core::SlotCopier copier(arena, core::SlotCopyOptions{options.busy_wait_ns, options.attempts});
  std::vector<core::SlotCopy> batch(kKeyBatchRows);
  std::size_t count = 0;
  std::uint64_t batch_bytes = 0;
  for (std::uint32_t i = 0; i < copier.slot_count(); ++i) {
    core::SlotCopy& c = batch[count];
    const core::SlotStatus status = copier.copy(i, c);
    stats.writers_met += c.record.met_writer ? 1 : 0;
    stats.copies_retried += c.record.retries;
    if (status == core::SlotStatus::empty) continue;
    ++stats.keys;
    stats.bytes_copied += c.value.size();
    switch (copy_status(status)) {
      case CopyStatus::ok: break;
      case CopyStatus::busy: ++stats.keys_busy; break;
      case CopyStatus::torn: ++stats.keys_torn; break;
    }
    if (status != core::SlotStatus::busy) live.push_back(LiveKey{c.record.slot, c.record.generation, c.key});
    batch_bytes += c.value.size();
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
