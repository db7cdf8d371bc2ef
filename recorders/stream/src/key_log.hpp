#pragma once
// One key in one segment: /entry/keys/<key> (NXlog) with `time` (f64 seconds since the segment's
// start_time) and `value` (f64 for integer and float keys, variable-length UTF-8 text for the
// others), a row each time the recorder sees the key change.
#include <hdf5.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "column.hpp"
#include "weir/core/error.hpp"
#include "weir/h5/handle.hpp"

namespace weir::rec {

class KeyLog {
 public:
  /// Creates the NXlog group under `keys`. numeric: values are f64; else text of up to text_width
  /// bytes (the arena's value_bytes: no value is cut).
  [[nodiscard]] static core::Result<KeyLog> create(hid_t keys, const std::string& key, bool numeric,
                                                   std::uint32_t text_width, const std::string& start_time,
                                                   const std::string& file);

  /// Stages one sample. Hot path (no allocation); then write_pending() when pending().
  void add_number(double time_s, double value) noexcept;
  /// Stages a text value (up to its first NUL, at most text_width bytes). Allocates only while the
  /// staged texts first grow to their longest.
  void add_text(double time_s, std::span<const std::byte> value) noexcept;
  [[nodiscard]] bool pending() const noexcept { return time_.chunk_ready(); }
  [[nodiscard]] core::Result<void> write_pending();
  [[nodiscard]] core::Result<void> flush();
  void mark_durable() noexcept {
    time_.mark_durable();
    value_.mark_durable();
  }
  /// After a failed write: back to the last flush (best effort), as Column::roll_back.
  void roll_back() noexcept {
    (void)value_.roll_back();
    (void)time_.roll_back();
  }

  [[nodiscard]] const std::string& key() const noexcept { return key_; }
  [[nodiscard]] bool numeric() const noexcept { return numeric_; }
  [[nodiscard]] std::uint64_t rows() const noexcept { return time_.size(); }

 private:
  std::string key_;
  bool numeric_ = true;
  std::uint32_t text_width_ = 0;
  h5::Group group_;
  h5::Type text_type_;
  Column time_, value_;        // value_ of a text log stages `const char*` into texts_
  std::vector<std::string> texts_;  // a ring of staged text rows, indexed by row % its size
};

}  // namespace weir::rec
