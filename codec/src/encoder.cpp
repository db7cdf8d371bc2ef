// Encoder: a chunk through the byte shuffle and one compressor into the bytes HDF5 would store. Its
// buffers only grow, the deflate stream and the zstd context are made once and reset per chunk, so
// after the first chunk of a size nothing is allocated.
#include <lz4.h>
#include <zlib.h>
#include <zstd.h>

#include <climits>
#include <cstring>

#include "formats.hpp"

namespace weir::codec {

struct Encoder::State {
  std::vector<std::byte> shuffled;  // the chunk after the byte shuffle
  std::vector<std::byte> block;     // one bitshuffle block after the bit transpose
  std::vector<std::byte> out;       // the encoded chunk
  std::vector<char> lz4_state;      // LZ4's hash table (LZ4_sizeofState bytes)
  ZSTD_CCtx* zstd = nullptr;
  z_stream deflate{};
  bool deflate_ready = false;

  State() = default;
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  ~State() {
    if (zstd != nullptr) ZSTD_freeCCtx(zstd);
    if (deflate_ready) deflateEnd(&deflate);
  }
};

namespace {

void ensure(std::vector<std::byte>& buffer, std::size_t bytes) {
  if (buffer.size() < bytes) buffer.resize(bytes);
}

core::Result<std::span<const std::byte>> failed(const Codec& codec, std::size_t bytes, const std::string& why) {
  return core::fail(core::Errc::invalid_argument,
                    "encode " + std::to_string(bytes) + " bytes with " + name(codec) + ": " + why);
}

// LZ4 of `in` into `out` (capacity LZ4_compressBound(in bytes)); 0 on an LZ4 error.
std::size_t lz4(std::vector<char>& state, const std::byte* in, std::size_t bytes, std::byte* out, std::size_t capacity) {
  const int n = LZ4_compress_fast_extState(state.data(), reinterpret_cast<const char*>(in), reinterpret_cast<char*>(out),
                                           static_cast<int>(bytes), static_cast<int>(capacity), 1);
  return n > 0 ? static_cast<std::size_t>(n) : 0;
}

}  // namespace

Encoder::Encoder(const Codec& codec, std::size_t element_bytes)
    : codec_(codec), element_bytes_(element_bytes), state_(std::make_unique<State>()) {}
Encoder::~Encoder() = default;
Encoder::Encoder(Encoder&&) noexcept = default;
Encoder& Encoder::operator=(Encoder&&) noexcept = default;

core::Result<std::span<const std::byte>> Encoder::encode(std::span<const std::byte> chunk) {
  const std::size_t bytes = chunk.size();
  if (auto ok = detail::validate(codec_, element_bytes_); !ok) return failed(codec_, bytes, ok.error().what);
  if (codec_.method == Method::none) return chunk;
  if (bytes > static_cast<std::size_t>(INT_MAX)) return failed(codec_, bytes, "a chunk must be under 2 GiB");
  State& s = *state_;

  const std::byte* in = chunk.data();
  if (codec_.shuffle) {
    ensure(s.shuffled, bytes);
    detail::byte_shuffle(in, s.shuffled.data(), bytes, element_bytes_);
    in = s.shuffled.data();
  }
  if ((codec_.method == Method::lz4 || codec_.method == Method::bitshuffle_lz4) && s.lz4_state.empty())
    s.lz4_state.resize(static_cast<std::size_t>(LZ4_sizeofState()));

  switch (codec_.method) {
    case Method::none: return chunk;
    case Method::deflate: {
      if (!s.deflate_ready) {
        if (deflateInit(&s.deflate, codec_.level) != Z_OK) return failed(codec_, bytes, "deflateInit failed");
        s.deflate_ready = true;
      } else if (deflateReset(&s.deflate) != Z_OK) {
        return failed(codec_, bytes, "deflateReset failed");
      }
      const std::size_t capacity = deflateBound(&s.deflate, static_cast<uLong>(bytes));
      ensure(s.out, capacity);
      s.deflate.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(in));
      s.deflate.avail_in = static_cast<uInt>(bytes);
      s.deflate.next_out = reinterpret_cast<Bytef*>(s.out.data());
      s.deflate.avail_out = static_cast<uInt>(capacity);
      if (::deflate(&s.deflate, Z_FINISH) != Z_STREAM_END) return failed(codec_, bytes, "deflate did not finish");
      return std::span<const std::byte>(s.out.data(), s.deflate.total_out);
    }
    case Method::zstd: {
      if (s.zstd == nullptr && (s.zstd = ZSTD_createCCtx()) == nullptr) return failed(codec_, bytes, "ZSTD_createCCtx failed");
      const std::size_t capacity = ZSTD_compressBound(bytes);
      ensure(s.out, capacity);
      // ZSTD_compressCCtx writes the content size into the frame, which the zstd filter sizes its output by.
      const std::size_t n = ZSTD_compressCCtx(s.zstd, s.out.data(), capacity, in, bytes, codec_.level);
      if (ZSTD_isError(n) != 0) return failed(codec_, bytes, std::string("zstd: ") + ZSTD_getErrorName(n));
      return std::span<const std::byte>(s.out.data(), n);
    }
    case Method::lz4: {
      const std::size_t block = std::min(bytes, detail::kLz4MaxBlockBytes);
      const std::size_t blocks = block == 0 ? 0 : (bytes + block - 1) / block;
      const auto bound = static_cast<std::size_t>(LZ4_compressBound(static_cast<int>(block)));
      ensure(s.out, detail::kLz4HeaderBytes + blocks * (4 + bound));
      std::byte* at = s.out.data();
      detail::put_be64(at, bytes);
      detail::put_be32(at + 8, static_cast<std::uint32_t>(block));
      at += detail::kLz4HeaderBytes;
      for (std::size_t done = 0; done < bytes; done += block) {
        const std::size_t this_block = std::min(block, bytes - done);
        std::size_t n = lz4(s.lz4_state, in + done, this_block, at + 4, bound);
        if (n == 0) return failed(codec_, bytes, "LZ4 failed");
        if (n >= this_block) {  // no gain: stored as it is, as the plugin does
          n = this_block;
          std::memcpy(at + 4, in + done, this_block);
        }
        detail::put_be32(at, static_cast<std::uint32_t>(n));
        at += 4 + n;
      }
      return std::span<const std::byte>(s.out.data(), static_cast<std::size_t>(at - s.out.data()));
    }
    case Method::bitshuffle_lz4: {
      if (bytes % element_bytes_ != 0)
        return failed(codec_, bytes, "not a whole number of " + std::to_string(element_bytes_) + "-byte elements");
      const std::size_t elements = bytes / element_bytes_;
      const std::size_t block = detail::bitshuffle_block_elements(element_bytes_);
      const std::size_t block_bytes = block * element_bytes_;
      const auto bound = static_cast<std::size_t>(LZ4_compressBound(static_cast<int>(block_bytes)));
      const std::size_t blocks = elements / block + 1;
      ensure(s.out, detail::kBitshuffleHeaderBytes + blocks * (4 + bound) + bytes % (8 * element_bytes_) + 8 * element_bytes_);
      ensure(s.block, block_bytes);
      std::byte* at = s.out.data();
      detail::put_be64(at, bytes);
      detail::put_be32(at + 8, static_cast<std::uint32_t>(block_bytes));
      at += detail::kBitshuffleHeaderBytes;
      std::size_t done = 0;  // elements
      while (elements - done >= detail::kBitshuffleBlockMultiple) {
        std::size_t n = std::min(block, elements - done);
        n -= n % detail::kBitshuffleBlockMultiple;  // the last block: whole groups of 8 only
        detail::bit_transpose(in + done * element_bytes_, s.block.data(), n, element_bytes_);
        const std::size_t packed = lz4(s.lz4_state, s.block.data(), n * element_bytes_, at + 4, bound);
        if (packed == 0) return failed(codec_, bytes, "LZ4 failed");
        detail::put_be32(at, static_cast<std::uint32_t>(packed));
        at += 4 + packed;
        done += n;
      }
      const std::size_t leftover = (elements - done) * element_bytes_;  // under 8 elements, stored as they are
      if (leftover > 0) std::memcpy(at, in + done * element_bytes_, leftover);
      at += leftover;
      return std::span<const std::byte>(s.out.data(), static_cast<std::size_t>(at - s.out.data()));
    }
  }
  return failed(codec_, bytes, "unknown method");
}

}  // namespace weir::codec
