#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "weir/dsp/window.hpp"

using weir::dsp::WindowKind;
using weir::dsp::WindowSpec;
using weir::dsp::WindowSymmetry;

TEST_SUITE("dsp.window") {

TEST_CASE("each window has its published coherent gain and noise bandwidth") {
  struct Expected {
    WindowKind kind;
    double coherent_gain;
    double enbw_bins;
  };
  // Harris (1978) and Heinzel et al. (2002), periodic windows.
  const Expected table[] = {{WindowKind::rectangular, 1.0, 1.0},      {WindowKind::hann, 0.5, 1.5},
                            {WindowKind::hamming, 0.54, 1.3628},      {WindowKind::blackman, 0.42, 1.7268},
                            {WindowKind::blackman_harris, 0.35875, 2.0044}, {WindowKind::flattop, 1.0, 3.8112}};
  for (const auto& e : table) {
    CAPTURE(weir::dsp::window_name(e.kind));
    const auto w = weir::dsp::make_window(WindowSpec{e.kind}, 4096);
    const auto gains = weir::dsp::window_gains(w);
    CHECK(gains.coherent_gain == doctest::Approx(e.coherent_gain).epsilon(1e-4));
    CHECK(gains.enbw_bins == doctest::Approx(e.enbw_bins).epsilon(2e-4));
  }
}

TEST_CASE("a periodic window is one period of a DFT-even function and a symmetric one mirrors") {
  const auto periodic = weir::dsp::make_window(WindowSpec{WindowKind::hann}, 16, WindowSymmetry::periodic);
  CHECK(periodic[0] == doctest::Approx(0.0));
  CHECK(periodic[8] == doctest::Approx(1.0));
  for (std::size_t i = 1; i < 16; ++i) CHECK(periodic[i] == doctest::Approx(periodic[16 - i]));

  const auto symmetric = weir::dsp::make_window(WindowSpec{WindowKind::blackman}, 15, WindowSymmetry::symmetric);
  CHECK(symmetric[0] == doctest::Approx(0.0).epsilon(1e-6));
  CHECK(symmetric[7] == doctest::Approx(1.0));
  for (std::size_t i = 0; i < 15; ++i) CHECK(symmetric[i] == doctest::Approx(symmetric[14 - i]));
}

TEST_CASE("a Kaiser window with beta 0 is rectangular and narrows as beta grows") {
  const auto flat = weir::dsp::make_window(WindowSpec{WindowKind::kaiser, 0.0}, 33, WindowSymmetry::symmetric);
  for (const float v : flat) CHECK(v == doctest::Approx(1.0));
  const auto wide = weir::dsp::window_gains(weir::dsp::make_window(WindowSpec{WindowKind::kaiser, 4.0}, 1024));
  const auto narrow = weir::dsp::window_gains(weir::dsp::make_window(WindowSpec{WindowKind::kaiser, 12.0}, 1024));
  CHECK(narrow.coherent_gain < wide.coherent_gain);
  CHECK(narrow.enbw_bins > wide.enbw_bins);
}

TEST_CASE("window names parse, and an unknown one names the text and the choices") {
  CHECK(weir::dsp::parse_window("hann").value() == WindowKind::hann);
  CHECK(weir::dsp::parse_window("rect").value() == WindowKind::rectangular);
  CHECK(weir::dsp::parse_window("rectangular").value() == WindowKind::rectangular);
  CHECK(weir::dsp::parse_window("blackman-harris").value() == WindowKind::blackman_harris);
  CHECK(weir::dsp::parse_window("flattop").value() == WindowKind::flattop);
  const auto bad = weir::dsp::parse_window("hanning");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().what.find("'hanning'") != std::string::npos);
  CHECK(bad.error().what.find("blackman-harris") != std::string::npos);
  CHECK(bad.error().what.find("flattop") != std::string::npos);
}

}  // TEST_SUITE
