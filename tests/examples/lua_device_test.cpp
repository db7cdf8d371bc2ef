// The lua driver example (examples/pipelines/lua_device.lua with its thermometer.lua) runs under
// `weir run`: the driver, the stats shard and the recorder start, nothing is lost, and h5py reads
// the thermometer's readings and keys back from the recording.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "run_weir.hpp"
#include "scratch_dir.hpp"

using weir::test::contains;
using weir::test::read_file;
using weir::test::run_weir;

namespace {

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (std::size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size()) text.replace(at, from.size(), to);
}

// Runs python3 (Debian's, with h5py) on `script` with `arg`; exit code and output.
weir::test::RunResult python(const weir::test::ScratchDir& dir, const std::string& script, const std::string& arg) {
  std::ofstream(dir.file("check.py")) << script;
  const std::string out = dir.file("check.txt");
  weir::test::RunResult r;
  r.exit_code = WEXITSTATUS(std::system(("/usr/bin/python3 " + dir.file("check.py") + " " + arg + " >" + out + " 2>&1").c_str()));
  r.out = read_file(out);
  return r;
}

}  // namespace

TEST_SUITE("examples.pipelines") {

TEST_CASE("the lua device pipeline records a thermometer read by a Lua function") {
  weir::test::ScratchDir dir("luadev");
  if (python(dir, "import h5py\n", "").exit_code != 0) {
    MESSAGE("skipped: /usr/bin/python3 has no h5py (Debian: python3-h5py)");
    return;
  }
  // The example with its arena renamed and its recordings sent to the scratch folder; the script
  // beside it, as the pipeline names it relative to its own folder.
  std::string text = read_file(WEIR_SOURCE_DIR "/examples/pipelines/lua_device.lua");
  REQUIRE(contains(text, "name = \"luadev\""));
  REQUIRE(contains(text, "out = \"runs/\""));
  const std::string arena = "luadev" + std::to_string(::getpid());
  replace_all(text, "name = \"luadev\"", "name = \"" + arena + "\"");
  replace_all(text, "out = \"runs/\"", "out = \"" + dir.file("runs") + "/\"");
  std::ofstream(dir.file("lua_device.lua")) << text;
  std::ofstream(dir.file("thermometer.lua")) << read_file(WEIR_SOURCE_DIR "/examples/pipelines/thermometer.lua");

  const auto check = run_weir({"check", dir.file("lua_device.lua")});
  REQUIRE_MESSAGE(check.exit_code == 0, std::string(check.out + check.err));
  CHECK(contains(check.out, "driver \"thermo\" (lua)"));

  const auto r = run_weir({"run", dir.file("lua_device.lua"), "--duration", "3", "--status-every", "0"});
  CHECK_MESSAGE(r.exit_code == 0, std::string(r.out + r.err));
  CHECK_FALSE(contains(r.out, "GIVING UP"));
  CHECK_MESSAGE((contains(r.out, "lost 0 block(s) of ") && contains(r.out, "disk errors 0, unaccounted 0, duplicated 0), dropped at source 0, errors 0")), r.out);
  CHECK_MESSAGE(contains(r.out, "0 errors: 0 Lua errors"), r.out);

  // Readings: 290 K and warming 0.5 K/s, +-10 mK; keys: the PT100's resistance at that temperature,
  // the status text, and no errors.
  const auto h5 = python(dir, R"(import glob, sys, h5py, numpy
files = sorted(glob.glob(sys.argv[1] + '/**/*.h5', recursive=True))
assert files, 'no HDF5 file'
temps, ohms, status, errors = [], [], [], []
for name in files:
    with h5py.File(name, 'r') as f:
        g = f['entry/temp']  # format 2: a row per block; block_offset/block_samples say where its samples are
        flat = g['data'][...].reshape(-1)
        temps += [v for o, n in zip(g['block_offset'][:], g['block_samples'][:]) for v in flat[o:o + n]]
        assert len(f['entry/temp/gaps']) == 0, name + ': gaps'
        assert f['entry/temp/data'].attrs.get('units') in (b'K', 'K', None)
        keys = f['entry/keys']
        if 'thermo.resistance' in keys: ohms += list(keys['thermo.resistance/value'][:])
        if 'thermo.status' in keys: status += [s.decode() if isinstance(s, bytes) else s for s in keys['thermo.status/value'][:]]
        if 'thermo.errors' in keys: errors += list(keys['thermo.errors/value'][:])
assert len(temps) >= 5, 'only %d readings' % len(temps)
t = numpy.array(temps)
assert numpy.all((t > 289.98) & (t < 292.0)), t
assert numpy.all(numpy.diff(t) > -0.03), 'not warming: %s' % t
assert ohms and all(106.0 < r < 107.5 for r in ohms if r == r), ohms
assert status and set(status) == {'cold'}, status
assert errors and all(e == 0 for e in errors if e == e), errors
print('%d readings from %.3f to %.3f K in %d file(s)' % (len(t), t[0], t[-1], len(files)))
)",
                         dir.file("runs"));
  CHECK_MESSAGE(h5.exit_code == 0, h5.out);
  MESSAGE(h5.out);
  std::system(("rm -f /dev/shm/weir." + arena).c_str());
}

}  // TEST_SUITE
