// Format 2.0's time axes read back as a generic NeXus reader reads them (nexus_times.py: @signal,
// @axes, @AXISNAME_indices and the axes' lengths alone): after three injected gaps, a short block
// and a stalled writer, every sample's time from the axes is its true acquisition time, and the
// axes cost at most 1 % of the file for 4-byte samples in 1024-sample blocks.
#include <doctest/doctest.h>

#include <signal.h>

#include <cstring>
#include <fstream>

#include "harness.hpp"
#include "live_arena.hpp"
#include "weir/core/clock.hpp"

using namespace weir;
using namespace weir::test;

namespace {

constexpr std::uint32_t kBlock = 1024;
constexpr std::uint32_t kRing = 64;
constexpr double kRate = 100'000;

// Writes blocks whose samples hold their stream index (f32, exact below 2^24), each stamped at its
// first sample's true time, and notes (first index, stamp) of each in the truth file.
class TruthWriter {
 public:
  TruthWriter(core::ChannelWriter& w, const std::string& truth) : w_(w), truth_(truth) {}

  void publish(std::uint64_t blocks, std::uint32_t samples = kBlock) {
    for (std::uint64_t b = 0; b < blocks; ++b) {
      std::span<std::byte> slot;
      REQUIRE(w_.claim(slot) == core::ClaimStatus::ok);
      for (std::uint32_t s = 0; s < samples; ++s) {
        const auto value = static_cast<float>(index_ + s);
        std::memcpy(slot.data() + std::size_t{s} * sizeof value, &value, sizeof value);
      }
      truth_ << index_ << ' ' << stamp_ns() << '\n';
      w_.publish(samples, stamp_ns(), stamp_ns());
      index_ += samples;
    }
  }
  /// A gap: `blocks` blocks acquired and lost (their samples' times pass).
  void skip(std::uint64_t blocks, core::GapReason reason) {
    w_.skip(blocks, reason);
    index_ += blocks * kBlock;
  }
  /// The writer stalls: the next sample is taken `ns` later than the rate says.
  void stall(std::uint64_t ns) { pause_ns_ += ns; }

 private:
  std::uint64_t stamp_ns() const {
    return t0_ns_ + pause_ns_ + static_cast<std::uint64_t>(static_cast<double>(index_) * 1e9 / kRate);
  }
  core::ChannelWriter& w_;
  std::ofstream truth_;
  std::uint64_t index_ = 0;
  std::uint64_t pause_ns_ = 0;
  std::uint64_t t0_ns_ = core::realtime_ns();
};

}  // namespace

TEST_SUITE("recorders.stream.time_axis") {

TEST_CASE("after three gaps, a short block and a stalled writer, every sample's time from the NeXus axes alone "
          "is its true acquisition time, at <= 1 % of the file" *
          doctest::timeout(60)) {
  ScratchArena scratch("rectime");
  TempDir dir;
  const acq::SimOptions sim = sim_options({"adc0"}, kBlock, 0, kRate);
  make_channels(scratch.arena(), sim, kRing);
  Program recorder = Program::start(record_argv(scratch.name(), {"--channels", "adc0", "--out", dir.str(), "--flush-ms", "20"}));
  REQUIRE(wait_for_recorder(scratch.arena(), recorder, 1, dir.path()));
  auto writer = core::ChannelWriter::open(scratch.arena(), "adc0");
  REQUIRE(writer);
  const auto read_up = [&] { return eventually([&] { return recorder_read_up(scratch.arena(), "adc0", recorder.pid()); }); };
  const std::string truth = (dir.path() / "truth.txt").string();
  {
    TruthWriter w(*writer, truth);
    const auto paced = [&](std::uint64_t blocks, std::uint32_t samples = kBlock) {
      for (std::uint64_t done = 0; done < blocks; done += 32) {
        w.publish(std::min<std::uint64_t>(32, blocks - done), samples);
        REQUIRE(read_up());
      }
    };
    paced(100);
    w.skip(5, core::GapReason::source_loss);  // gap 1
    paced(60);
    w.skip(1, core::GapReason::kernel_drop);  // gap 2
    paced(1, 300);                            // a short block
    paced(40);
    w.stall(250'000'000);                     // the writer stalls a quarter second: no block lost
    paced(40);
    w.skip(4 * kRing, core::GapReason::late);  // gap 3, longer than the ring
    paced(100);
  }
  stop_cleanly(recorder);

  const auto files = h5_files(dir.path());
  REQUIRE(files.size() == 1);
  const Exit checked = run_program({WEIR_PYTHON, std::string(WEIR_RECORDER_SCRIPTS) + "/nexus_times.py", files[0], "adc0",
                                    truth, "100000"});
  INFO(checked.out << checked.err);
  CHECK(checked.code == 0);
  CHECK(contains(checked.out, "ok times " + std::to_string(340 * kBlock + 300) + " samples"));
  CHECK(contains(checked.out, "within one period: 100.0000 %"));
  // The axes' share: 8 bytes a block of 4096 bytes, 0.2 %, plus the chunk index.
  const auto at = checked.out.find("ok size time_axes ");
  REQUIRE(at != std::string::npos);
  const auto open = checked.out.find('(', at);
  const double percent = std::stod(checked.out.substr(open + 1));
  MESSAGE("time axes: " << percent << " % of the file");
  CHECK(percent <= 1.0);
}

}  // TEST_SUITE
