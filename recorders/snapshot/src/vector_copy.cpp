// /vectors: each live key's vector row copied in place under the row's seqlock.
#include <algorithm>
#include <limits>

#include "parts.hpp"
#include "weir/core/vector_store.hpp"
#include "weir/core/view_copy.hpp"

namespace weir::rec::detail {

namespace {

constexpr std::size_t kVectorBatchRows = 1024;  // rows per HDF5 write
constexpr std::uint64_t kVectorChunkRows = 64;  // rows per HDF5 chunk: 192 KiB of 768-float vectors

struct VectorRow {  // memory layout of one /vectors/info row
  std::uint32_t slot;
  std::uint32_t generation;
  std::uint64_t epoch;
  std::uint64_t version;
  float norm;
  std::uint8_t status;
};

h5::Type vector_row_type() {
  const h5::Type status = enum_type(kCopyStatusNames);
  h5::Type t(H5Tcreate(H5T_COMPOUND, sizeof(VectorRow)));
  H5Tinsert(t.get(), "slot", HOFFSET(VectorRow, slot), H5T_NATIVE_UINT32);
  H5Tinsert(t.get(), "generation", HOFFSET(VectorRow, generation), H5T_NATIVE_UINT32);
  H5Tinsert(t.get(), "epoch", HOFFSET(VectorRow, epoch), H5T_NATIVE_UINT64);
  H5Tinsert(t.get(), "version", HOFFSET(VectorRow, version), H5T_NATIVE_UINT64);
  H5Tinsert(t.get(), "norm", HOFFSET(VectorRow, norm), H5T_NATIVE_FLOAT);
  H5Tinsert(t.get(), "status", HOFFSET(VectorRow, status), status.get());
  return t;
}

// Copies one key's vector; false when the key has none (or is gone). Busy and torn rows come back
// true with their status and NaN floats.
bool copy_vector(const core::VectorStore& store, const LiveKey& key, const SnapshotOptions& options, float* out,
                 VectorRow& row, SnapshotStats& stats) {
  const core::KeyHandle handle{key.slot, key.generation};
  const std::uint32_t dim = store.dim();
  row = VectorRow{key.slot, key.generation, 0, 0, 0.0F, 0};
  const auto unusable = [&](CopyStatus status) {  // recorded as such, with NaN floats
    row.status = static_cast<std::uint8_t>(status);
    std::fill(out, out + dim, std::numeric_limits<float>::quiet_NaN());
    return true;
  };
  for (int attempt = 0; attempt < options.attempts; ++attempt) {
    core::VectorView view;
    const core::VectorStatus status = store.view(handle, view);  // waits, bounded, for a writer inside
    if (status == core::VectorStatus::busy) return unusable(CopyStatus::busy);
    if (status == core::VectorStatus::torn) return unusable(CopyStatus::torn);
    if (status != core::VectorStatus::ok) return false;  // no vector, or the key is gone
    if (core::copy_validated(view, std::span<float>(out, dim))) {
      row.epoch = view.epoch();
      row.version = core::epoch_version(view.epoch());
      row.norm = view.norm();
      row.status = static_cast<std::uint8_t>(CopyStatus::ok);
      stats.bytes_copied += std::uint64_t{dim} * sizeof(float);
      return true;
    }
    ++stats.copies_retried;
  }
  return unusable(CopyStatus::busy);  // rewritten faster than we can copy it
}

struct VectorTables {
  Appender data, keys, info;
};

core::Result<void> flush(VectorTables& t, const std::vector<float>& data, const std::vector<const char*>& keys,
                         const std::vector<VectorRow>& info, std::size_t count) {
  if (auto ok = t.data.append(data.data(), count); !ok) return ok;
  if (auto ok = t.keys.append(keys.data(), count); !ok) return ok;
  return t.info.append(info.data(), count);
}

}  // namespace

core::Result<void> write_vectors(hid_t file, const core::Arena& arena, const SnapshotOptions& options,
                                 const std::vector<LiveKey>& live, SnapshotStats& stats) {
  const core::VectorStore store(arena);
  auto group = create_group(file, "vectors", "/vectors");
  if (!group) return tl::make_unexpected(group.error());
  const std::uint32_t dim = store.dim();
  if (auto ok = attr_u64(group->get(), "dim", dim); !ok) return ok;
  if (dim == 0) return {};  // an arena without a vector partition: the group says so and holds nothing

  const h5::Type text = text_type(), memory_type = vector_row_type();
  h5::Type file_type(H5Tcopy(memory_type.get()));
  if (!file_type || H5Tpack(file_type.get()) < 0) return tl::make_unexpected(h5::error("H5Tpack", "/vectors/info"));
  auto data = Appender::create(group->get(), "data", "/vectors/data", H5T_NATIVE_FLOAT, H5T_NATIVE_FLOAT, dim,
                               kVectorChunkRows);
  if (!data) return tl::make_unexpected(data.error());
  auto keys = Appender::create(group->get(), "keys", "/vectors/keys", text.get(), text.get(), 0, kVectorChunkRows);
  if (!keys) return tl::make_unexpected(keys.error());
  auto info =
      Appender::create(group->get(), "info", "/vectors/info", file_type.get(), memory_type.get(), 0, kVectorChunkRows);
  if (!info) return tl::make_unexpected(info.error());
  VectorTables tables{std::move(*data), std::move(*keys), std::move(*info)};

  std::vector<float> rows(kVectorBatchRows * std::size_t{dim});
  std::vector<const char*> names(kVectorBatchRows);
  std::vector<VectorRow> meta(kVectorBatchRows);
  std::size_t count = 0;
  for (const LiveKey& key : live) {
    if (!copy_vector(store, key, options, rows.data() + count * dim, meta[count], stats)) continue;
    names[count] = key.key.c_str();
    ++stats.vectors;
    if (meta[count].status == static_cast<std::uint8_t>(CopyStatus::busy)) ++stats.vectors_busy;
    if (meta[count].status == static_cast<std::uint8_t>(CopyStatus::torn)) ++stats.vectors_torn;
    if (++count == kVectorBatchRows) {
      if (auto ok = flush(tables, rows, names, meta, count); !ok) return ok;
      count = 0;
    }
  }
  if (auto ok = flush(tables, rows, names, meta, count); !ok) return ok;
  if (auto ok = attr_u64(group->get(), "busy", stats.vectors_busy); !ok) return ok;
  return attr_u64(group->get(), "torn", stats.vectors_torn);
}

}  // namespace weir::rec::detail
