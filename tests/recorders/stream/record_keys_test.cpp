// Keys as NXlog (format 1.6) by a real `weir record`, read back with h5py: `value` in the key's own
// number type (a u64 stays uint64, exact past 2^53), `value@units` from the key's KEY_units text
// key, and a key whose number type changes mid-run logged whole in a new file of its new type.
#include <doctest/doctest.h>

#include <signal.h>

#include <chrono>
#include <cstdint>
#include <thread>

#include "harness.hpp"
#include "live_arena.hpp"
#include "weir/core/kv_store.hpp"

using namespace weir;
using namespace weir::test;
using namespace std::chrono_literals;

TEST_SUITE("recorders.stream.keys") {

TEST_CASE("keys are logged in their own number type with their units; a new number type gets a new file" *
          doctest::timeout(60)) {
  ScratchArena scratch("reckeys");
  TempDir dir;
  const acq::SimOptions sim = sim_options({"adc0"}, 1000, 0, 100'000);
  make_channels(scratch.arena(), sim);
  core::KvStore kv(scratch.arena());
  constexpr std::uint64_t kBig = (std::uint64_t{1} << 53) + 1;  // not a double
  REQUIRE(kv.set_u64("k.count", kBig) == core::KvStatus::ok);
  REQUIRE(kv.set_text("k.count_units", "counts") == core::KvStatus::ok);
  REQUIRE(kv.set_i64("k.offset", -5) == core::KvStatus::ok);
  REQUIRE(kv.set_f64("k.temp", 21.5) == core::KvStatus::ok);
  REQUIRE(kv.set_text("k.temp_units", "K") == core::KvStatus::ok);
  Program recorder =
      Program::start(record_argv(scratch.name(), {"--channels", "adc0", "--keys", "k.*", "--out", dir.str(), "--flush-ms", "50"}));
  SimWriter writer(scratch.arena(), sim);
  REQUIRE(wait_for_recorder(scratch.arena(), recorder, 1, dir.path()));
  std::this_thread::sleep_for(300ms);
  REQUIRE(kv.set_u64("k.count", kBig + 2) == core::KvStatus::ok);
  REQUIRE(kv.set_f64("k.temp", 22.25) == core::KvStatus::ok);
  std::this_thread::sleep_for(300ms);
  REQUIRE(kv.set_f64("k.count", 7.0) == core::KvStatus::ok);  // an integral double: the u64 log holds it
  REQUIRE(kv.set_i64("k.offset", 3) == core::KvStatus::ok);
  std::this_thread::sleep_for(300ms);
  REQUIRE(kv.set_f64("k.offset", 0.5) == core::KvStatus::ok);  // no i64 holds it: a new file of f64
  REQUIRE(eventually([&] { return h5_files(dir.path()).size() >= 2; }));
  std::this_thread::sleep_for(300ms);
  stop_cleanly(recorder);
  const auto files = h5_files(dir.path());
  REQUIRE(files.size() == 2);
  const std::string script =
      "import sys, h5py, numpy as np\n"
      "a = h5py.File(sys.argv[1], 'r')['entry/keys']\n"
      "c = a['k.count']\n"
      "assert c.attrs['NX_class'] == 'NXlog', dict(c.attrs)\n"
      "v = c['value']\n"
      "assert v.dtype == np.uint64, v.dtype\n"
      "assert [int(x) for x in v[:]] == [2**53 + 1, 2**53 + 3, 7], v[:]\n"
      "assert v.attrs['units'] == 'counts', dict(v.attrs)\n"
      "assert c['time'].dtype == np.float64 and c['time'].shape == (3,)\n"
      "t = a['k.temp/value']\n"
      "assert t.dtype == np.float64 and list(t[:]) == [21.5, 22.25], t[:]\n"
      "assert t.attrs['units'] == 'K', dict(t.attrs)\n"
      "o = a['k.offset/value']\n"
      "assert o.dtype == np.int64 and list(o[:]) == [-5, 3], o[:]\n"
      "assert 'units' not in o.attrs, dict(o.attrs)\n"
      "b = h5py.File(sys.argv[2], 'r')['entry/keys']\n"
      "w = b['k.offset/value']\n"
      "assert w.dtype == np.float64 and list(w[:]) == [0.5], w[:]\n"
      "assert b['k.count/value'].dtype == np.float64 and list(b['k.count/value'][:]) == [7.0]\n"
      "print('ok keys')\n";
  const Exit checked = run_program({WEIR_PYTHON, "-c", script, files[0], files[1]});
  INFO(checked.out << checked.err);
  CHECK(checked.code == 0);
  CHECK(contains(checked.out, "ok keys"));
}

}  // TEST_SUITE
