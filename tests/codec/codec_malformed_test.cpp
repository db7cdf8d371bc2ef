// Malformed chunks: every truncation of an encoded chunk, a header that lies about the sizes, a
// block that says more than is left, bytes after the end and a wrong expected size are refused with
// what is wrong (the decoders never read past their input: the ASan build checks that too).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "codec_data.hpp"
#include "formats.hpp"
#include "weir/codec/codec.hpp"

namespace weir::codec {
namespace {

struct Encoded {
  Codec codec;
  std::vector<std::byte> data;   // the chunk
  std::vector<std::byte> bytes;  // what the encoder stored
};

Encoded encode_pulses(const std::string& codec_name, std::size_t samples = 20'003) {
  auto codec = parse(codec_name);
  REQUIRE(codec);
  Encoded e{*codec, test::detector_codes(samples), {}};
  Encoder encoder(*codec, 2);
  auto stored = encoder.encode(e.data);
  REQUIRE(stored);
  e.bytes.assign(stored->begin(), stored->end());
  return e;
}

void check_refused(const Encoded& e, const std::vector<std::byte>& bytes, std::size_t chunk_bytes, const std::string& says) {
  auto decoded = decode(e.codec, 2, bytes, chunk_bytes);
  REQUIRE_FALSE(decoded);
  CHECK_MESSAGE(decoded.error().what.find(says) != std::string::npos, decoded.error().what);
  CHECK(decoded.error().what.find(name(e.codec)) != std::string::npos);
}

TEST_CASE("every truncation of an encoded chunk is refused") {
  for (const std::string& codec_name : test::kCodecNames) {
    CAPTURE(codec_name);
    const Encoded e = encode_pulses(codec_name);
    std::vector<std::size_t> lengths;
    for (std::size_t n = 0; n < std::min<std::size_t>(e.bytes.size(), 80); ++n) lengths.push_back(n);
    for (std::size_t n = e.bytes.size() / 2; n < e.bytes.size(); n += std::max<std::size_t>(e.bytes.size() / 97, 1))
      lengths.push_back(n);
    lengths.push_back(e.bytes.size() - 1);
    for (const std::size_t n : lengths) {
      CAPTURE(n);
      const std::vector<std::byte> cut(e.bytes.begin(), e.bytes.begin() + static_cast<std::ptrdiff_t>(n));
      CHECK_FALSE(decode(e.codec, 2, cut, e.data.size()));
    }
  }
}

TEST_CASE("bytes after the end and a wrong chunk size are refused") {
  for (const std::string& codec_name : test::kCodecNames) {
    CAPTURE(codec_name);
    const Encoded e = encode_pulses(codec_name);
    auto longer = e.bytes;
    longer.push_back(std::byte{0});
    CHECK_FALSE(decode(e.codec, 2, longer, e.data.size()));
    CHECK_FALSE(decode(e.codec, 2, e.bytes, e.data.size() + 2));
    CHECK_FALSE(decode(e.codec, 2, e.bytes, e.data.size() - 2));
  }
}

TEST_CASE("headers that lie are refused, naming what is wrong") {
  SUBCASE("lz4: a chunk size that is not the chunk's") {
    const Encoded e = encode_pulses("lz4");
    auto bytes = e.bytes;
    detail::put_be64(bytes.data(), e.data.size() * 2);
    check_refused(e, bytes, e.data.size(), "header says");
  }
  SUBCASE("lz4: a block that says more than is left") {
    const Encoded e = encode_pulses("lz4");
    auto bytes = e.bytes;
    detail::put_be32(bytes.data() + 12, static_cast<std::uint32_t>(bytes.size()));
    check_refused(e, bytes, e.data.size(), "left");
  }
  SUBCASE("lz4: block size 0") {
    const Encoded e = encode_pulses("lz4");
    auto bytes = e.bytes;
    detail::put_be32(bytes.data() + 8, 0);
    check_refused(e, bytes, e.data.size(), "block size 0");
  }
  SUBCASE("lz4: a block whose LZ4 is garbled") {
    const Encoded e = encode_pulses("lz4");
    auto bytes = e.bytes;
    detail::put_be32(bytes.data() + 12, detail::get_be32(bytes.data() + 12) - 1);  // one byte short, one trailing
    check_refused(e, bytes, e.data.size(), "lz4 chunk");
  }
  SUBCASE("bitshuffle: a block that is not a multiple of 8 elements") {
    const Encoded e = encode_pulses("bitshuffle+lz4");
    auto bytes = e.bytes;
    detail::put_be32(bytes.data() + 8, 4094);
    check_refused(e, bytes, e.data.size(), "multiple of 8 elements");
  }
  SUBCASE("bitshuffle: a block that says more than is left") {
    const Encoded e = encode_pulses("bitshuffle+lz4");
    auto bytes = e.bytes;
    detail::put_be32(bytes.data() + 12, 0x7FFF'0000U);
    check_refused(e, bytes, e.data.size(), "left");
  }
  SUBCASE("bitshuffle: the chunk size is not the chunk's") {
    const Encoded e = encode_pulses("bitshuffle+lz4");
    auto bytes = e.bytes;
    detail::put_be64(bytes.data(), 6);
    check_refused(e, bytes, e.data.size(), "header says");
  }
  SUBCASE("zstd: not a frame") {
    const Encoded e = encode_pulses("zstd:1");
    auto bytes = e.bytes;
    bytes[0] = std::byte{0};
    check_refused(e, bytes, e.data.size(), "not a zstd frame");
  }
  SUBCASE("deflate: a garbled stream") {
    const Encoded e = encode_pulses("deflate:1");
    auto bytes = e.bytes;
    bytes[0] = std::byte{0xFF};
    check_refused(e, bytes, e.data.size(), "deflate chunk");
  }
  SUBCASE("none: the wrong size") {
    const Encoded e = encode_pulses("none");
    check_refused(e, e.bytes, e.data.size() + 1, "expected");
  }
}

TEST_CASE("random bytes given as a chunk never crash a decoder") {
  for (const std::string& codec_name : test::kCodecNames) {
    const Codec codec = *parse(codec_name);
    for (std::uint64_t seed = 0; seed < 64; ++seed) {
      auto bytes = test::random_bytes(16 + seed * 37, seed);
      if (codec.method == Method::lz4 || codec.method == Method::bitshuffle_lz4) {
        detail::put_be64(bytes.data(), 4000);  // a plausible header, so the blocks are read
        detail::put_be32(bytes.data() + 8, 1024);
      }
      (void)decode(codec, 2, bytes, 4000);  // refused or not, it must stay inside its input
    }
  }
}

}  // namespace
}  // namespace weir::codec
