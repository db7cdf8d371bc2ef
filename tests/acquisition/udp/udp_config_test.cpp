// A pipeline's `driver "udp" { ... }` read into UdpOptions the way `weir check` and `weir udp` read
// it: defaults, every key, and each bad setting refused with the file, the line, the part and the key.
#include <doctest/doctest.h>

#include <string>

#include "weir/config/pipeline.hpp"
#include "weir/udp/udp_config.hpp"

using namespace weir;

namespace {

// A pipeline whose third line is `driver "udp" { name = "dig", channels = {"adc0", "adc1"}, BODY }`.
core::Result<acq::UdpOptions> options_of(const std::string& body) {
  const std::string text =
      "arena { name = \"x\" }\nchannel \"adc0\" { dtype = \"i16\", rate = 1e6, block = 1024 }\n"
      "driver \"udp\" { name = \"dig\", channels = {\"adc0\", \"adc1\"}, " + body + " }\n";
  auto pipeline = config::load_pipeline_text(text, "/tmp/udp_pipe.lua");
  REQUIRE_MESSAGE(pipeline, (pipeline ? "" : pipeline.error().what));
  REQUIRE(pipeline->drivers.size() == 1);
  if (auto ok = acq::check_udp_driver(*pipeline, pipeline->drivers[0]); !ok) return tl::make_unexpected(ok.error());
  return acq::udp_options(pipeline->drivers[0]);
}

std::string error_of(const std::string& body) {
  auto o = options_of(body);
  return o ? std::string("(accepted)") : o.error().what;
}

constexpr const char* kStreams = "streams = { {id = 1, channel = \"adc0\"}, {id = 7, channel = \"adc1\"} }";

}  // namespace

TEST_SUITE("acquisition.udp.config") {

TEST_CASE("settings become options: defaults, every key, streams mapped to channels") {
  auto d = options_of(std::string("port = 5000, ") + kStreams);
  REQUIRE_MESSAGE(d, d.error().what);
  CHECK(d->part == "dig");
  CHECK(d->port == 5000);
  CHECK(d->format == acq::PacketFormat::vita49);
  CHECK(d->batch == acq::kUdpDefaultBatch);
  CHECK(d->rcvbuf_bytes == acq::kUdpDefaultRcvbufBytes);
  CHECK(d->cpu == -1);
  CHECK_FALSE(d->create_missing);  // a pipeline declares its channels
  REQUIRE(d->streams.size() == 2);
  CHECK(d->streams[1].id == 7);
  CHECK(d->streams[1].channel == "adc1");

  auto o = options_of(std::string("port = 0, format = \"raw\", bind = \"127.0.0.1\", group = \"239.1.2.3\", "
                                  "rcvbuf = 1048576, batch = 8, cpu = 1, reorder = 3, ") + kStreams);
  REQUIRE_MESSAGE(o, o.error().what);
  CHECK(o->format == acq::PacketFormat::raw);
  CHECK(o->bind == "127.0.0.1");
  CHECK(o->group == "239.1.2.3");
  CHECK(o->rcvbuf_bytes == 1048576);
  CHECK(o->batch == 8);
  CHECK(o->cpu == 1);
  CHECK(o->reorder_blocks == 3);
}

TEST_CASE("bad settings are refused with file:line, the part and the key") {
  const std::string at = "/tmp/udp_pipe.lua:3: driver \"dig\"";
  CHECK(error_of(kStreams).find(at) == 0);  // no port
  CHECK(error_of(kStreams).find("port") != std::string::npos);
  CHECK(error_of(std::string("port = 70000, ") + kStreams).find("port") != std::string::npos);
  CHECK(error_of(std::string("port = 5000, format = \"vrt\", ") + kStreams).find("format") != std::string::npos);
  CHECK(error_of(std::string("port = 5000, prot = 1, ") + kStreams).find("did you mean 'port'") != std::string::npos);
  const std::string other = error_of("port = 5000, streams = { {id = 1, channel = \"adc9\"} }");
  CHECK_MESSAGE(other.find("channel 'adc9' is not one of this driver's channels (adc0, adc1)") != std::string::npos, other);
  CHECK(error_of("port = 5000").find("streams") != std::string::npos);
}

}  // TEST_SUITE
