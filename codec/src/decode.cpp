// Decoding: each stored format checked as it is read (sizes against what is left of the input and of
// the output), so a truncated or garbled chunk is refused with what is wrong and never read past.
#include <lz4.h>
#include <zlib.h>
#include <zstd.h>

#include <climits>
#include <cstring>

#include "formats.hpp"

namespace weir::codec {

namespace detail {

namespace {

core::Result<void> malformed(std::string_view format, const std::string& why) {
  return core::fail(core::Errc::invalid_argument, std::string(format) + " chunk: " + why);
}

std::string bytes_text(std::size_t n) { return std::to_string(n) + " bytes"; }

core::Result<void> decode_lz4(std::span<const std::byte> in, std::span<std::byte> out) {
  if (in.size() < kLz4HeaderBytes) return malformed("lz4", "header needs 12 bytes, has " + bytes_text(in.size()));
  const std::uint64_t total = get_be64(in.data());
  if (total != out.size()) return malformed("lz4", "header says " + bytes_text(total) + ", expected " + bytes_text(out.size()));
  std::size_t block = get_be32(in.data() + 8);
  if (block > total) block = total;  // as the plugin reads it
  if (block == 0 && total > 0) return malformed("lz4", "block size 0");
  std::size_t at = kLz4HeaderBytes;
  for (std::size_t done = 0; done < total; done += block) {
    const std::size_t this_block = std::min<std::size_t>(block, total - done);
    if (in.size() - at < 4) return malformed("lz4", "truncated before the block at output byte " + std::to_string(done));
    const std::size_t stored = get_be32(in.data() + at);
    at += 4;
    if (stored > in.size() - at)
      return malformed("lz4", "block at output byte " + std::to_string(done) + " says " + bytes_text(stored) + ", " +
                                  bytes_text(in.size() - at) + " left");
    if (stored == this_block) {
      std::memcpy(out.data() + done, in.data() + at, stored);
    } else {
      const int n = LZ4_decompress_safe(reinterpret_cast<const char*>(in.data() + at), reinterpret_cast<char*>(out.data() + done),
                                        static_cast<int>(stored), static_cast<int>(this_block));
      if (n != static_cast<int>(this_block))
        return malformed("lz4", "block at output byte " + std::to_string(done) + " does not decode to " + bytes_text(this_block));
    }
    at += stored;
  }
  if (at != in.size()) return malformed("lz4", bytes_text(in.size() - at) + " after the last block");
  return {};
}

core::Result<void> decode_bitshuffle(std::size_t element_bytes, std::span<const std::byte> in, std::span<std::byte> out) {
  constexpr std::string_view kName = "bitshuffle+lz4";
  if (in.size() < kBitshuffleHeaderBytes) return malformed(kName, "header needs 12 bytes, has " + bytes_text(in.size()));
  const std::uint64_t total = get_be64(in.data());
  if (total != out.size()) return malformed(kName, "header says " + bytes_text(total) + ", expected " + bytes_text(out.size()));
  if (total % element_bytes != 0) return malformed(kName, "not a whole number of " + std::to_string(element_bytes) + "-byte elements");
  const std::size_t block_bytes = get_be32(in.data() + 8);
  const std::size_t block = block_bytes / element_bytes;
  if (block_bytes % element_bytes != 0 || block == 0 || block % kBitshuffleBlockMultiple != 0)
    return malformed(kName, "block of " + bytes_text(block_bytes) + " is not a multiple of 8 elements");
  const std::size_t elements = total / element_bytes;
  std::vector<std::byte> transposed(std::min(block, elements) * element_bytes);
  std::size_t at = kBitshuffleHeaderBytes;
  std::size_t done = 0;
  while (elements - done >= kBitshuffleBlockMultiple) {
    std::size_t n = std::min(block, elements - done);
    n -= n % kBitshuffleBlockMultiple;
    if (in.size() - at < 4) return malformed(kName, "truncated before the block at element " + std::to_string(done));
    const std::size_t stored = get_be32(in.data() + at);
    at += 4;
    if (stored > in.size() - at || stored > static_cast<std::size_t>(INT_MAX))
      return malformed(kName, "block at element " + std::to_string(done) + " says " + bytes_text(stored) + ", " +
                                  bytes_text(in.size() - at) + " left");
    const int got = LZ4_decompress_safe(reinterpret_cast<const char*>(in.data() + at), reinterpret_cast<char*>(transposed.data()),
                                        static_cast<int>(stored), static_cast<int>(n * element_bytes));
    if (got != static_cast<int>(n * element_bytes))
      return malformed(kName, "block at element " + std::to_string(done) + " does not decode to " + bytes_text(n * element_bytes));
    bit_untranspose(transposed.data(), out.data() + done * element_bytes, n, element_bytes);
    at += stored;
    done += n;
  }
  const std::size_t leftover = (elements - done) * element_bytes;
  if (in.size() - at != leftover)
    return malformed(kName, bytes_text(in.size() - at) + " after the last block, expected " + bytes_text(leftover));
  if (leftover > 0) std::memcpy(out.data() + done * element_bytes, in.data() + at, leftover);
  return {};
}

core::Result<void> decode_zstd(std::span<const std::byte> in, std::span<std::byte> out) {
  const unsigned long long content = ZSTD_getFrameContentSize(in.data(), in.size());
  if (content == ZSTD_CONTENTSIZE_ERROR) return malformed("zstd", "not a zstd frame");
  if (content == ZSTD_CONTENTSIZE_UNKNOWN) return malformed("zstd", "the frame does not say its content size");
  if (content != out.size()) return malformed("zstd", "frame says " + bytes_text(content) + ", expected " + bytes_text(out.size()));
  const std::size_t n = ZSTD_decompress(out.data(), out.size(), in.data(), in.size());
  if (ZSTD_isError(n) != 0) return malformed("zstd", ZSTD_getErrorName(n));
  if (n != out.size()) return malformed("zstd", "decodes to " + bytes_text(n) + ", expected " + bytes_text(out.size()));
  return {};
}

core::Result<void> decode_deflate(std::span<const std::byte> in, std::span<std::byte> out) {
  auto out_bytes = static_cast<uLongf>(out.size());
  auto in_bytes = static_cast<uLong>(in.size());
  const int rc = uncompress2(reinterpret_cast<Bytef*>(out.data()), &out_bytes, reinterpret_cast<const Bytef*>(in.data()), &in_bytes);
  if (rc == Z_BUF_ERROR && out_bytes == out.size()) return malformed("deflate", "decodes to more than " + bytes_text(out.size()));
  if (rc != Z_OK) return malformed("deflate", std::string("zlib: ") + (rc == Z_BUF_ERROR ? "truncated stream" : zError(rc)));
  if (out_bytes != out.size()) return malformed("deflate", "decodes to " + bytes_text(out_bytes) + ", expected " + bytes_text(out.size()));
  if (in_bytes != in.size()) return malformed("deflate", bytes_text(in.size() - in_bytes) + " after the stream");
  return {};
}

}  // namespace

core::Result<std::size_t> stored_chunk_bytes(Method method, std::span<const std::byte> encoded) {
  switch (method) {
    case Method::lz4:
    case Method::bitshuffle_lz4:
      if (encoded.size() < kLz4HeaderBytes)
        return core::fail(core::Errc::invalid_argument, "chunk header needs 12 bytes, has " + bytes_text(encoded.size()));
      if (get_be64(encoded.data()) > static_cast<std::uint64_t>(INT_MAX))
        return core::fail(core::Errc::invalid_argument, "chunk header says " + bytes_text(get_be64(encoded.data())) + " (over 2 GiB)");
      return static_cast<std::size_t>(get_be64(encoded.data()));
    case Method::zstd: {
      const unsigned long long content = ZSTD_getFrameContentSize(encoded.data(), encoded.size());
      if (content == ZSTD_CONTENTSIZE_ERROR || content == ZSTD_CONTENTSIZE_UNKNOWN || content > static_cast<unsigned long long>(INT_MAX))
        return core::fail(core::Errc::invalid_argument, "zstd chunk: no usable content size in the frame");
      return static_cast<std::size_t>(content);
    }
    case Method::none:
    case Method::deflate: break;
  }
  return core::fail(core::Errc::invalid_argument, "the chunk's format does not say its size");
}

core::Result<void> decode_stage(Method method, std::size_t element_bytes, std::span<const std::byte> encoded,
                                std::span<std::byte> out) {
  switch (method) {
    case Method::none:
      if (encoded.size() != out.size())
        return malformed("none", "has " + bytes_text(encoded.size()) + ", expected " + bytes_text(out.size()));
      if (!out.empty()) std::memcpy(out.data(), encoded.data(), out.size());
      return {};
    case Method::deflate: return decode_deflate(encoded, out);
    case Method::lz4: return decode_lz4(encoded, out);
    case Method::zstd: return decode_zstd(encoded, out);
    case Method::bitshuffle_lz4: return decode_bitshuffle(element_bytes, encoded, out);
  }
  return malformed("unknown", "method");
}

}  // namespace detail

core::Result<std::vector<std::byte>> decode(const Codec& codec, std::size_t element_bytes, std::span<const std::byte> encoded,
                                            std::size_t chunk_bytes) {
  const std::string context = "decode " + name(codec) + " (" + std::to_string(encoded.size()) + " bytes)";
  if (auto ok = detail::validate(codec, element_bytes); !ok) return tl::make_unexpected(core::with_context(ok.error(), context));
  std::vector<std::byte> out(chunk_bytes);
  if (!codec.shuffle) {
    if (auto ok = detail::decode_stage(codec.method, element_bytes, encoded, out); !ok)
      return tl::make_unexpected(core::with_context(ok.error(), context));
    return out;
  }
  std::vector<std::byte> shuffled(chunk_bytes);
  if (auto ok = detail::decode_stage(codec.method, element_bytes, encoded, shuffled); !ok)
    return tl::make_unexpected(core::with_context(ok.error(), context));
  detail::byte_unshuffle(shuffled.data(), out.data(), chunk_bytes, element_bytes);
  return out;
}

}  // namespace weir::codec
