// An event channel (core/event_record.hpp) recorded by a real `weir record`: besides its NXdata,
// the file has an NXevent_data a facility's tools read (event_time_zero, event_index,
// event_time_offset, event_id, pulse_height), every event of every recorded block exactly, a gap
// in the blocks a gaps row (pulses lost, counted), and the NXdata's time axis each event's time.
#include <doctest/doctest.h>

#include <signal.h>

#include <cstring>

#include "harness.hpp"
#include "ledger_check.hpp"
#include "live_arena.hpp"
#include "weir/core/event_record.hpp"

using namespace weir;
using namespace weir::test;

namespace {

constexpr std::uint32_t kMaxEvents = 8;

double field_value(std::uint64_t sequence, std::uint32_t event, core::EventField f) {
  switch (f) {
    case core::EventField::time_offset_ns: return 1000.0 * (event + 1) + static_cast<double>(sequence % 7);
    case core::EventField::height: return static_cast<double>(sequence) + event / 8.0;
    case core::EventField::id: return event % 3;
    case core::EventField::flags: return event == 2 ? core::kEventFlagPileup : 0;
  }
  return 0;
}

// Block s holds s % 5 events (some none), fields as field_value says; check_events.py expects the same.
void publish(core::ChannelWriter& w, std::uint64_t blocks) {
  for (std::uint64_t b = 0; b < blocks; ++b) {
    std::span<std::byte> slot;
    REQUIRE(w.claim(slot) == core::ClaimStatus::ok);
    const std::uint64_t s = w.next_sequence();
    const auto events = static_cast<std::uint32_t>(s % 5);
    for (std::uint32_t e = 0; e < events; ++e)
      for (std::uint32_t f = 0; f < core::kEventFields; ++f) {
        const double v = field_value(s, e, static_cast<core::EventField>(f));
        std::memcpy(slot.data() + (std::size_t{e} * core::kEventFields + f) * sizeof v, &v, sizeof v);
      }
    const std::uint64_t stamp = 1'700'000'000'000'000'000ULL + s * 1'000'000;
    w.publish(events * core::kEventFields, stamp, stamp);
  }
}

}  // namespace

TEST_SUITE("recorders.stream.events") {

TEST_CASE("an event channel is recorded as NXevent_data too: every event of every block exactly, lost blocks a "
          "gaps row" *
          doctest::timeout(60)) {
  ScratchArena scratch("recev");
  TempDir dir;
  core::ChannelSpec spec;
  spec.name = "det0.events";
  spec.dtype = core::Dtype::f64;
  spec.rate_hz = 1e5;
  spec.units = "V";
  spec.frame = core::event_frame(kMaxEvents);
  spec.samples_per_block = kMaxEvents * core::kEventFields;
  spec.ring_blocks = 64;
  spec.wait_timeout_ns = 5'000'000'000;
  REQUIRE(core::create_channel(scratch.arena(), spec));
  Program recorder = Program::start(
      record_argv(scratch.name(), {"--channels", "det0.events", "--out", dir.str(), "--flush-ms", "10"}));
  REQUIRE(wait_for_recorder(scratch.arena(), recorder, 1, dir.path()));
  auto writer = core::ChannelWriter::open(scratch.arena(), "det0.events");
  REQUIRE(writer);
  publish(*writer, 30);
  writer->skip(5, core::GapReason::source_loss);
  publish(*writer, 40);
  REQUIRE(eventually([&] { return recorder_blocks_read(scratch.arena(), "det0.events", recorder.pid()) >= 70; }));
  stop_cleanly(recorder);

  const auto files = h5_files(dir.path());
  REQUIRE(files.size() == 1);
  const std::vector<Facts> facts = inspect_all(files);  // the NXdata's tables and time axis
  INFO(facts[0].exit.out << facts[0].exit.err);
  CHECK(facts[0].ok());
  CHECK(facts[0].num("det0.events", "blocks") == 70);
  const Exit axes = run_program({WEIR_PYTHON, std::string(WEIR_RECORDER_SCRIPTS) + "/check_recording.py", "axes", files[0]});
  INFO(axes.out << axes.err);
  CHECK(axes.code == 0);
  const Exit checked = run_program(
      {WEIR_PYTHON, std::string(WEIR_RECORDER_SCRIPTS) + "/check_events.py", files[0], "det0.events"});
  INFO(checked.out << checked.err);
  CHECK(checked.code == 0);
  // 70 blocks recorded (0..29, 35..74), 5 lost: events s % 5 per block.
  std::uint64_t events = 0;
  for (std::uint64_t s = 0; s < 75; ++s)
    if (s < 30 || s >= 35) events += s % 5;
  CHECK(contains(checked.out, "ok events pulses 70 events " + std::to_string(events) + " lost_pulses 5 source_loss"));
}

}  // TEST_SUITE
