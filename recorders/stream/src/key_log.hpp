#pragma once
// One key in one segment: /entry/keys/<key> (NXlog) with `time` (f64 seconds since the segment's
// start_time) and `value` (u64, i64 or f64 as the key's number type, an array of the key's element
// dtype and shape for array keys, variable-length UTF-8 text for the others; `units` from the key's
// text key KEY_units), a row each time the recorder sees the key change.
#include <hdf5.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "column.hpp"
#include "weir/core/error.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/h5/handle.hpp"

namespace weir::rec {

/// What a segment logs of one key.
struct KeySpec {
  std::string name;
  bool numeric = true;
  std::uint32_t text_width = 0;
  core::ArrayShape array;  // rank 1 or 2: an array log of this element dtype and shape
  core::ValueType number = core::ValueType::f64;  // a numeric log's value type: u64, i64 or f64
  std::string units;       // `value`'s units attribute; empty: none
};

class KeyLog {
 public:
  /// Creates the NXlog group under `keys`. An array shape: values are rows of that dtype and shape;
  /// else numeric: values are spec.number (u64, i64 or f64); else text of up to text_width bytes (the arena's value_bytes: no
  /// value is cut).
  [[nodiscard]] static core::Result<KeyLog> create(hid_t keys, const KeySpec& spec, const std::string& start_time,
                                                   const std::string& file);

  /// Stages one sample: `word` holds a value of number() (its bits). Hot path (no allocation); then
  /// write_pending() when pending().
  void add_number(double time_s, std::uint64_t word) noexcept;
  /// Stages a text value (up to its first NUL, at most text_width bytes). Allocates only while the
  /// staged texts first grow to their longest.
  void add_text(double time_s, std::span<const std::byte> value) noexcept;
  /// Logs an array value: one row of `value` (written to HDF5 at once: array keys change seldom)
  /// and its time. A value of another dtype or shape than the log's is not logged but counted
  /// (refused()); returns false then.
  [[nodiscard]] core::Result<bool> add_array(double time_s, const core::ArrayShape& shape,
                                             std::span<const std::byte> value);
  [[nodiscard]] bool pending() const noexcept { return time_.chunk_ready(); }
  [[nodiscard]] core::Result<void> write_pending();
  [[nodiscard]] core::Result<void> flush();
  void mark_durable() noexcept {
    time_.mark_durable();
    value_.mark_durable();
    durable_rows_ = array_rows_;
  }
  /// After a failed write: back to the last flush (best effort), as Column::roll_back.
  void roll_back() noexcept;

  [[nodiscard]] const std::string& key() const noexcept { return key_; }
  [[nodiscard]] bool numeric() const noexcept { return numeric_; }
  /// A numeric log's value type: u64, i64 or f64.
  [[nodiscard]] core::ValueType number() const noexcept { return number_; }
  [[nodiscard]] std::uint64_t rows() const noexcept { return time_.size(); }
  [[nodiscard]] bool is_array() const noexcept { return array_.rank != 0; }
  [[nodiscard]] const core::ArrayShape& array() const noexcept { return array_; }
  /// The latest array value logged (empty before the first), and the latest text (text logs).
  [[nodiscard]] const std::vector<std::byte>& last_array() const noexcept { return last_; }
  [[nodiscard]] std::string last_text() const;
  [[nodiscard]] std::uint64_t refused() const noexcept { return refused_; }

 private:
  std::string key_;
  bool numeric_ = true;
  core::ValueType number_ = core::ValueType::f64;
  std::uint32_t text_width_ = 0;
  h5::Group group_;
  h5::Type text_type_;
  Column time_, value_;        // value_ of a text log stages `const char*` into texts_
  std::vector<std::string> texts_;  // a ring of staged text rows, indexed by row % its size
  // An array log: `value` written row by row.
  core::ArrayShape array_;
  h5::Type array_type_;
  h5::Dataset array_data_;
  std::uint64_t array_rows_ = 0, durable_rows_ = 0;
  std::vector<std::byte> last_;
  std::uint64_t refused_ = 0, refused_written_ = 0;
};

}  // namespace weir::rec
