// Chunk-at-a-time appends to an extendible HDF5 dataset.
#include "column.hpp"

#include <algorithm>
#include <cstring>

#include "encode_pool.hpp"
#include "weir/h5/check.hpp"
#include "weir/h5/dataset.hpp"

namespace weir::rec {

namespace {

// A cached column's chunk cache holds two chunks (at least HDF5's 1 MiB default), so a partial
// chunk flushed at a tick stays in memory until it is completed. An uncached one (channel data)
// writes each chunk straight to the file: no copy into the cache, and the file's size is the
// data's, which rotation by size reads.
constexpr std::size_t kCacheSlots = 521;       // a prime, as HDF5 advises for its hash
constexpr std::size_t kMinCacheBytes = 1 << 20;
constexpr double kEvictWrittenFirst = 1.0;      // preempt fully written chunks first
constexpr std::size_t kSpareChunks = 2;          // encoded: chunk buffers beyond one per encoder thread

}  // namespace

struct Column::Sealed {
  std::vector<std::byte> buffer;  // chunk + slack elements
  EncodeJob job;
  std::uint64_t first = 0;        // the dataset index of its element 0
};

Column::Column() = default;
Column::Column(Column&&) noexcept = default;
Column& Column::operator=(Column&& other) noexcept {
  if (this == &other) return *this;
  this->~Column();
  new (this) Column(std::move(other));
  return *this;
}

Column::~Column() {
  // A chunk still being encoded is read by an encoder thread: its buffers stay until it is done.
  if (chunks_.empty()) return;  // not encoded, or moved from
  for (std::size_t i = 0; i < sealed_; ++i) {
    EncodeJob& job = chunks_[(oldest_ + i) % chunks_.size()]->job;
    while (!pool_->wait(job)) {
    }
  }
}

core::Result<Column> Column::create(hid_t parent, const ColumnSpec& spec, std::string what) {
  const int rank = spec.cols > 0 ? 2 : 1;
  const hsize_t zero[2] = {0, spec.cols};
  const hsize_t unlimited[2] = {H5S_UNLIMITED, spec.cols};
  const hsize_t chunk[2] = {spec.chunk, spec.cols};
  auto space = h5::check<h5::Space>(H5Screate_simple(rank, zero, unlimited), "H5Screate_simple", what);
  if (!space) return tl::make_unexpected(space.error());
  auto dcpl = h5::check<h5::PropList>(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate", what);
  if (!dcpl) return tl::make_unexpected(dcpl.error());
  if (auto ok = h5::check(H5Pset_chunk(dcpl->get(), rank, chunk), "H5Pset_chunk", what); !ok)
    return tl::make_unexpected(ok.error());
  if (spec.fill != nullptr)
    if (auto ok = h5::check(H5Pset_fill_value(dcpl->get(), spec.mem_type, spec.fill), "H5Pset_fill_value", what); !ok)
      return tl::make_unexpected(ok.error());
  const bool encoded = spec.codec.method != codec::Method::none;
  const std::size_t codec_element = spec.codec_element_bytes > 0 ? spec.codec_element_bytes : spec.element_bytes;
  if (encoded) {
    if (spec.pool == nullptr) return core::fail(core::Errc::invalid_argument, what + ": a codec needs encoder threads");
    if (auto ok = codec::set_filters(dcpl->get(), spec.codec, codec_element, what); !ok)
      return tl::make_unexpected(ok.error());
  }
  auto dapl = h5::check<h5::PropList>(H5Pcreate(H5P_DATASET_ACCESS), "H5Pcreate", what);
  if (!dapl) return tl::make_unexpected(dapl.error());
  const std::size_t cache_bytes =
      spec.cache ? std::max<std::size_t>(kMinCacheBytes, 2 * spec.chunk * spec.element_bytes) : 0;
  if (auto ok = h5::check(H5Pset_chunk_cache(dapl->get(), kCacheSlots, cache_bytes, kEvictWrittenFirst),
                         "H5Pset_chunk_cache", what);
      !ok)
    return tl::make_unexpected(ok.error());
  auto dataset = h5::check<h5::Dataset>(
      H5Dcreate2(parent, spec.name.c_str(), spec.file_type, space->get(), H5P_DEFAULT, dcpl->get(), dapl->get()),
      "H5Dcreate2", what);
  if (!dataset) return tl::make_unexpected(dataset.error());
  Column c;
  c.dataset_ = std::move(*dataset);
  c.mem_type_ = spec.mem_type;
  c.what_ = std::move(what);
  const std::size_t buffer_bytes = (spec.chunk + spec.slack) * spec.element_bytes;
  if (encoded) {
    c.pool_ = spec.pool;
    c.chunks_.resize(spec.pool->threads() + kSpareChunks);
    for (auto& sealed : c.chunks_) {
      sealed = std::make_unique<Sealed>();
      sealed->buffer.resize(buffer_bytes);
      sealed->job.codec = spec.codec;
      sealed->job.element_bytes = codec_element;
    }
    c.stage_ = c.chunks_[0]->buffer.data();
    c.tail_encoder_ = std::make_unique<codec::Encoder>(spec.codec, codec_element);
  } else {
    c.buffer_.resize(buffer_bytes);
    c.stage_ = c.buffer_.data();
  }
  c.element_bytes_ = spec.element_bytes;
  c.replaced_.resize(spec.element_bytes);
  c.cols_ = spec.cols;
  c.chunk_ = spec.chunk;
  // Direct chunk writes store the bytes as they are: only without a filter and a type conversion.
  c.direct_ = spec.direct && !encoded && H5Tequal(spec.mem_type, spec.file_type) > 0;
  return c;
}

core::Result<void> Column::extend_to(std::uint64_t end) {
  if (end <= extent_) return {};
  const hsize_t size[2] = {end, cols_};
  if (auto ok = h5::check(H5Dset_extent(dataset_.get(), size), "H5Dset_extent", what_); !ok) return ok;
  extent_ = end;
  return {};
}

core::Result<void> Column::write_range(std::uint64_t first, std::uint64_t count, const std::byte* data) {
  if (count == 0) return {};
  const std::uint64_t end = first + count;
  if (auto ok = extend_to(end); !ok) return ok;
  if (auto ok = h5::write_rows(dataset_.get(), mem_type_, first, count, cols_, data, what_); !ok) return ok;
  written_ = std::max(written_, end);
  return {};
}

core::Result<void> Column::write_whole_chunk(const std::byte* data) {
  return write_encoded(base_, std::span<const std::byte>(data, chunk_ * element_bytes_), base_ + chunk_);
}

void Column::replace_last(const void* element) noexcept {
  const std::uint64_t index = size() - 1;
  if (staged_ > 0) std::memcpy(stage_ + (staged_ - 1) * element_bytes_, element, element_bytes_);
  if (index >= written_) return;  // handed over with the rest of the staged elements
  std::memcpy(replaced_.data(), element, element_bytes_);
  replaced_index_ = index;
  replaced_pending_ = true;
}

core::Result<void> Column::write_replaced() {
  if (!replaced_pending_) return {};
  if (auto ok = write_range(replaced_index_, 1, replaced_.data()); !ok) return ok;
  replaced_pending_ = false;
  return {};
}

core::Result<void> Column::write_chunks() {
  if (pool_ != nullptr) {
    while (sealed_ > 0 && chunks_[oldest_]->job.done.load(std::memory_order_acquire))
      if (auto ok = write_oldest(); !ok) return ok;
    return seal_chunks();
  }
  if (auto ok = write_replaced(); !ok) return ok;
  while (staged_ >= chunk_) {
    // Only what a flush has not handed over yet. A chunk none of which was handed over goes whole and
    // as it is when direct writes are allowed.
    const std::uint64_t from = std::max(written_, base_);
    const std::uint64_t end = base_ + chunk_;
    if (direct_ && from == base_) {
      if (auto ok = write_whole_chunk(buffer_.data()); !ok) return ok;
    } else if (auto ok = write_range(from, end - from, buffer_.data() + (from - base_) * element_bytes_); !ok) {
      return ok;
    }
    const std::uint64_t rest = staged_ - chunk_;
    std::memmove(buffer_.data(), buffer_.data() + chunk_ * element_bytes_, rest * element_bytes_);
    base_ = end;
    staged_ = rest;
  }
  return {};
}

core::Result<void> Column::write_partial() {
  if (pool_ != nullptr) return write_encoded_partial();
  if (auto ok = write_chunks(); !ok) return ok;
  const std::uint64_t from = std::max(written_, base_);
  const std::uint64_t end = base_ + staged_;
  if (end <= written_) return {};
  return write_range(from, end - from, buffer_.data() + (from - base_) * element_bytes_);
}

core::Result<void> Column::seal_chunks() {
  while (staged_ >= chunk_) {
    if (sealed_ + 1 == chunks_.size())  // every other buffer is in flight: the oldest goes first
      if (auto ok = write_oldest(); !ok) return ok;
    Sealed& chunk = *chunks_[current_];
    const std::size_t next = (current_ + 1) % chunks_.size();
    const std::uint64_t rest = staged_ - chunk_;
    std::memcpy(chunks_[next]->buffer.data(), chunk.buffer.data() + chunk_ * element_bytes_, rest * element_bytes_);
    chunk.first = base_;
    chunk.job.in = std::span<const std::byte>(chunk.buffer.data(), chunk_ * element_bytes_);
    pool_->submit(chunk.job);
    ++sealed_;
    current_ = next;
    stage_ = chunks_[next]->buffer.data();
    base_ += chunk_;
    staged_ = rest;
  }
  return {};
}

core::Result<void> Column::write_oldest() {
  Sealed& chunk = *chunks_[oldest_];
  if (auto ok = pool_->wait(chunk.job); !ok) return tl::make_unexpected(with_context(ok.error(), what_));
  if (chunk.job.error) return tl::make_unexpected(with_context(*chunk.job.error, what_));
  if (auto ok = write_encoded(chunk.first, chunk.job.out, chunk.first + chunk_); !ok) return ok;
  oldest_ = (oldest_ + 1) % chunks_.size();
  --sealed_;
  return {};
}

core::Result<void> Column::write_encoded(std::uint64_t first, std::span<const std::byte> bytes, std::uint64_t end) {
  if (auto ok = extend_to(end); !ok) return ok;
  const hsize_t offset[2] = {first, 0};
  if (auto ok = h5::check(H5Dwrite_chunk(dataset_.get(), H5P_DEFAULT, 0, offset, bytes.size(), bytes.data()),
                          "H5Dwrite_chunk", what_);
      !ok)
    return ok;
  written_ = std::max(written_, end);
  ++direct_chunks_;
  return {};
}

core::Result<void> Column::drain() {
  while (sealed_ > 0)
    if (auto ok = write_oldest(); !ok) return ok;
  return {};
}

// The staged tail goes as a whole chunk, encoded here: its rows past the staged ones lie outside the
// dataset (zeroed, so no older chunk's bytes are stored), and the chunk is written again, whole, once
// it fills.
core::Result<void> Column::write_encoded_partial() {
  if (auto ok = drain(); !ok) return ok;
  if (auto ok = seal_chunks(); !ok) return ok;
  if (auto ok = drain(); !ok) return ok;
  const std::uint64_t end = base_ + staged_;
  if (staged_ == 0 || end <= written_) return {};
  std::memset(stage_ + staged_ * element_bytes_, 0, (chunk_ - staged_) * element_bytes_);
  auto encoded = tail_encoder_->encode(std::span<const std::byte>(stage_, chunk_ * element_bytes_));
  if (!encoded) return tl::make_unexpected(with_context(encoded.error(), what_));
  return write_encoded(base_, *encoded, end);
}

core::Result<void> Column::roll_back() noexcept {
  // The next element goes to index durable_. The elements before it in its chunk are on disk and
  // are never written again (only an encoded column rewrites whole chunks, and none is written to
  // after a roll-back), so their stale bytes in the buffer do not matter.
  for (; sealed_ > 0; --sealed_, oldest_ = (oldest_ + 1) % chunks_.size())  // encoded: dropped once done
    while (!pool_->wait(chunks_[oldest_]->job)) {
    }
  base_ = durable_ - durable_ % chunk_;
  staged_ = durable_ - base_;
  written_ = durable_;
  replaced_pending_ = false;
  if (extent_ <= durable_) return {};
  const hsize_t size[2] = {durable_, cols_};
  if (H5Dset_extent(dataset_.get(), size) < 0) return tl::make_unexpected(core::Error{core::Errc::io_error, ""});
  extent_ = durable_;
  return {};
}

bool Column::read_staged(std::uint64_t index, void* out) const noexcept {
  if (index < base_ || index >= base_ + staged_) return false;
  std::memcpy(out, stage_ + (index - base_) * element_bytes_, element_bytes_);
  return true;
}

}  // namespace weir::rec
