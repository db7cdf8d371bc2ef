#pragma once
// Chunk codecs for recorded channel data: a chunk is encoded here, off HDF5's own pipeline (in the
// recorder's worker threads), into exactly the bytes HDF5's filter pipeline would store for it, and
// handed to HDF5 whole with H5Dwrite_chunk. Every encoded chunk is readable by any HDF5 reader with
// the registered filters: shuffle (2) and deflate (1) are HDF5's own; LZ4 (32004), bitshuffle (32008)
// and zstd (32015) are the registered plugins (Debian's hdf5-filter-plugin, python3-hdf5plugin).
#include <hdf5.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "weir/core/error.hpp"

namespace weir::codec {

enum class Method : std::uint8_t {
  none,            // stored as it is
  deflate,         // zlib (HDF5 filter 1), level 1..9
  lz4,             // LZ4 (filter 32004), in the plugin's block format
  zstd,            // zstd (filter 32015), level 1..22
  bitshuffle_lz4,  // bitshuffle with LZ4 inside (filter 32008): shuffles bits itself
};

struct Codec {
  Method method = Method::none;
  bool shuffle = false;  // HDF5's byte shuffle (filter 2) first; never with none or bitshuffle_lz4
  int level = 0;         // deflate 1..9, zstd 1..22; 0 for the others
  friend bool operator==(const Codec&, const Codec&) = default;
};

/// Parses a codec's name: "none", "lz4", "shuffle+lz4", "deflate" (level 1), "deflate:6",
/// "shuffle+deflate:1", "zstd" (level 1), "zstd:3", "shuffle+zstd:1", "bitshuffle+lz4".
/// An unknown name or level is refused with the text and the list of choices.
[[nodiscard]] core::Result<Codec> parse(std::string_view text);
/// The canonical name: parse(name(c)) == c.
[[nodiscard]] std::string name(const Codec& codec);

/// One step of a dataset's HDF5 filter pipeline.
struct FilterStep {
  H5Z_filter_t id = 0;
  unsigned flags = H5Z_FLAG_MANDATORY;
  std::array<unsigned, 8> cd{};
  std::size_t cd_count = 0;
};
/// The filter pipeline, in order, that makes HDF5 read back chunks encoded with `codec` for
/// elements of `element_bytes` (1, 2, 4 or 8: a sample's bytes, not a row's). Empty for none.
[[nodiscard]] std::vector<FilterStep> filters(const Codec& codec, std::size_t element_bytes);
/// Adds filters(codec, element_bytes) to a dataset creation property list; `what` names the dataset
/// in errors. Calls register_hdf5_filters() first.
[[nodiscard]] core::Result<void> set_filters(hid_t dcpl, const Codec& codec, std::size_t element_bytes,
                                             const std::string& what);

/// Registers filter classes for LZ4 (32004), bitshuffle (32008) and zstd (32015) in this process,
/// encoding and decoding with this module, so a writer needs no plugin and weir's own readers open
/// compressed files without one. Idempotent; thread: any (registers once).
[[nodiscard]] core::Result<void> register_hdf5_filters();

/// Encodes whole chunks with one codec. One per thread: it owns its scratch and (zstd) context;
/// after the first chunks of a size nothing is allocated.
class Encoder {
 public:
  Encoder(const Codec& codec, std::size_t element_bytes);
  ~Encoder();
  Encoder(Encoder&&) noexcept;
  Encoder& operator=(Encoder&&) noexcept;

  /// The bytes HDF5 stores for `chunk` (the chunk's whole bytes, element_bytes-aligned) after every
  /// filter of filters(): valid until the next call. For none, the chunk itself.
  [[nodiscard]] core::Result<std::span<const std::byte>> encode(std::span<const std::byte> chunk);
  [[nodiscard]] const Codec& codec() const noexcept { return codec_; }

 private:
  struct State;
  Codec codec_;
  std::size_t element_bytes_ = 0;
  std::unique_ptr<State> state_;
};

/// Decodes what Encoder::encode made, back to the chunk's `chunk_bytes` bytes (tests, the filter
/// classes). A malformed input is refused, never read past its end.
[[nodiscard]] core::Result<std::vector<std::byte>> decode(const Codec& codec, std::size_t element_bytes,
                                                          std::span<const std::byte> encoded, std::size_t chunk_bytes);

}  // namespace weir::codec
