// The UDP digitizer example (examples/pipelines/udp_digitizer.lua) runs under `weir run` fed by
// `weir udpgen` on loopback: the driver, the fft and stats shards and the recorder start, nothing is
// lost, and h5py finds every sample sent (the generator's ramp, each in place), the spectra, and the
// channel's clock said to be the packets'.
#include <doctest/doctest.h>

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <string>

#include "background_weir.hpp"
#include "json.hpp"
#include "run_weir.hpp"
#include "scratch_dir.hpp"

using weir::test::contains;
using weir::test::read_file;
using weir::test::run_weir;

namespace {

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (std::size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size()) text.replace(at, from.size(), to);
}

weir::test::RunResult python(const weir::test::ScratchDir& dir, const std::string& script, const std::string& args) {
  std::ofstream(dir.file("check.py")) << script;
  const std::string out = dir.file("check.txt");
  weir::test::RunResult r;
  r.exit_code = WEXITSTATUS(std::system(("/usr/bin/python3 " + dir.file("check.py") + " " + args + " >" + out + " 2>&1").c_str()));
  r.out = read_file(out);
  return r;
}

// A u64 key of the arena as `weir get` prints it; 0 when missing.
std::uint64_t get_u64(const std::string& arena, const std::string& key) {
  const auto r = run_weir({"get", arena, key});
  if (r.exit_code != 0) return 0;
  try {
    return std::stoull(r.out);
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace

TEST_SUITE("examples.pipelines") {

TEST_CASE("the udp digitizer pipeline records what udpgen sends, with spectra and the packet clock" *
          doctest::timeout(120)) {
  weir::test::ScratchDir dir("udpdig");
  if (python(dir, "import h5py\n", "").exit_code != 0) {
    MESSAGE("skipped: /usr/bin/python3 has no h5py (Debian: python3-h5py)");
    return;
  }
  // The example with its arena renamed, its recordings in the scratch folder, and port 0 (the
  // kernel picks a free one, published in digitizer.port) for the fixed 5000.
  std::string text = read_file(WEIR_SOURCE_DIR "/examples/pipelines/udp_digitizer.lua");
  REQUIRE(contains(text, "name = \"digitizer\", slots"));
  REQUIRE(contains(text, "port = 5000"));
  REQUIRE(contains(text, "out = \"runs/\""));
  const std::string arena = "udpdig" + std::to_string(::getpid());
  replace_all(text, "arena { name = \"digitizer\"", "arena { name = \"" + arena + "\"");
  replace_all(text, "port = 5000", "port = 0");
  replace_all(text, "out = \"runs/\"", "out = \"" + dir.file("runs") + "/\"");
  std::ofstream(dir.file("udp_digitizer.lua")) << text;

  const auto check = run_weir({"check", dir.file("udp_digitizer.lua")});
  REQUIRE_MESSAGE(check.exit_code == 0, std::string(check.out + check.err));
  CHECK(contains(check.out, "driver \"digitizer\" (udp)"));

  weir::test::BackgroundWeir run({"run", dir.file("udp_digitizer.lua"), "--duration", "60", "--status-every", "0"});
  std::uint64_t port = 0;
  REQUIRE_MESSAGE(weir::test::eventually([&] { return (port = get_u64(arena, "digitizer.port")) != 0; },
                                         std::chrono::seconds(20)),
                  run.output());
  // The shards and the recorder attach to the channel before anything is sent.
  REQUIRE(weir::test::eventually([&] { return contains(run_weir({"ls", arena}).out, "record"); },
                                 std::chrono::seconds(20)));

  // Half a second of the board: 1220 packets of 4096 samples, sample-count timestamps.
  const auto sent = run_weir({"udpgen", "--port", std::to_string(port), "--rate", "1e7", "--samples", "4096",
                              "--seconds", "0.5", "--json"});
  REQUIRE_MESSAGE(sent.exit_code == 0, sent.err);
  const auto report = weir::test::parse_json(sent.out);
  REQUIRE(report.is_object());
  const auto samples = report["samples_sent"].get<std::uint64_t>();
  REQUIRE(samples == 1220 * 4096);
  REQUIRE(report["send_errors"].get<std::uint64_t>() == 0);
  CHECK_MESSAGE(weir::test::eventually([&] { return get_u64(arena, "digitizer.adc0.samples") == samples; },
                                       std::chrono::seconds(20)),
                run_weir({"keys", arena}).out);
  CHECK(get_u64(arena, "digitizer.adc0.lost") == 0);
  CHECK(get_u64(arena, "digitizer.accounting.kernel_drop") == 0);
  CHECK(contains(run_weir({"get", arena, "digitizer.adc0.clock"}).out, "packet: VITA 49"));

  run.signal(SIGINT);  // a clean stop: the recorder writes every block published before it
  CHECK(run.wait_exit(std::chrono::seconds(30)) == 0);
  const std::string out = run.output();
  CHECK_MESSAGE((contains(out, "lost 0 block(s) of ") && contains(out, "disk errors 0, unaccounted 0, duplicated 0), dropped at source 0, errors 0")), out);

  const auto h5 = python(dir, R"(import glob, sys, h5py, numpy
files = sorted(glob.glob(sys.argv[1] + '/**/*.h5', recursive=True))
assert files, 'no HDF5 file'
data, spectra, clocks, key_files = [], 0, set(), 0
for name in files:
    with h5py.File(name, 'r') as f:
        g = f['entry/adc0']
        d = g['data']  # format 2: a row per block; block_offset/block_samples say where its samples are
        flat = d[...].reshape(-1)
        data += [flat[o:o + n] for o, n in zip(g['block_offset'][:], g['block_samples'][:])]
        if len(g['block_sequence']): clocks.add(d.attrs['clock'])  # empty until a file's first block
        assert len(f['entry/adc0/gaps']) == 0, name + ': gaps'
        spectra += f['entry/adc0.psd/data'].shape[0]
        # The recorder starts before the driver that makes the keys: the file open then has none.
        if 'keys' in f['entry']:
            keys = f['entry/keys']
            assert 'digitizer.adc0.packets' in keys, sorted(keys)
            key_files += 1
assert key_files >= 1, 'no file logs the digitizer keys'
x = numpy.concatenate(data).astype(numpy.int64)
want = int(sys.argv[2])
assert len(x) == want, '%d samples recorded, %d sent' % (len(x), want)
# udpgen's ramp for stream 1 (udpgen_sample): sample i is (i + 1000) mod 30000, every one in place.
bad = numpy.nonzero(x != (numpy.arange(len(x)) + 1000) % 30000)[0]
assert len(bad) == 0, 'samples out of place from index %d' % bad[0]
assert clocks == {'source'}, clocks
assert spectra >= 1, 'no spectra'
print('%d samples, %d spectra, clock %s, in %d file(s)' % (len(x), spectra, clocks, len(files)))
)",
                         dir.file("runs") + " " + std::to_string(samples));
  CHECK_MESSAGE(h5.exit_code == 0, h5.out);
  MESSAGE(h5.out);
  std::system(("rm -f /dev/shm/weir." + arena).c_str());
}

}  // TEST_SUITE
