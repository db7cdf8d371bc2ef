// The codecs' names, filter pipelines and round trips: every codec on detector-like i16 pulses, f32
// noise, zeros and random bytes, element sizes 1, 2, 4 and 8, sizes that are not a multiple of 8
// elements or of the element size; the shuffles against naive loops of their definitions.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "codec_data.hpp"
#include "formats.hpp"
#include "weir/codec/codec.hpp"

namespace weir::codec {
namespace {

Codec must_parse(const std::string& text) {
  auto codec = parse(text);
  REQUIRE_MESSAGE(codec, text);
  return *codec;
}

void check_round_trip(const std::string& codec_name, std::size_t element_bytes, const std::vector<std::byte>& data) {
  CAPTURE(codec_name);
  CAPTURE(element_bytes);
  CAPTURE(data.size());
  const Codec codec = must_parse(codec_name);
  Encoder encoder(codec, element_bytes);
  auto encoded = encoder.encode(data);
  REQUIRE_MESSAGE(encoded, (encoded ? "" : encoded.error().what));
  auto decoded = decode(codec, element_bytes, *encoded, data.size());
  REQUIRE_MESSAGE(decoded, (decoded ? "" : decoded.error().what));
  CHECK(*decoded == data);
}

TEST_CASE("codec names parse to their codec and back") {
  CHECK(must_parse("none") == Codec{Method::none, false, 0});
  CHECK(must_parse("deflate") == Codec{Method::deflate, false, 1});
  CHECK(must_parse("shuffle+deflate:6") == Codec{Method::deflate, true, 6});
  CHECK(must_parse("zstd") == Codec{Method::zstd, false, 1});
  CHECK(must_parse("shuffle+zstd:3") == Codec{Method::zstd, true, 3});
  CHECK(must_parse("shuffle+lz4") == Codec{Method::lz4, true, 0});
  CHECK(must_parse("bitshuffle+lz4") == Codec{Method::bitshuffle_lz4, false, 0});
  for (const std::string& text : test::kCodecNames) {
    const Codec codec = must_parse(text);
    CHECK(must_parse(name(codec)) == codec);
  }
  CHECK(name(must_parse("deflate")) == "deflate:1");
}

TEST_CASE("a bad codec name is refused with the text and the choices") {
  for (const char* bad : {"", "lz5", "shuffle+none", "shuffle+bitshuffle+lz4", "deflate:0", "deflate:10", "zstd:23",
                          "zstd:0", "lz4:1", "deflate:", "deflate:x", "deflate:1x", "bitshuffle", "none:1"}) {
    CAPTURE(bad);
    auto codec = parse(bad);
    REQUIRE_FALSE(codec);
    CHECK(codec.error().what.find("'" + std::string(bad) + "'") != std::string::npos);
    CHECK(codec.error().what.find("choices") != std::string::npos);
  }
}

TEST_CASE("each codec's filter pipeline: shuffle first, the registered numbers and their values") {
  CHECK(filters(must_parse("none"), 2).empty());
  const auto shuffle_deflate = filters(must_parse("shuffle+deflate:6"), 4);
  REQUIRE(shuffle_deflate.size() == 2);
  CHECK(shuffle_deflate[0].id == H5Z_FILTER_SHUFFLE);
  CHECK(shuffle_deflate[0].cd_count == 1);
  CHECK(shuffle_deflate[0].cd[0] == 4);
  CHECK(shuffle_deflate[1].id == H5Z_FILTER_DEFLATE);
  CHECK(shuffle_deflate[1].cd[0] == 6);
  const auto lz4 = filters(must_parse("lz4"), 2);
  REQUIRE(lz4.size() == 1);
  CHECK(lz4[0].id == 32004);
  const auto zstd = filters(must_parse("zstd:3"), 2);
  REQUIRE(zstd.size() == 1);
  CHECK(zstd[0].id == 32015);
  CHECK(zstd[0].cd[0] == 3);
  const auto bitshuffle = filters(must_parse("bitshuffle+lz4"), 2);
  REQUIRE(bitshuffle.size() == 1);
  CHECK(bitshuffle[0].id == 32008);
  REQUIRE(bitshuffle[0].cd_count == 5);
  CHECK(bitshuffle[0].cd[2] == 2);     // element bytes
  CHECK(bitshuffle[0].cd[3] == 4096);  // bitshuffle's default block: 8192 bytes of elements
  CHECK(bitshuffle[0].cd[4] == 2);     // LZ4
}

TEST_CASE("HDF5's byte shuffle: bytes grouped by position, the leftover bytes last as they are") {
  for (std::size_t es : {2U, 3U, 4U, 8U}) {
    for (std::size_t bytes : {0U, 1U, 5U, 16U, 17U, 1001U}) {
      CAPTURE(es);
      CAPTURE(bytes);
      const auto in = test::random_bytes(bytes, es * 1000 + bytes);
      std::vector<std::byte> out(bytes), back(bytes), expected(in);
      const std::size_t n = bytes / es;
      if (n > 1)
        for (std::size_t i = 0; i < n; ++i)
          for (std::size_t k = 0; k < es; ++k) expected[k * n + i] = in[i * es + k];
      detail::byte_shuffle(in.data(), out.data(), bytes, es);
      CHECK(out == expected);
      detail::byte_unshuffle(out.data(), back.data(), bytes, es);
      CHECK(back == in);
    }
  }
}

TEST_CASE("bitshuffle's transpose: row 8j+k holds bit k of byte j of every element, element 8b+m at bit m of byte b") {
  for (std::size_t es : {1U, 2U, 4U, 8U}) {
    for (std::size_t elements : {8U, 16U, 4096U}) {
      CAPTURE(es);
      CAPTURE(elements);
      const auto in = test::random_bytes(elements * es, es + elements);
      std::vector<std::byte> out(in.size()), back(in.size()), expected(in.size());
      const std::size_t row = elements / 8;
      for (std::size_t i = 0; i < elements; ++i)
        for (std::size_t j = 0; j < es; ++j)
          for (std::size_t k = 0; k < 8; ++k)
            if (((static_cast<unsigned>(in[i * es + j]) >> k) & 1U) != 0)
              expected[(j * 8 + k) * row + i / 8] |= static_cast<std::byte>(1U << (i % 8));
      detail::bit_transpose(in.data(), out.data(), elements, es);
      CHECK(out == expected);
      detail::bit_untranspose(out.data(), back.data(), elements, es);
      CHECK(back == in);
    }
  }
}

TEST_CASE("every codec round-trips detector pulses, noise, zeros and random bytes") {
  const std::size_t chunk = 128 * 1024;  // i16 samples: a 256 KiB chunk
  const auto pulses = test::detector_codes(chunk);
  const auto noise = test::f32_noise(chunk / 2);
  const std::vector<std::byte> zeros(chunk * 2);
  const auto random = test::random_bytes(chunk * 2);
  for (const std::string& codec : test::kCodecNames) {
    check_round_trip(codec, 2, pulses);
    check_round_trip(codec, 4, noise);
    check_round_trip(codec, 8, zeros);
    check_round_trip(codec, 1, random);
  }
}

TEST_CASE("odd sizes: not a multiple of 8 elements, nor of the element size, one element, empty") {
  for (const std::string& codec_name : test::kCodecNames) {
    const bool whole_elements_only = codec_name == "bitshuffle+lz4";
    for (std::size_t es : {1U, 2U, 4U, 8U}) {
      for (std::size_t elements : {1U, 7U, 8U, 9U, 15U, 4095U, 4096U, 4097U, 12'345U}) {
        auto pulses = test::detector_codes(elements * es / 2 + 1);
        pulses.resize(elements * es);  // detector codes cut to whole elements of es bytes
        check_round_trip(codec_name, es, pulses);
        if (!whole_elements_only && es > 1) check_round_trip(codec_name, es, test::random_bytes(elements * es + es - 1, elements));
      }
    }
    if (!whole_elements_only) check_round_trip(codec_name, 2, {});
  }
}

TEST_CASE("bitshuffle+lz4 refuses a chunk that is not whole elements") {
  Encoder encoder(must_parse("bitshuffle+lz4"), 4);
  auto encoded = encoder.encode(test::random_bytes(4 * 100 + 2));
  REQUIRE_FALSE(encoded);
  CHECK(encoded.error().what.find("4-byte elements") != std::string::npos);
}

TEST_CASE("compressible data shrinks, LZ4 stores an incompressible block as it is") {
  const std::vector<std::byte> zeros(256 * 1024);
  for (const std::string& codec_name : test::kCodecNames) {
    if (codec_name == "none") continue;
    CAPTURE(codec_name);
    Encoder encoder(must_parse(codec_name), 2);
    auto encoded = encoder.encode(zeros);
    REQUIRE(encoded);
    CHECK(encoded->size() * 50 < zeros.size());
  }
  const auto random = test::random_bytes(100'000);
  Encoder lz4(must_parse("lz4"), 2);
  auto encoded = lz4.encode(random);
  REQUIRE(encoded);
  REQUIRE(encoded->size() == 12 + 4 + random.size());
  CHECK(detail::get_be32(encoded->data() + 12) == random.size());  // stored size == block: raw
  CHECK(std::equal(random.begin(), random.end(), encoded->begin() + 16));
}

TEST_CASE("an Encoder reused chunk after chunk keeps its buffer and encodes each chunk on its own") {
  const auto data = test::detector_codes(64 * 1024 * 4);
  const std::size_t chunk = 128 * 1024;
  for (const std::string& codec_name : test::kCodecNames) {
    if (codec_name == "none") continue;
    CAPTURE(codec_name);
    const Codec codec = must_parse(codec_name);
    Encoder encoder(codec, 2);
    const std::byte* first = nullptr;
    for (std::size_t at = 0; at + chunk <= data.size(); at += chunk) {
      const std::span<const std::byte> in(data.data() + at, chunk);
      auto encoded = encoder.encode(in);
      REQUIRE(encoded);
      if (first == nullptr) first = encoded->data();
      CHECK(encoded->data() == first);  // the same buffer: nothing reallocated
      auto decoded = decode(codec, 2, *encoded, chunk);
      REQUIRE(decoded);
      CHECK(std::equal(decoded->begin(), decoded->end(), in.begin()));
    }
    Encoder moved = std::move(encoder);  // moves keep working
    auto again = moved.encode(std::span<const std::byte>(data.data(), chunk));
    REQUIRE(again);
    CHECK(again->data() == first);
  }
}

}  // namespace
}  // namespace weir::codec
