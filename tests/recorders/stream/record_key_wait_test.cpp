// The first file waits for keys that are still empty (declared by a part that writes them a moment
// later) to take their first value, so an array or text value does not close it at once: by a real
// `weir record`, read back with h5py. The wait never costs a block: it ends once a quarter of a
// recorded channel's ring is unread, and every block is in the file.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "harness.hpp"
#include "live_arena.hpp"
#include "weir/core/kv_store.hpp"

using namespace weir;
using namespace weir::test;
using namespace std::chrono_literals;

TEST_SUITE("recorders.stream.key_wait") {

TEST_CASE("an array a part writes into its declared key after the recorder starts is logged in the first file" *
          doctest::timeout(60)) {
  ScratchArena scratch("reckeywait");
  TempDir dir;
  const acq::SimOptions sim = sim_options({"adc0"}, 1000, 200, 100'000);
  make_channels(scratch.arena(), sim);
  core::KvStore kv(scratch.arena());
  core::KeyHandle handle{};
  REQUIRE(kv.resolve("k.spectrum", handle, true) == core::KvStatus::ok);  // declared, still empty
  REQUIRE(kv.set_f64("k.rate", 5.0) == core::KvStatus::ok);
  Program recorder = Program::start(record_argv(
      scratch.name(), {"--channels", "adc0", "--keys", "k.*", "--out", dir.str(), "--flush-ms", "50", "--key-wait-ms", "30000"}));
  // Registered (its rows named), while the first file waits for k.spectrum's first value.
  REQUIRE_MESSAGE(eventually([&] { return recorder_rows(scratch.arena(), recorder.pid()) == 1; }),
                  "the recorder never named its reader");
  CHECK(h5_files(dir.path()).empty());
  const std::vector<std::uint32_t> counts{3, 1, 4, 1, 5};
  REQUIRE(kv.set_array(handle, core::ArrayShape{core::Dtype::u32, 1, {5, 0}}, std::as_bytes(std::span(counts))) ==
          core::KvStatus::ok);
  REQUIRE_MESSAGE(eventually([&] { return h5_files(dir.path()).size() == 1; }), "no file after the key's first value");
  SimWriter writer(scratch.arena(), sim);
  const acq::SimReport& wrote = writer.finish();
  REQUIRE(eventually([&] { return recorder_read_up(scratch.arena(), "adc0", recorder.pid()); }));
  stop_cleanly(recorder);
  const auto files = h5_files(dir.path());
  REQUIRE(files.size() == 1);  // no second file for the array
  const Facts f = inspect(files[0]);
  INFO(f.exit.out << f.exit.err);
  REQUIRE(f.ok());
  CHECK(f.num("adc0", "blocks") == wrote.blocks_published);
  const std::string script =
      "import sys, h5py, numpy as np\n"
      "k = h5py.File(sys.argv[1], 'r')['entry/keys']\n"
      "v = k['k.spectrum/value']\n"
      "assert v.dtype == np.uint32 and v.shape == (1, 5), (v.dtype, v.shape)\n"
      "assert list(v[0]) == [3, 1, 4, 1, 5], v[0]\n"
      "assert list(k['k.rate/value'][:]) == [5.0]\n"
      "print('ok first file')\n";
  const Exit checked = run_program({WEIR_PYTHON, "-c", script, files[0]});
  INFO(checked.out << checked.err);
  CHECK(checked.code == 0);
  CHECK(contains(checked.out, "ok first file"));
}

TEST_CASE("a key that stays empty holds the first file back no longer than a quarter of the ring, and no block is lost" *
          doctest::timeout(60)) {
  ScratchArena scratch("reckeyring");
  TempDir dir;
  constexpr std::uint32_t kRing = 64;
  const acq::SimOptions sim = sim_options({"adc0"}, 1000, 300, 100'000);  // 100 blocks a second
  make_channels(scratch.arena(), sim, kRing);
  core::KvStore kv(scratch.arena());
  core::KeyHandle handle{};
  REQUIRE(kv.resolve("k.never", handle, true) == core::KvStatus::ok);  // declared, never written
  Program recorder = Program::start(record_argv(
      scratch.name(), {"--channels", "adc0", "--keys", "k.*", "--out", dir.str(), "--flush-ms", "50", "--key-wait-ms", "30000"}));
  REQUIRE_MESSAGE(eventually([&] { return recorder_rows(scratch.arena(), recorder.pid()) == 1; }),
                  "the recorder never named its reader");
  SimWriter writer(scratch.arena(), sim);
  // A quarter of the ring is 16 blocks, 0.16 s of writing: the file opens long before the 30 s.
  REQUIRE_MESSAGE(eventually([&] { return h5_files(dir.path()).size() == 1; }, 10'000ms),
                  "the first file waited past a quarter of the ring");
  const acq::SimReport& wrote = writer.finish();
  CHECK(wrote.blocks_dropped == 0);  // the writer never found the ring full
  REQUIRE(eventually([&] { return recorder_read_up(scratch.arena(), "adc0", recorder.pid()); }));
  recorder.signal(SIGTERM);
  const Exit done = recorder.wait();
  INFO(done.out << done.err);
  REQUIRE(done.code == 0);
  CHECK(contains(done.err, "1 key(s) still empty when the first file opened (k.never"));
  const auto files = h5_files(dir.path());
  REQUIRE(files.size() == 1);
  const Facts f = inspect(files[0]);
  REQUIRE(f.ok());
  CHECK(f.num("adc0", "blocks") == wrote.blocks_published);
  CHECK(f.num("adc0", "gap_blocks") == 0);
}

}  // TEST_SUITE
