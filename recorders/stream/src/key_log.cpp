// A key's change log (NXlog) in one segment.
#include "key_log.hpp"

#include <algorithm>
#include <cstring>

#include "weir/h5/attribute.hpp"
#include "weir/h5/dataset.hpp"
#include "weir/h5/recording_format.hpp"
#include "weir/h5/types.hpp"
#include "weir/recorder/format.hpp"

namespace weir::rec {

core::Result<KeyLog> KeyLog::create(hid_t keys, const std::string& key, bool numeric, std::uint32_t text_width,
                                    const std::string& start_time, const std::string& file) {
  KeyLog log;
  log.key_ = key;
  log.numeric_ = numeric;
  log.text_width_ = text_width;
  const std::string link = h5::encode_name(key);
  const std::string what = file + " /" + h5::kEntry + "/" + h5::kKeys + "/" + link;
  auto group = h5::create_group(keys, link, what, h5::kNxLog);
  if (!group) return tl::make_unexpected(group.error());
  log.group_ = std::move(*group);
  if (auto ok = h5::attr_text(log.group_.get(), h5::kAttrKey, key); !ok) return tl::make_unexpected(with_context(ok.error(), what));
  auto time = Column::create(
      log.group_.get(),
      ColumnSpec{h5::kKeyTime, H5T_NATIVE_DOUBLE, H5T_NATIVE_DOUBLE, sizeof(double), kKeyChunkRows, 1, 0},
      what + "/" + h5::kKeyTime);
  if (!time) return tl::make_unexpected(time.error());
  log.time_ = std::move(*time);
  for (auto ok : {h5::attr_text(log.time_.id(), h5::kAttrUnits, h5::kTimeUnits),
                  h5::attr_text(log.time_.id(), h5::kAttrStart, start_time)})
    if (!ok) return tl::make_unexpected(with_context(ok.error(), what + "/" + h5::kKeyTime));
  ColumnSpec value{h5::kKeyValue, H5T_NATIVE_DOUBLE, H5T_NATIVE_DOUBLE, sizeof(double), kKeyChunkRows, 1, 0};
  if (!numeric) {
    log.text_type_ = h5::text_type();
    value = ColumnSpec{h5::kKeyValue, log.text_type_.get(), log.text_type_.get(), sizeof(const char*), kKeyChunkRows,
                       1, 0};
    // A staged row's text stays put until HDF5 has copied it: at most a chunk and a row are staged,
    // so a ring of twice a chunk never reuses a staged row's text.
    log.texts_.resize(2 * std::size_t{kKeyChunkRows});
  }
  auto values = Column::create(log.group_.get(), value, what + "/" + h5::kKeyValue);
  if (!values) return tl::make_unexpected(values.error());
  log.value_ = std::move(*values);
  return log;
}

void KeyLog::add_number(double time_s, double value) noexcept {
  std::memcpy(time_.stage_end(), &time_s, sizeof time_s);
  time_.commit(1);
  std::memcpy(value_.stage_end(), &value, sizeof value);
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

core::Result<void> KeyLog::write_pending() {
  if (auto ok = value_.write_chunks(); !ok) return ok;
  return time_.write_chunks();
}

core::Result<void> KeyLog::flush() {
  if (auto ok = value_.write_partial(); !ok) return ok;
  return time_.write_partial();
}

}  // namespace weir::rec
