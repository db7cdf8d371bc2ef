// read_keys and KeyReader: the key logs of a recording's files (/entry/keys/<key>, NXlog groups of
// time and value), indexed across the files, and their values read back one at a time.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "reading.hpp"
#include "weir/core/channel.hpp"
#include "weir/h5/recording.hpp"
#include "weir/h5/recording_format.hpp"
#include "weir/h5/sample_type.hpp"
#include "weir/h5/types.hpp"

namespace weir::h5 {

namespace {

constexpr double kNsPerSecondReal = 1e9;

herr_t collect_name(hid_t, const char* name, const H5L_info_t*, void* out) {
  static_cast<std::vector<std::string>*>(out)->emplace_back(name);
  return 0;
}

// The rows of a dataset (its first dimension), and its rank.
core::Result<std::pair<std::uint64_t, int>> rows_of(hid_t dataset, const detail::Place& place) {
  Space space(H5Dget_space(dataset));
  const int rank = space ? H5Sget_simple_extent_ndims(space.get()) : -1;
  if (rank < 1 || rank > 3) return tl::make_unexpected(detail::refuse(place, "is not a dataset of rows"));
  hsize_t dims[3] = {0, 0, 0};
  H5Sget_simple_extent_dims(space.get(), dims, nullptr);
  return std::pair<std::uint64_t, int>{dims[0], rank};
}

// An array log's element dtype and shape: `value`'s dtype and shape attributes, checked against it.
core::Result<core::ArrayShape> array_shape(hid_t value, int rank, const detail::Place& place) {
  auto dtype_text = detail::text_attr(value, kAttrDtype, place);
  if (!dtype_text) return tl::make_unexpected(dtype_text.error());
  auto dtype = core::parse_dtype(*dtype_text);
  if (!dtype) return tl::make_unexpected(detail::refuse(place, "has an unknown dtype '" + *dtype_text + "'"));
  Attribute attr(H5Aopen(value, kAttrArrayShape, H5P_DEFAULT));
  Space space(attr ? H5Aget_space(attr.get()) : H5I_INVALID_HID);
  const hssize_t n = space ? H5Sget_simple_extent_npoints(space.get()) : -1;
  if (n != rank - 1) return tl::make_unexpected(detail::refuse(place, "has no shape of rank " + std::to_string(rank - 1)));
  std::uint32_t dims[2] = {0, 0};
  if (H5Aread(attr.get(), H5T_NATIVE_UINT32, dims) < 0)
    return tl::make_unexpected(detail::refuse(place, "cannot read its shape"));
  Space data_space(H5Dget_space(value));
  hsize_t data_dims[3] = {0, 0, 0};
  H5Sget_simple_extent_dims(data_space.get(), data_dims, nullptr);
  core::ArrayShape shape;
  shape.elem = *dtype;
  shape.rank = static_cast<std::uint32_t>(rank - 1);
  shape.dims = {dims[0], rank == 3 ? dims[1] : 0};
  for (int d = 1; d < rank; ++d)
    if (dims[d - 1] == 0 || data_dims[d] != dims[d - 1])
      return tl::make_unexpected(detail::refuse(place, "has a shape other than its rows'"));
  Type stored(H5Dget_type(value));
  if (!holds_dtype(stored.get(), shape.elem))
    return tl::make_unexpected(detail::refuse(place, "holds values not of its dtype " + *dtype_text));
  return shape;
}

// One file's log of a key, appended to `keys`.
core::Result<void> read_log(hid_t logs, const std::string& link, std::uint32_t file, std::uint64_t start_ns,
                            const std::string& path, std::vector<RecordedKey>& keys) {
  const detail::Place place{path, "/" + std::string(kEntry) + "/" + kKeys + "/" + link};
  Group group(H5Gopen2(logs, link.c_str(), H5P_DEFAULT));
  if (!group) return tl::make_unexpected(detail::refuse(place, "cannot be opened as a group"));
  std::string name = link;
  if (has_attr(group.get(), kAttrKey)) {
    auto text = detail::text_attr(group.get(), kAttrKey, place);
    if (!text) return tl::make_unexpected(text.error());
    name = *text;
  }
  auto time = detail::open_dataset(group.get(), kKeyTime, place);
  if (!time) return tl::make_unexpected(time.error());
  auto value = detail::open_dataset(group.get(), kKeyValue, place);
  if (!value) return tl::make_unexpected(value.error());
  const detail::Place time_place{path, place.path + "/" + kKeyTime}, value_place{path, place.path + "/" + kKeyValue};
  auto time_rows = rows_of(time->get(), time_place);
  if (!time_rows) return tl::make_unexpected(time_rows.error());
  auto value_rows = rows_of(value->get(), value_place);
  if (!value_rows) return tl::make_unexpected(value_rows.error());

  RecordedKeyLog log;
  log.file = file;
  log.link = link;
  if (value_rows->second > 1) {
    auto shape = array_shape(value->get(), value_rows->second, value_place);
    if (!shape) return tl::make_unexpected(shape.error());
    log.type = core::ValueType::array;
    log.array = *shape;
  } else {
    Type stored(H5Dget_type(value->get()));
    log.type = H5Tget_class(stored.get()) == H5T_STRING ? core::ValueType::text : core::ValueType::f64;
  }
  std::vector<double> seconds(time_rows->first);
  if (!seconds.empty() &&
      H5Dread(time->get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, seconds.data()) < 0)
    return tl::make_unexpected(detail::refuse(time_place, "cannot be read as numbers"));

  auto found = std::find_if(keys.begin(), keys.end(), [&](const RecordedKey& k) { return k.name == name; });
  if (found == keys.end()) {
    keys.push_back(RecordedKey{name, {}, {}});
    found = keys.end() - 1;
  }
  const auto log_index = static_cast<std::uint32_t>(found->logs.size());
  found->logs.push_back(log);
  const std::uint64_t rows = std::min(time_rows->first, value_rows->first);
  for (std::uint64_t r = 0; r < rows; ++r) {
    if (!std::isfinite(seconds[r])) continue;  // a row a failed write left unwritten
    const double ns = std::max(0.0, seconds[r] * kNsPerSecondReal);
    found->changes.push_back(RecordedKeyChange{start_ns + static_cast<std::uint64_t>(std::llround(ns)), log_index, r});
  }
  return {};
}

core::Result<void> read_file_keys(const std::string& path, std::uint32_t index, std::vector<RecordedKey>& keys) {
  auto file = detail::open_file(path);
  if (!file) return tl::make_unexpected(file.error());
  const std::string logs_path = std::string(kEntry) + "/" + kKeys;
  if (!has_link(file->get(), kEntry)) return {};
  Group entry(H5Gopen2(file->get(), kEntry, H5P_DEFAULT));
  if (!entry || !has_link(entry.get(), kKeys)) return {};
  Group logs(H5Gopen2(entry.get(), kKeys, H5P_DEFAULT));
  std::vector<std::string> names;
  hsize_t at = 0;
  if (!logs || H5Literate(logs.get(), H5_INDEX_NAME, H5_ITER_INC, &at, collect_name, &names) < 0)
    return core::fail(core::Errc::invalid_argument, "'" + path + "': cannot list /" + logs_path + ": " + last_error());
  if (names.empty()) return {};
  const detail::Place root{path, "/"};
  if (!has_attr(file->get(), kAttrStartNs))
    return tl::make_unexpected(detail::refuse(root, std::string("logs keys but has no ") + kAttrStartNs));
  auto start_ns = detail::u64_attr(file->get(), kAttrStartNs, root);
  if (!start_ns) return tl::make_unexpected(start_ns.error());
  for (const std::string& name : names)
    if (auto ok = read_log(logs.get(), name, index, *start_ns, path, keys); !ok) return ok;
  return {};
}

}  // namespace

core::Result<std::vector<RecordedKey>> read_keys(const Recording& recording) {
  quiet_errors();
  std::vector<RecordedKey> keys;
  for (std::size_t i = 0; i < recording.files.size(); ++i)
    if (auto ok = read_file_keys(recording.files[i], static_cast<std::uint32_t>(i), keys); !ok)
      return tl::make_unexpected(core::with_context(ok.error(), "replay"));
  return keys;
}

KeyReader::KeyReader(const Recording& recording, const RecordedKey& key) : recording_(&recording), key_(&key) {}

core::Result<KeyValue> KeyReader::value(std::uint64_t index) {
  const RecordedKeyChange& change = key_->changes[index];
  const RecordedKeyLog& log = key_->logs[change.log];
  const std::string& path = recording_->files[log.file];
  const std::string name = std::string(kEntry) + "/" + kKeys + "/" + log.link + "/" + kKeyValue;
  const std::string where = "replay: '" + path + "' /" + name;
  if (change.log != open_log_) {
    value_.reset();
    open_log_ = UINT32_MAX;
    auto file = detail::open_file(path);
    if (!file) return tl::make_unexpected(core::with_context(file.error(), "replay"));
    value_ = Dataset(H5Dopen2(file->get(), name.c_str(), H5P_DEFAULT));  // keeps the file open
    if (!value_) return core::fail(core::Errc::io_error, where + ": cannot open: " + last_error());
    open_log_ = change.log;
  }
  Space file_space(H5Dget_space(value_.get()));
  const int rank = H5Sget_simple_extent_ndims(file_space.get());
  hsize_t start[3] = {change.row, 0, 0};
  hsize_t count[3] = {1, log.array.dims[0], log.array.dims[1]};
  if (H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr) < 0)
    return core::fail(core::Errc::io_error, where + ": cannot select row " + std::to_string(change.row));
  Space memory_space(H5Screate_simple(rank, count, nullptr));
  KeyValue out;
  out.type = log.type;
  if (log.type == core::ValueType::array) {
    out.array = log.array;
    staged_.resize(log.array.bytes());
    const Type memory = sample_type(log.array.elem);
    if (H5Dread(value_.get(), memory.get(), memory_space.get(), file_space.get(), H5P_DEFAULT, staged_.data()) < 0)
      return core::fail(core::Errc::io_error, where + ": cannot read row " + std::to_string(change.row));
  } else if (log.type == core::ValueType::text) {
    Type stored(H5Dget_type(value_.get()));
    if (H5Tis_variable_str(stored.get()) > 0) {
      const Type memory = text_type();
      char* text = nullptr;
      if (H5Dread(value_.get(), memory.get(), memory_space.get(), file_space.get(), H5P_DEFAULT, &text) < 0)
        return core::fail(core::Errc::io_error, where + ": cannot read row " + std::to_string(change.row));
      const std::size_t length = text != nullptr ? std::strlen(text) : 0;
      staged_.resize(length);
      if (length != 0) std::memcpy(staged_.data(), text, length);
      H5Dvlen_reclaim(memory.get(), memory_space.get(), H5P_DEFAULT, &text);
    } else {  // format 1.0: fixed ASCII, NUL-padded
      const std::size_t width = H5Tget_size(stored.get());
      const Type memory = fixed_text_type(static_cast<std::uint32_t>(width), H5T_CSET_ASCII);
      staged_.assign(width, std::byte{0});
      if (H5Dread(value_.get(), memory.get(), memory_space.get(), file_space.get(), H5P_DEFAULT, staged_.data()) < 0)
        return core::fail(core::Errc::io_error, where + ": cannot read row " + std::to_string(change.row));
      const auto nul = std::find(staged_.begin(), staged_.end(), std::byte{0});
      staged_.erase(nul, staged_.end());
    }
  } else {  // f64
    staged_.resize(sizeof(double));
    if (H5Dread(value_.get(), H5T_NATIVE_DOUBLE, memory_space.get(), file_space.get(), H5P_DEFAULT, staged_.data()) < 0)
      return core::fail(core::Errc::io_error, where + ": cannot read row " + std::to_string(change.row));
  }
  out.data = std::span<const std::byte>(staged_.data(), staged_.size());
  return out;
}

}  // namespace weir::h5
