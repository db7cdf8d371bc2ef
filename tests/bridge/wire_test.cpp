// The wire header: its checks refuse what is not a header of this version, and names round-trip.
#include <doctest/doctest.h>

#include <cstring>
#include <string>

#include "weir/bridge/wire.hpp"

namespace weir::bridge {

TEST_SUITE("bridge.wire") {

TEST_CASE("a made header passes the check and a changed one does not") {
  WireHeader h = make_header(MessageKind::block, 42);
  CHECK(check_header(&h, sizeof h) == HeaderCheck::ok);
  CHECK(h.session == 42);
  CHECK(check_header(&h, sizeof h - 1) == HeaderCheck::wrong_size);
  WireHeader bad = h;
  bad.magic ^= 1;
  CHECK(check_header(&bad, sizeof bad) == HeaderCheck::wrong_magic);
  bad = h;
  bad.version = kWireVersion + 1;
  CHECK(check_header(&bad, sizeof bad) == HeaderCheck::wrong_version);
  bad = h;
  bad.kind = 99;
  CHECK(check_header(&bad, sizeof bad) == HeaderCheck::unknown_kind);
}

TEST_CASE("a block's frame is its header and payload_bytes more; other kinds are the header alone") {
  struct Frame {
    WireHeader h;
    std::byte payload[64];
  } f{};
  f.h = make_header(MessageKind::block, 7);
  f.h.payload_bytes = sizeof f.payload;
  CHECK(check_header(&f, sizeof f) == HeaderCheck::ok);
  CHECK(check_header(&f, sizeof f - 1) == HeaderCheck::wrong_size);
  CHECK(check_header(&f, sizeof f.h) == HeaderCheck::wrong_size);
  f.h.payload_bytes = 0;
  CHECK(check_header(&f, sizeof f.h) == HeaderCheck::ok);  // an empty block
  f.h.kind = static_cast<std::uint16_t>(MessageKind::mark);
  CHECK(check_header(&f, sizeof f.h) == HeaderCheck::ok);
  CHECK(check_header(&f, sizeof f) == HeaderCheck::wrong_size);
}

TEST_CASE("a block frame holds block records back to back, each checked, ending at the frame's end") {
  struct Record {
    WireHeader h;
    std::byte payload[64];
  };
  Record f[3]{};
  for (Record& r : f) {
    r.h = make_header(MessageKind::block, 7);
    r.h.payload_bytes = sizeof r.payload;
  }
  CHECK(check_header(f, sizeof f) == HeaderCheck::ok);
  CHECK(check_header(f, 2 * sizeof(Record)) == HeaderCheck::ok);
  CHECK(check_header(f, sizeof f - 1) == HeaderCheck::wrong_size);                // the last record cut short
  CHECK(check_header(f, 2 * sizeof(Record) + 10) == HeaderCheck::wrong_size);     // a piece of a header after one
  f[1].h.version = kWireVersion - 1;
  CHECK(check_header(f, sizeof f) == HeaderCheck::wrong_version);
  f[1].h.version = kWireVersion;
  f[2].h.magic ^= 1;
  CHECK(check_header(f, sizeof f) == HeaderCheck::wrong_magic);
  f[2].h.magic = kWireMagic;
  f[1].h.kind = static_cast<std::uint16_t>(MessageKind::mark);  // only blocks follow a block
  CHECK(check_header(f, sizeof f) != HeaderCheck::ok);
  f[1].h.kind = static_cast<std::uint16_t>(MessageKind::block);
  f[1].h.payload_bytes = ~std::uint64_t{0};  // past the frame's end, even wrapping around
  CHECK(check_header(f, sizeof f) == HeaderCheck::wrong_size);
  f[1].h.payload_bytes = sizeof f[1].payload + sizeof(Record);  // swallows the third record exactly
  CHECK(check_header(f, sizeof f) == HeaderCheck::ok);
}

TEST_CASE("names are zero-terminated in their fields and a long one is cut and reported") {
  WireHeader h{};
  CHECK(copy_text(h.channel, sizeof h.channel, "adc0"));
  CHECK(field_text(h.channel, sizeof h.channel) == "adc0");
  const std::string long_name(kWireNameBytes, 'x');
  CHECK_FALSE(copy_text(h.channel, sizeof h.channel, long_name));
  CHECK(field_text(h.channel, sizeof h.channel).size() == kWireNameBytes - 1);
}

}  // TEST_SUITE

}  // namespace weir::bridge
