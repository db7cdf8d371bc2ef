#pragma once
// One 1-D (or rows x cols), chunked, extendible dataset that grows at its end. Elements are staged in memory and
// reach HDF5 a whole chunk at a time (one H5Dset_extent + one hyperslab H5Dwrite per chunk instead
// of one per block, or with ColumnSpec::direct one H5Dwrite_chunk of the staged bytes, past HDF5's
// selection and type-conversion layers); write_partial() hands over the staged tail at a flush, so
// what a reader or a crash sees is every element up to the last flush.
//
// An encoded column (ColumnSpec::codec, channel data) stages into one of a few chunk buffers; a full
// chunk is sealed and encoded on the recorder's encoder threads (encode_pool.hpp) while the next
// fills, and its encoded bytes go to the file by H5Dwrite_chunk, in chunk order, as the recording
// thread collects them. A flush waits for every chunk in flight and encodes the staged tail itself.
#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "weir/codec/codec.hpp"
#include "weir/core/error.hpp"
#include "weir/h5/handle.hpp"

namespace weir::rec {

class EncodePool;
struct EncodeJob;

struct ColumnSpec {
  std::string name;                  // link name in the parent group
  hid_t file_type = H5I_INVALID_HID;  // not owned
  hid_t mem_type = H5I_INVALID_HID;   // not owned; converted to file_type by HDF5 when they differ
  std::size_t element_bytes = 0;     // of mem_type
  std::uint64_t chunk = 0;           // elements per chunk, > 0
  std::uint64_t slack = 1;           // most elements one commit() may add
  codec::Codec codec{};              // the chunks' codec (none: stored as they are)
  std::size_t codec_element_bytes = 0;  // the codec's element (a sample's bytes); 0: element_bytes
  EncodePool* pool = nullptr;        // encodes sealed chunks (not owned); required with a codec
  bool cache = true;                 // false: no chunk cache, every write goes to the file at once
  const void* fill = nullptr;        // fill value (a mem_type element) of rows extended but never written
  std::uint64_t cols = 0;            // > 0: a 2-D dataset of rows x cols; an element is a row (element_bytes
                                     // its bytes), fill is not supported
  bool direct = false;               // whole chunks straight to the file (H5Dwrite_chunk) where HDF5 allows:
                                     // no filter, mem_type the same as file_type, no part handed over before
};

class Column {
 public:
  Column();  // empty and unusable: create() makes real ones
  ~Column();
  Column(Column&&) noexcept;
  Column& operator=(Column&&) noexcept;
  /// Creates the dataset (empty, unlimited) under parent. `what` names it in errors ("FILE /entry/adc0/data").
  [[nodiscard]] static core::Result<Column> create(hid_t parent, const ColumnSpec& spec, std::string what);

  /// Where the next elements go; the caller copies up to `slack` elements there, then commit()s.
  /// Requires: write_chunks() ran since the last commit that made a chunk ready. Hot path.
  [[nodiscard]] std::byte* stage_end() noexcept { return stage_ + staged_ * element_bytes_; }
  void commit(std::uint64_t n) noexcept { staged_ += n; }
  /// Stages and commits one element (T: the column's element type). Hot path.
  template <class T>
  void push(T value) noexcept {
    std::memcpy(stage_end(), &value, sizeof value);
    commit(1);
  }
  [[nodiscard]] bool chunk_ready() const noexcept { return staged_ >= chunk_; }

  /// Hands every whole staged chunk to HDF5. Cold path (once per chunk).
  [[nodiscard]] core::Result<void> write_chunks();
  /// Hands the staged tail to HDF5 (a flush). Cold path.
  [[nodiscard]] core::Result<void> write_partial();
  /// Encoded: hands every sealed chunk to HDF5, waiting for the ones still encoded. Otherwise nothing.
  [[nodiscard]] core::Result<void> drain();

  /// Elements committed so far (handed over or staged).
  [[nodiscard]] std::uint64_t size() const noexcept { return base_ + staged_; }
  /// Elements handed to HDF5.
  [[nodiscard]] std::uint64_t written() const noexcept { return written_; }
  /// Chunks handed over whole by H5Dwrite_chunk (the rest went through H5Dwrite); encoded: every
  /// chunk written, partial ones at flushes included.
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
  [[nodiscard]] core::Result<void> extend_to(std::uint64_t end);
  // Encoded columns.
  [[nodiscard]] core::Result<void> seal_chunks();
  [[nodiscard]] core::Result<void> write_oldest();
  [[nodiscard]] core::Result<void> write_encoded(std::uint64_t first, std::span<const std::byte> bytes,
                                                 std::uint64_t end);
  [[nodiscard]] core::Result<void> write_encoded_partial();

  h5::Dataset dataset_;
  hid_t mem_type_ = H5I_INVALID_HID;
  std::string what_;
  std::vector<std::byte> buffer_;  // chunk + slack elements; element 0 is dataset index base_
  std::byte* stage_ = nullptr;     // where staging starts: buffer_, or the encoded column's current chunk
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
  bool direct_ = false;         // whole, untouched chunks go by H5Dwrite_chunk (ColumnSpec::direct, allowed)

  // Encoded columns: chunks_ is a ring of chunk buffers; chunks_[current_] stages, the `sealed_`
  // before it (oldest first, from oldest_) are encoded or being encoded.
  struct Sealed;
  std::vector<std::unique_ptr<Sealed>> chunks_;
  std::size_t current_ = 0;
  std::size_t oldest_ = 0;
  std::size_t sealed_ = 0;
  EncodePool* pool_ = nullptr;
  std::unique_ptr<codec::Encoder> tail_encoder_;  // the staged tail's, at a flush (recording thread)
};

}  // namespace weir::rec
