// SampleReader: a channel's recorded samples, read from its files a batch of blocks at a time.
#include <algorithm>

#include "reading.hpp"
#include "weir/core/channel.hpp"
#include "weir/h5/recording.hpp"
#include "weir/h5/recording_format.hpp"
#include "weir/h5/sample_type.hpp"

namespace weir::h5 {

SampleReader::SampleReader(const Recording& recording, const RecordedChannel& channel)
    : recording_(&recording),
      channel_(&channel),
      sample_bytes_(core::dtype_bytes(channel.dtype)),
      memory_type_(sample_type(channel.dtype)) {}

core::Result<std::span<const std::byte>> SampleReader::block(std::uint64_t index, std::uint64_t batch_bytes) {
  if (index < first_ || index >= end_) {
    if (auto ok = load(index, batch_bytes); !ok) return tl::make_unexpected(ok.error());
  }
  const std::vector<RecordedBlock>& blocks = channel_->blocks;
  const std::uint64_t at = (blocks[index].offset - blocks[first_].offset) * sample_bytes_;
  return std::span<const std::byte>(staged_.data() + at, std::uint64_t{blocks[index].samples} * sample_bytes_);
}

core::Result<void> SampleReader::load(std::uint64_t index, std::uint64_t batch_bytes) {
  const std::vector<RecordedBlock>& blocks = channel_->blocks;
  const RecordedBlock& head = blocks[index];
  const std::string& path = recording_->files[head.file];
  const std::string name = std::string(kEntry) + "/" + channel_->link + "/" + kData;
  const std::string where = "replay: '" + path + "' /" + name;
  if (head.file != open_file_) {
    data_.reset();
    auto file = detail::open_file(path);
    if (!file) return tl::make_unexpected(core::with_context(file.error(), "replay"));
    // The file stays open while its dataset is (HDF5's weak close), and closes with it.
    data_ = Dataset(H5Dopen2(file->get(), name.c_str(), H5P_DEFAULT));
    if (!data_) return core::fail(core::Errc::io_error, where + ": cannot open: " + last_error());
    open_file_ = head.file;
  }
  // The blocks after it in the same file whose samples follow on in `data`, up to batch_bytes.
  std::uint64_t end = index + 1;
  std::uint64_t samples = head.samples;
  while (end < blocks.size() && blocks[end].file == head.file &&
         blocks[end].offset == blocks[end - 1].offset + blocks[end - 1].samples &&
         (samples + blocks[end].samples) * sample_bytes_ <= batch_bytes) {
    samples += blocks[end].samples;
    ++end;
  }
  // 2-D data (a frame channel's, or any channel's from format 2 on) is rows of columns: whole rows
  // are read, the same bytes in the same order. A block starts a row (format 2: its own; a frame
  // channel: its first frame), and only the last block read may end inside one (a short block).
  Space file_space(H5Dget_space(data_.get()));
  hsize_t dims[2] = {0, 0};
  const int data_rank = file_space ? H5Sget_simple_extent_dims(file_space.get(), dims, nullptr) : -1;
  const std::uint64_t cols = data_rank == 2 ? std::max<hsize_t>(1, dims[1]) : 0;
  const std::uint64_t rows = cols > 0 ? (samples + cols - 1) / cols : 0;
  staged_.resize(std::max<std::uint64_t>((cols > 0 ? rows * cols : samples) * sample_bytes_, staged_.size()));
  first_ = index;
  end_ = end;
  if (samples == 0) return {};
  const int rank = cols > 0 ? 2 : 1;
  const hsize_t start[2] = {cols > 0 ? head.offset / cols : head.offset, 0};
  const hsize_t count[2] = {cols > 0 ? rows : samples, cols};
  Space memory_space(H5Screate_simple(rank, count, nullptr));
  if (!file_space || !memory_space ||
      H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr) < 0 ||
      H5Dread(data_.get(), memory_type_.get(), memory_space.get(), file_space.get(), H5P_DEFAULT, staged_.data()) < 0) {
    first_ = end_ = 0;
    return core::fail(core::Errc::io_error, where + ": cannot read samples " + std::to_string(head.offset) + ".." +
                                                std::to_string(head.offset + samples) + ": " + last_error());
  }
  return {};
}

}  // namespace weir::h5
