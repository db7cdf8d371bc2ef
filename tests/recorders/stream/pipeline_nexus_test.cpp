// The NeXus metadata a pipeline gives its recordings (weir/recorder/pipeline_nexus.hpp), from the
// pipeline text alone: no arena, no file; a resolver stands in for the shard host.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "weir/recorder/pipeline_nexus.hpp"

using weir::rec::nexus_from_pipeline;

namespace {

constexpr const char* kPipeline = R"lua(arena { name = "bench" }
entry { title = "Cs-137 calibration run", definition = "NXmonopd", default = "adc1" }
source "ESS" { type = "Spallation Neutron Source", probe = "neutron" }
channel "adc0" { dtype = "f32", rate = 1e6, block = 1000, units = "V",
                 calibration = { scale = 3.0517578125e-05, offset = -0.25, units = "mV" } }
channel "adc1" { dtype = "i16", rate = 1e6, block = 1000 }
channel "adc2" { dtype = "f32", rate = 1e6, block = 1000 }
driver "sim" { name = "pulser", channels = {"adc0"}, signal = "sine", frequency = 1000, amplitude = 5e-05 }
driver "udp" { name = "digi", channels = {"adc1"}, port = 5000,
               streams = { { id = 1, channel = "adc1" } } }
shard "fft" { name = "spec", input = "adc0", size = 1024, output = "adc0.psd" }
)lua";

// Stands in for the shard host: every shard makes one channel, its output.
weir::config::ShardResolver one_output() {
  return [](const weir::config::ShardDecl& s,
            const weir::core::ChannelSpec& in) -> weir::core::Result<std::vector<weir::core::ChannelSpec>> {
    weir::core::ChannelSpec out;
    out.name = s.output.empty() ? in.name + "." + s.kind : s.output;
    out.samples_per_block = in.samples_per_block;
    out.rate_hz = in.rate_hz;
    return std::vector<weir::core::ChannelSpec>{out};
  };
}

weir::config::ShardResolver failing() {
  return [](const weir::config::ShardDecl& s,
            const weir::core::ChannelSpec&) -> weir::core::Result<std::vector<weir::core::ChannelSpec>> {
    return weir::core::fail(weir::core::Errc::invalid_argument, "no host for " + s.kind);
  };
}

bool has_setting(const weir::rec::ChannelNexus& c, const std::string& key, const std::string& value) {
  for (const auto& [k, v] : c.settings)
    if (k == key) return v == value;
  return false;
}

}  // namespace

TEST_SUITE("recorders.stream.pipeline_nexus") {

TEST_CASE("the entry, the source and each driver's channels come from the pipeline") {
  auto m = nexus_from_pipeline(kPipeline, "pipe.lua", one_output());
  REQUIRE(m.has_value());
  CHECK(m->title == "Cs-137 calibration run");
  CHECK(m->definition == "NXmonopd");
  CHECK(m->default_plot == "adc1");
  REQUIRE(m->source.has_value());
  CHECK(m->source->name == "ESS");
  CHECK(m->source->type == "Spallation Neutron Source");
  CHECK(m->source->probe == "neutron");

  REQUIRE(m->channels.count("adc0") == 1);
  const weir::rec::ChannelNexus& adc0 = m->channels.at("adc0");
  CHECK(adc0.part == "pulser");
  CHECK(adc0.driver == "sim");
  CHECK(adc0.role == "driver");
  CHECK(has_setting(adc0, "signal", "sine"));
  CHECK(has_setting(adc0, "frequency", "1000"));
  CHECK(has_setting(adc0, "amplitude", "5e-05"));  // shortest, not 5.0000000000000002e-05
  REQUIRE(adc0.calibration.has_value());
  CHECK(adc0.calibration->scale == doctest::Approx(3.0517578125e-05));
  CHECK(adc0.calibration->offset == doctest::Approx(-0.25));
  CHECK(adc0.calibration->units == "mV");

  REQUIRE(m->channels.count("adc1") == 1);
  const weir::rec::ChannelNexus& adc1 = m->channels.at("adc1");
  CHECK(adc1.part == "digi");
  CHECK(adc1.driver == "udp");
  CHECK(has_setting(adc1, "port", "5000"));
  CHECK(has_setting(adc1, "streams[1].id", "1"));  // nested tables flattened
  CHECK(has_setting(adc1, "streams[1].channel", "adc1"));
  CHECK_FALSE(adc1.calibration.has_value());

  CHECK(m->channels.count("adc2") == 0);  // no part writes it
}

TEST_CASE("a shard's output channel is named after the shard when the pipeline resolves") {
  auto m = nexus_from_pipeline(kPipeline, "pipe.lua", one_output());
  REQUIRE(m.has_value());
  REQUIRE(m->channels.count("adc0.psd") == 1);
  const weir::rec::ChannelNexus& psd = m->channels.at("adc0.psd");
  CHECK(psd.part == "spec");
  CHECK(psd.driver == "fft");
  CHECK(psd.role == "shard");
  CHECK(has_setting(psd, "input", "adc0"));
  CHECK(has_setting(psd, "size", "1024"));
}

TEST_CASE("when the shards cannot be resolved, only the drivers' channels are named") {
  auto m = nexus_from_pipeline(kPipeline, "pipe.lua", failing());
  REQUIRE(m.has_value());
  CHECK(m->channels.count("adc0") == 1);
  CHECK(m->channels.count("adc1") == 1);
  CHECK(m->channels.count("adc0.psd") == 0);
}

TEST_CASE("text that is no pipeline fails naming the file") {
  auto m = nexus_from_pipeline("this is no pipeline\n", "pipe.lua", one_output());
  REQUIRE_FALSE(m.has_value());
  CHECK(m.error().what.find("pipe.lua") != std::string::npos);
}

TEST_CASE("a pipeline without entry or source leaves the recorder's defaults") {
  auto m = nexus_from_pipeline("arena { name = \"bench\" }\nchannel \"adc0\" { rate = 1e6 }\n", "pipe.lua",
                               one_output());
  REQUIRE(m.has_value());
  CHECK(m->title.empty());
  CHECK(m->definition.empty());
  CHECK(m->default_plot.empty());
  CHECK_FALSE(m->source.has_value());
  CHECK(m->channels.empty());
}

}  // TEST_SUITE
