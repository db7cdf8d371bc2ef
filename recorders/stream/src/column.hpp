#pragma once
// One 1-D (or rows x cols), chunked, extendible dataset that grows at its end. Elements are staged in memory and
// reach HDF5 a whole chunk at a time (one H5Dset_extent + one hyperslab H5Dwrite per chunk instead
// of one per block, or with ColumnSpec::direct one H5Dwrite_chunk of the staged bytes, past HDF5's
// selection and type-conversion layers); write_partial() hands over the staged tail at a flush, so
// what a reader or a crash sees is every element up to the last flush.
#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "weir/core/error.hpp"
#include "weir/h5/handle.hpp"

namespace weir::rec {

struct ColumnSpec {
  std::string name;                  // link name in the parent group
  hid_t file_type = H5I_INVALID_HID;  // not owned
  hid_t mem_type = H5I_INVALID_HID;   // not owned; converted to file_type by HDF5 when they differ
  std::size_t element_bytes = 0;     // of mem_type
  std::uint64_t chunk = 0;           // elements per chunk, > 0
  std::uint64_t slack = 1;           // most elements one commit() may add
  int deflate = 0;                   // shuffle + deflate at this level; 0: no filter
  bool cache = true;                 // false: no chunk cache, every write goes to the file at once
  const void* fill = nullptr;        // fill value (a mem_type element) of rows extended but never written
  std::uint64_t cols = 0;            // > 0: a 2-D dataset of rows x cols; an element is a row (element_bytes
                                     // its bytes), fill is not supported
  bool direct = false;               // whole chunks straight to the file (H5Dwrite_chunk) where HDF5 allows:
                                     // no filter, mem_type the same as file_type, no part handed over before
};

class Column {
 public:
  Column() = default;  // empty and unusable: create() makes real ones
  /// Creates the dataset (empty, unlimited) under parent. `what` names it in errors ("FILE /entry/adc0/data").
  [[nodiscard]] static core::Result<Column> create(hid_t parent, const ColumnSpec& spec, std::string what);

  /// Where the next elements go; the caller copies up to `slack` elements there, then commit()s.
  /// Requires: write_chunks() ran since the last commit that made a chunk ready. Hot path.
  [[nodiscard]] std::byte* stage_end() noexcept { return buffer_.data() + staged_ * element_bytes_; }
  void commit(std::uint64_t n) noexcept { staged_ += n; }
  [[nodiscard]] bool chunk_ready() const noexcept { return staged_ >= chunk_; }

  /// Hands every whole staged chunk to HDF5. Cold path (once per chunk).
  [[nodiscard]] core::Result<void> write_chunks();
  /// Hands the staged tail to HDF5 (a flush). Cold path.
  [[nodiscard]] core::Result<void> write_partial();

  /// Elements committed so far (handed over or staged).
  [[nodiscard]] std::uint64_t size() const noexcept { return base_ + staged_; }
  /// Elements handed to HDF5.
  [[nodiscard]] std::uint64_t written() const noexcept { return written_; }
  /// Chunks handed over whole by H5Dwrite_chunk (the rest went through H5Dwrite).
  [[nodiscard]] std::uint64_t direct_chunks() const noexcept { return direct_chunks_; }
  [[nodiscard]] hid_t id() const noexcept { return dataset_.get(); }
  /// Notes that the file was flushed: every element handed over so far is on disk.
  void mark_durable() noexcept { durable_ = written_; }
  [[nodiscard]] std::uint64_t durable() const noexcept { return durable_; }
  /// After a failed write: shrinks the dataset back to what the last flush made durable and drops
  /// everything staged, so the file describes nothing that may not have reached the disk.
  [[nodiscard]] core::Result<void> roll_back() noexcept;
  /// Replaces the last element committed (size() > 0) with `element`: in place while it is staged;
  /// one HDF5 already has is handed over again by the next write_chunks() or write_partial(). Hot
  /// path: no allocation, no HDF5 call.
  void replace_last(const void* element) noexcept;
  /// Copies element `index` out if it is still staged; false if it is not.
  bool read_staged(std::uint64_t index, void* out) const noexcept;

 private:
  [[nodiscard]] core::Result<void> write_range(std::uint64_t first, std::uint64_t count, const std::byte* data);
  [[nodiscard]] core::Result<void> write_whole_chunk(const std::byte* data);
  [[nodiscard]] core::Result<void> write_replaced();

  h5::Dataset dataset_;
  hid_t mem_type_ = H5I_INVALID_HID;
  std::string what_;
  std::vector<std::byte> buffer_;  // chunk + slack elements; element 0 is dataset index base_
  std::size_t element_bytes_ = 0;
  std::uint64_t cols_ = 0;      // 0: 1-D
  std::uint64_t chunk_ = 0;
  std::uint64_t base_ = 0;      // a multiple of chunk_: staging always starts on a chunk boundary
  std::uint64_t staged_ = 0;    // elements in buffer_
  std::uint64_t written_ = 0;   // dataset index up to which HDF5 has the elements
  std::uint64_t extent_ = 0;    // the dataset's current size
  std::uint64_t durable_ = 0;   // elements on disk as of the last successful flush
  std::uint64_t direct_chunks_ = 0;
  std::vector<std::byte> replaced_;  // one element: the new value of element replaced_index_ ...
  std::uint64_t replaced_index_ = 0;
  bool replaced_pending_ = false;    // ... which HDF5 has with its old value
  bool filtered_ = false;       // a filtered chunk is always rewritten whole, never patched
  bool direct_ = false;         // whole, untouched chunks go by H5Dwrite_chunk (ColumnSpec::direct, allowed)
};

}  // namespace weir::rec
