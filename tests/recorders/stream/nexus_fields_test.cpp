// Which NXdata the entry's default names (nexus_fields.cpp): the pipeline's choice when it is
// recorded, else the first sample channel, which every file of the run has and which plots acquired
// samples against their times.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "nexus_fields.hpp"

using weir::rec::ChannelStatic;
using weir::rec::NexusMeta;

namespace {

ChannelStatic channel(const std::string& name, bool framed) {
  ChannelStatic c;
  c.name = name;
  if (framed) {
    c.frame.frames_per_block = 1;
    c.frame.frame_elements = 2049;
  }
  return c;
}

}  // namespace

TEST_SUITE("recorders.stream.nexus") {

TEST_CASE("the default plot: the pipeline's channel when recorded, else the first sample channel") {
  const std::vector<ChannelStatic> channels{channel("det0.psd", true), channel("det/0", false), channel("det1", false)};
  CHECK(weir::rec::default_plot(channels, nullptr) == "det%2F0");  // the group's link name
  NexusMeta meta;
  CHECK(weir::rec::default_plot(channels, &meta) == "det%2F0");
  meta.default_plot = "det1";
  CHECK(weir::rec::default_plot(channels, &meta) == "det1");
  meta.default_plot = "det0.psd";  // a frame channel, when the pipeline asks for it
  CHECK(weir::rec::default_plot(channels, &meta) == "det0.psd");
  meta.default_plot = "not recorded";
  CHECK(weir::rec::default_plot(channels, &meta) == "det%2F0");
  CHECK(weir::rec::default_plot({channel("a.psd", true), channel("b.psd", true)}, nullptr) == "a.psd");
  CHECK(weir::rec::default_plot({}, &meta).empty());
}

}  // TEST_SUITE
