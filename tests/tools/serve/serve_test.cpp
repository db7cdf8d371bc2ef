// weir::serve's pure parts: the frame codec, label escaping, option checks, the min/max history, the
// request's text.
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "minmax_history.hpp"
#include "request_text.hpp"
#include "weir/serve/frame_codec.hpp"
#include "weir/serve/metrics.hpp"
#include "weir/serve/serve.hpp"

using namespace weir::serve;

TEST_SUITE("serve.units") {

TEST_CASE("a frame's header and columns read back as written") {
  FrameHeader h;
  h.kind = FrameKind::envelope;
  h.flags = kFrameRaw;
  h.channel = 3;
  h.first = 1024;
  h.step = 2.5;
  h.anchor = 4096;
  h.newest_monotonic_ns = 123456789;
  h.span = 2500;
  const std::vector<float> mins{-1, -2}, maxs{1, 7};
  const std::string bytes = encode_frame(h, mins, maxs);
  REQUIRE(bytes.size() == kFrameHeaderBytes + 4 * sizeof(float));
  FrameHeader back;
  std::uint32_t n = 0;
  REQUIRE(decode_frame_header(bytes, back, n));
  CHECK(n == 2);
  CHECK(back.channel == 3);
  CHECK(back.flags == kFrameRaw);
  CHECK(back.first == 1024);
  CHECK(back.step == 2.5);
  CHECK(back.newest_monotonic_ns == 123456789);
  CHECK(back.span == 2500);
  float last = 0;
  std::memcpy(&last, bytes.data() + kFrameHeaderBytes + 3 * sizeof(float), sizeof last);
  CHECK(last == 7);
  CHECK_FALSE(decode_frame_header(std::string(10, 'x'), back, n));
}

TEST_CASE("label values escape backslash, quote and newline") {
  CHECK(escape_label("a\\b\"c\nd") == "a\\\\b\\\"c\\nd");
  CHECK(escape_label("adc0") == "adc0");
}

TEST_CASE("binding off loopback without a token is refused, with one it is allowed") {
  ServeOptions o;
  o.where = "x";
  CHECK(check_options(o));
  o.bind = "0.0.0.0";
  const auto refused = check_options(o);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().what.find("token") != std::string::npos);
  o.token = "s3cret";
  CHECK(check_options(o));
  o.bind = "not-an-address";
  CHECK_FALSE(check_options(o));
  CHECK(is_loopback("127.0.0.2"));
  CHECK(is_loopback("::1"));
  CHECK_FALSE(is_loopback("10.0.0.1"));
}

TEST_CASE("the min/max history keeps whole entries, restarts at a hole and forgets the oldest") {
  MinMaxHistory h(4, 3);  // 4 samples an entry; capacity rounded up to 4 entries
  const std::vector<float> a{9, 1, 2, 3, 4, -5, 6, 7, 8, 9};  // samples 2..11: entry 0 is not whole
  h.append(2, a);
  CHECK(h.begin() == 4);
  CHECK(h.end() == 12);
  float lo = 0, hi = 0;
  h.entry(1, lo, hi);  // samples 4..7: 2, 3, 4, -5
  CHECK(lo == -5);
  CHECK(hi == 4);
  const std::vector<float> b{100, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};  // samples 12..23: on from the last
  h.append(12, b);
  CHECK(h.end() == 24);
  CHECK(h.begin() == 8);  // four entries held: 2..5
  h.entry(3, lo, hi);
  CHECK(hi == 100);
  h.append(30, b);  // a hole: starts again at the first whole entry
  CHECK(h.begin() == 32);
  CHECK(h.end() == 40);
  h.reset();
  CHECK(h.begin() == h.end());
}

TEST_CASE("a request target's path and query are decoded; cookies and secrets are read") {
  const Target t = parse_target("/api/key?name=run%2Etitle&token=a+b&empty");
  CHECK(t.path == "/api/key");
  CHECK(t.query.at("name") == "run.title");
  CHECK(t.query.at("token") == "a b");
  CHECK(t.query.at("empty").empty());
  CHECK(url_decode("100%") == "100%");  // a malformed escape is kept
  CHECK(cookie_value("a=1; weir_token=s3cret; b=2", "weir_token") == "s3cret");
  CHECK(cookie_value("xweir_token=1", "weir_token").empty());
  CHECK(same_secret("abc", "abc"));
  CHECK_FALSE(same_secret("abc", "abd"));
  CHECK_FALSE(same_secret("abc", "ab"));
}

}  // TEST_SUITE
