#include <doctest/doctest.h>
#include <fftw3.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "scratch_dir.hpp"
#include "weir/dsp/real_fft.hpp"
#include "weir/dsp/wisdom.hpp"

namespace {

using weir::test::ScratchDir;

double plan_seconds(std::size_t n, const std::string& path, weir::dsp::WisdomReport& report) {
  const auto start = std::chrono::steady_clock::now();
  auto fft = weir::dsp::RealFft::create(n, weir::dsp::PlanEffort::measure, {true, path});
  const auto stop = std::chrono::steady_clock::now();
  REQUIRE(fft);
  report = fft->wisdom();
  return std::chrono::duration<double>(stop - start).count();
}

}  // namespace

TEST_SUITE("dsp.wisdom") {

TEST_CASE("planning writes a wisdom file that FFTW imports, and the next plan reuses it") {
  const ScratchDir dir("wisdom");
  const std::string path = dir.file("cache/weir/fftw3f.wisdom");  // the directories do not exist yet
  const std::size_t n = 2 * 3 * 5 * 7 * 11;                       // a size no other test plans
  fftwf_forget_wisdom();
  weir::dsp::WisdomReport first;
  const double fresh_s = plan_seconds(n, path, first);
  CHECK_FALSE(first.imported);
  CHECK(first.exported);
  CHECK(first.problem.empty());
  REQUIRE(std::filesystem::exists(path));
  CHECK(std::filesystem::file_size(path) > 0);
  const auto entries = std::distance(std::filesystem::directory_iterator(std::filesystem::path(path).parent_path()),
                                     std::filesystem::directory_iterator{});
  CHECK(entries == 1);  // the temporary file was renamed, not left behind

  fftwf_forget_wisdom();
  CHECK(fftwf_import_wisdom_from_filename(path.c_str()) != 0);

  fftwf_forget_wisdom();
  weir::dsp::WisdomReport second;
  const double wise_s = plan_seconds(n, path, second);
  CHECK(second.imported);
  MESSAGE("plan of " << n << " points: " << fresh_s * 1e3 << " ms fresh, " << wise_s * 1e3 << " ms with wisdom");
  WARN(wise_s < fresh_s / 2);  // timing on a shared machine: reported, not failed
}

TEST_CASE("a missing, foreign or unwritable wisdom file only means planning from scratch") {
  const ScratchDir dir("wisdom");
  CHECK_FALSE(weir::dsp::import_wisdom(dir.file("absent.wisdom")));

  const std::string garbage = dir.file("garbage.wisdom");
  std::filesystem::create_directories(std::filesystem::path(garbage).parent_path());
  std::ofstream(garbage) << "not fftw wisdom\n";
  CHECK_FALSE(weir::dsp::import_wisdom(garbage));
  auto from_garbage = weir::dsp::RealFft::create(64, weir::dsp::PlanEffort::estimate, {true, garbage});
  REQUIRE(from_garbage);
  CHECK_FALSE(from_garbage->wisdom().imported);

  auto unwritable = weir::dsp::RealFft::create(64, weir::dsp::PlanEffort::estimate, {true, "/proc/weir/x.wisdom"});
  REQUIRE(unwritable);
  CHECK_FALSE(unwritable->wisdom().exported);
  CHECK(unwritable->wisdom().problem.find("/proc/weir/x.wisdom") != std::string::npos);
  const auto saved = weir::dsp::export_wisdom("/proc/weir/x.wisdom");
  REQUIRE_FALSE(saved);
  CHECK(saved.error().what.find("/proc/weir") != std::string::npos);
}

TEST_CASE("the default wisdom path follows XDG_CACHE_HOME, then HOME") {
  const char* old_xdg = std::getenv("XDG_CACHE_HOME");
  const std::string saved_xdg = old_xdg != nullptr ? old_xdg : "";
  ::setenv("XDG_CACHE_HOME", "/var/cache/someone", 1);
  CHECK(weir::dsp::default_wisdom_path().value() == "/var/cache/someone/weir/fftw3f.wisdom");
  ::setenv("XDG_CACHE_HOME", "relative/ignored", 1);
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] != '\0')
    CHECK(weir::dsp::default_wisdom_path().value() == std::string(home) + "/.cache/weir/fftw3f.wisdom");
  if (old_xdg != nullptr)
    ::setenv("XDG_CACHE_HOME", saved_xdg.c_str(), 1);
  else
    ::unsetenv("XDG_CACHE_HOME");
}

TEST_CASE("allocation-free sizes are those with prime factors up to 13") {
  CHECK(weir::dsp::largest_prime_factor(1024) == 2);
  CHECK(weir::dsp::largest_prime_factor(2 * 3 * 5 * 7 * 11 * 13) == 13);
  CHECK(weir::dsp::largest_prime_factor(2 * 1031) == 1031);
  CHECK(weir::dsp::largest_prime_factor(1031) == 1031);
  CHECK(weir::dsp::is_allocation_free_size(1000));
  CHECK(weir::dsp::is_allocation_free_size(1U << 20));
  CHECK_FALSE(weir::dsp::is_allocation_free_size(2 * 17));
  CHECK(weir::dsp::next_allocation_free_size(2062) == 2080);
  CHECK(weir::dsp::next_allocation_free_size(1024) == 1024);
  CHECK(weir::dsp::next_allocation_free_size(1025) == 1040);  // 1026 = 2 * 3^3 * 19, 1028 = 4 * 257, ...
}

TEST_CASE("a real FFT computes the DFT of its input") {
  auto fft = weir::dsp::RealFft::create(8, weir::dsp::PlanEffort::estimate, {false, {}});
  REQUIRE(fft);
  const float x[8] = {1, 2, 3, 4, 0, 0, 0, 0};
  std::copy(std::begin(x), std::end(x), fft->input().begin());
  fft->execute();
  const auto out = fft->output();
  REQUIRE(out.size() == 5);
  CHECK(out[0].real() == doctest::Approx(10));
  CHECK(out[4].real() == doctest::Approx(1 - 2 + 3 - 4));
  // X[2] = sum x[n] e^{-j pi n / 2} = 1 - 3 + j(-2 + 4) = -2 + 2j
  CHECK(out[2].real() == doctest::Approx(-2));
  CHECK(out[2].imag() == doctest::Approx(2));
}

}  // TEST_SUITE
