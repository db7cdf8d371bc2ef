// A key's change log (NXlog) in one segment.
#include "key_log.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include "weir/h5/attribute.hpp"
#include "weir/h5/check.hpp"
#include "weir/h5/dataset.hpp"
#include "weir/core/channel.hpp"
#include "weir/h5/recording_format.hpp"
#include "weir/h5/sample_type.hpp"
#include "weir/h5/types.hpp"
#include "weir/recorder/format.hpp"

namespace weir::rec {

namespace {

constexpr std::uint64_t kArrayChunkBytes = 64 << 10;  // an array log's chunk: about this many bytes of rows
constexpr std::uint64_t kArrayChunkRowsMax = 256;

// The `value` dataset of an array log: (changes x dims...), empty, extendible along changes, in
// chunks of whole rows.
core::Result<h5::Dataset> create_array_value(hid_t group, const core::ArrayShape& shape, hid_t type,
                                             const std::string& what) {
  const int rank = 1 + static_cast<int>(shape.rank);
  hsize_t dims[3] = {0, shape.dims[0], shape.dims[1]};
  hsize_t max[3] = {H5S_UNLIMITED, shape.dims[0], shape.dims[1]};
  const std::uint64_t row_bytes = std::max<std::uint64_t>(1, shape.bytes());
  hsize_t chunk[3] = {std::clamp<std::uint64_t>(kArrayChunkBytes / row_bytes, 1, kArrayChunkRowsMax), shape.dims[0],
                      shape.dims[1]};
  auto space = h5::check<h5::Space>(H5Screate_simple(rank, dims, max), "H5Screate_simple", what);
  if (!space) return tl::make_unexpected(space.error());
  auto dcpl = h5::check<h5::PropList>(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate", what);
  if (!dcpl) return tl::make_unexpected(dcpl.error());
  if (auto ok = h5::check(H5Pset_chunk(dcpl->get(), rank, chunk), "H5Pset_chunk", what); !ok)
    return tl::make_unexpected(ok.error());
  auto dataset = h5::check<h5::Dataset>(
      H5Dcreate2(group, h5::kKeyValue, type, space->get(), H5P_DEFAULT, dcpl->get(), H5P_DEFAULT), "H5Dcreate2", what);
  if (!dataset) return tl::make_unexpected(dataset.error());
  std::array<std::uint32_t, 2> shape_attr{shape.dims[0], shape.dims[1]};
  for (auto ok : {h5::attr_text(dataset->get(), h5::kAttrDtype, core::dtype_name(shape.elem)),
                  h5::attr_u32_array(dataset->get(), h5::kAttrArrayShape,
                                     std::span<const std::uint32_t>(shape_attr.data(), shape.rank))})
    if (!ok) return tl::make_unexpected(with_context(ok.error(), what));
  return dataset;
}

}  // namespace

core::Result<KeyLog> KeyLog::create(hid_t keys, const KeySpec& spec, const std::string& start_time,
                                    const std::string& file) {
  const std::string& key = spec.name;
  KeyLog log;
  log.key_ = key;
  log.numeric_ = spec.numeric && spec.array.rank == 0;
  log.number_ = spec.number == core::ValueType::u64 || spec.number == core::ValueType::i64 ? spec.number
                                                                                           : core::ValueType::f64;
  log.text_width_ = spec.text_width;
  log.array_ = spec.array;
  const std::string link = h5::encode_name(key);
  const std::string what = file + " /" + h5::kEntry + "/" + h5::kKeys + "/" + link;
  auto group = h5::create_group(keys, link, what, h5::kNxLog);
  if (!group) return tl::make_unexpected(group.error());
  log.group_ = std::move(*group);
  if (auto ok = h5::attr_text(log.group_.get(), h5::kAttrKey, key); !ok) return tl::make_unexpected(with_context(ok.error(), what));
  auto time = Column::create(
      log.group_.get(),
      ColumnSpec{h5::kKeyTime, H5T_NATIVE_DOUBLE, H5T_NATIVE_DOUBLE, sizeof(double), kKeyChunkRows, 1},
      what + "/" + h5::kKeyTime);
  if (!time) return tl::make_unexpected(time.error());
  log.time_ = std::move(*time);
  for (auto ok : {h5::attr_text(log.time_.id(), h5::kAttrUnits, h5::kTimeUnits),
                  h5::attr_text(log.time_.id(), h5::kAttrStart, start_time)})
    if (!ok) return tl::make_unexpected(with_context(ok.error(), what + "/" + h5::kKeyTime));
  if (log.is_array()) {
    log.array_type_ = h5::sample_type(log.array_.elem);
    auto values = create_array_value(log.group_.get(), log.array_, log.array_type_.get(), what + "/" + h5::kKeyValue);
    if (!values) return tl::make_unexpected(values.error());
    log.array_data_ = std::move(*values);
    if (auto ok = h5::attr_u64(log.group_.get(), h5::kAttrArrayRefused, 0); !ok)
      return tl::make_unexpected(with_context(ok.error(), what));
    if (!spec.units.empty())  // an array's units too (a spectrum axis's)
      if (auto ok = h5::attr_text(log.array_data_.get(), h5::kAttrUnits, spec.units); !ok)
        return tl::make_unexpected(with_context(ok.error(), what + "/" + h5::kKeyValue));
    return log;
  }
  const hid_t number = log.number_ == core::ValueType::u64   ? H5T_NATIVE_UINT64
                       : log.number_ == core::ValueType::i64 ? H5T_NATIVE_INT64
                                                             : H5T_NATIVE_DOUBLE;
  ColumnSpec value{h5::kKeyValue, number, number, sizeof(std::uint64_t), kKeyChunkRows, 1};
  if (!log.numeric_) {
    log.text_type_ = h5::text_type();
    value = ColumnSpec{h5::kKeyValue, log.text_type_.get(), log.text_type_.get(), sizeof(const char*), kKeyChunkRows,
                       1};
    // A staged row's text stays put until HDF5 has copied it: at most a chunk and a row are staged,
    // so a ring of twice a chunk never reuses a staged row's text.
    log.texts_.resize(2 * std::size_t{kKeyChunkRows});
  }
  auto values = Column::create(log.group_.get(), value, what + "/" + h5::kKeyValue);
  if (!values) return tl::make_unexpected(values.error());
  log.value_ = std::move(*values);
  if (!spec.units.empty())
    if (auto ok = h5::attr_text(log.value_.id(), h5::kAttrUnits, spec.units); !ok)
      return tl::make_unexpected(with_context(ok.error(), what + "/" + h5::kKeyValue));
  return log;
}

void KeyLog::add_number(double time_s, std::uint64_t word) noexcept {
  std::memcpy(time_.stage_end(), &time_s, sizeof time_s);
  time_.commit(1);
  std::memcpy(value_.stage_end(), &word, sizeof word);
  value_.commit(1);
}

void KeyLog::add_text(double time_s, std::span<const std::byte> value) noexcept {
  std::memcpy(time_.stage_end(), &time_s, sizeof time_s);
  time_.commit(1);
  std::string& text = texts_[value_.size() % texts_.size()];
  const auto* chars = reinterpret_cast<const char*>(value.data());
  const std::size_t n = std::min<std::size_t>(value.size(), text_width_);
  text.assign(chars, std::find(chars, chars + n, '\0'));  // reuses the row's capacity
  const char* row = text.c_str();
  std::memcpy(value_.stage_end(), &row, sizeof row);
  value_.commit(1);
}

core::Result<bool> KeyLog::add_array(double time_s, const core::ArrayShape& shape, std::span<const std::byte> value) {
  if (!is_array() || !(shape == array_) || value.size() != array_.bytes()) {
    ++refused_;
    return false;
  }
  const std::string what = key_ + ": " + h5::kKeyValue;
  const hsize_t extent[3] = {array_rows_ + 1, array_.dims[0], array_.dims[1]};
  if (auto ok = h5::check(H5Dset_extent(array_data_.get(), extent), "H5Dset_extent", what); !ok)
    return tl::make_unexpected(ok.error());
  const int rank = 1 + static_cast<int>(array_.rank);
  const hsize_t start[3] = {array_rows_, 0, 0};
  const hsize_t count[3] = {1, array_.dims[0], array_.dims[1]};
  auto file_space = h5::check<h5::Space>(H5Dget_space(array_data_.get()), "H5Dget_space", what);
  if (!file_space) return tl::make_unexpected(file_space.error());
  if (auto ok = h5::check(H5Sselect_hyperslab(file_space->get(), H5S_SELECT_SET, start, nullptr, count, nullptr),
                         "H5Sselect_hyperslab", what);
      !ok)
    return tl::make_unexpected(ok.error());
  auto mem_space = h5::check<h5::Space>(H5Screate_simple(rank, count, nullptr), "H5Screate_simple", what);
  if (!mem_space) return tl::make_unexpected(mem_space.error());
  if (auto ok = h5::check(H5Dwrite(array_data_.get(), array_type_.get(), mem_space->get(), file_space->get(),
                                   H5P_DEFAULT, value.data()),
                         "H5Dwrite", what);
      !ok)
    return tl::make_unexpected(ok.error());
  ++array_rows_;
  last_.assign(value.begin(), value.end());
  std::memcpy(time_.stage_end(), &time_s, sizeof time_s);
  time_.commit(1);
  return true;
}

std::string KeyLog::last_text() const {
  if (numeric_ || is_array() || texts_.empty() || rows() == 0) return {};
  return texts_[(rows() - 1) % texts_.size()];
}

void KeyLog::roll_back() noexcept {
  if (is_array()) {
    const hsize_t extent[3] = {durable_rows_, array_.dims[0], array_.dims[1]};
    if (array_rows_ > durable_rows_ && H5Dset_extent(array_data_.get(), extent) >= 0) array_rows_ = durable_rows_;
  } else {
    (void)value_.roll_back();
  }
  (void)time_.roll_back();
}

core::Result<void> KeyLog::write_pending() {
  if (is_array()) return time_.write_chunks();
  if (auto ok = value_.write_chunks(); !ok) return ok;
  return time_.write_chunks();
}

core::Result<void> KeyLog::flush() {
  if (is_array()) {
    if (refused_ != refused_written_) {
      if (auto ok = h5::rewrite_u64(group_.get(), h5::kAttrArrayRefused, refused_); !ok) return ok;
      refused_written_ = refused_;
    }
    return time_.write_partial();
  }
  if (auto ok = value_.write_partial(); !ok) return ok;
  return time_.write_partial();
}

}  // namespace weir::rec
