// Disk faults never crash and never lie: an XFS shut down under the recorder (EIO), a full disk
// (ENOSPC), the output directory deleted, the output mount detached, --require-mount. Each stops the
// recorder with its own exit status (3 a full disk, 4 a disk fault), a Fault with its errno in the run
// record where that can still be written, and a summary counting only the blocks in files still there.
// Mounts need root and loop devices; where they are not allowed each case says why and is skipped.
#include <doctest/doctest.h>

#include <signal.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "harness.hpp"
#include "mount.hpp"
#include "ledger_check.hpp"
#include "live_arena.hpp"

using namespace weir;
using namespace weir::test;

namespace {

Program start_recorder(const ScratchArena& scratch, const std::string& out, std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"--channels", "adc0", "--out", out, "--flush-ms", "50", "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  return Program::start(
      record_argv(scratch.name(), args),
      {"LSAN_OPTIONS=print_suppressions=0:suppressions=" + std::string(WEIR_RECORDER_SCRIPTS) + "/lsan_hdf5.supp"});
}

}  // namespace

TEST_SUITE("recorders.stream.fault") {

TEST_CASE("an XFS shut down under the recorder (EIO): exit 4, no crash, the fault in the summary, and every file "
          "closed before the fault opens after a remount" *
          doctest::timeout(120)) {
  ScratchArena scratch("receio");
  TempDir dir;
  Mount xfs = Mount::xfs(dir.path() / "xfs", dir.path() / "xfs.img");
  SKIP_UNLESS(xfs);
  const std::string out = (dir.path() / "xfs" / "runs").string();
  const acq::SimOptions sim = sim_options({"adc0"}, 1024, 0, 1'000'000);  // 4 MB/s
  make_channels(scratch.arena(), sim);
  Program recorder = start_recorder(scratch, out, {"--rotate-mb", "1"});
  REQUIRE(wait_for_recorder(scratch.arena(), recorder, 1, out));
  SimWriter writer(scratch.arena(), sim);
  REQUIRE(eventually([&] { return h5_files(out).size() >= 4; }, 20'000ms));
  const std::vector<std::string> closed_before = [&] {
    auto files = h5_files(out);
    files.pop_back();  // the open one
    return files;
  }();
  std::this_thread::sleep_for(500ms);  // their fsyncs, on the recorder's sync thread, are done
  const Exit shutdown = run_program({"/usr/sbin/xfs_io", "-x", "-c", "shutdown", (dir.path() / "xfs").string()});
  REQUIRE_MESSAGE(shutdown.code == 0, shutdown.err);
  const Exit done = recorder.wait(20s);
  writer.stop();
  INFO(done.out << done.err);
  CHECK(done.exited);  // not killed by a signal (SIGSEGV in HDF5's exit handler was the bug)
  CHECK(done.code == 4);
  CHECK(contains(done.err, "Input/output error"));
  CHECK(contains(done.out, "\"fault\":\"disk_fault\""));
  CHECK(contains(done.out, "\"errno\":5"));
  REQUIRE(xfs.remount());
  const std::vector<Facts> facts = inspect_all(closed_before);
  for (std::size_t i = 0; i < closed_before.size(); ++i) {
    CAPTURE(closed_before[i]);
    INFO(facts[i].exit.out << facts[i].exit.err);
    CHECK(facts[i].ok());
    CHECK(facts[i].root.at("stop_time") != "-");
    CHECK(facts[i].num("adc0", "blocks") > 0);
  }
  MESSAGE(closed_before.size() << " files closed before the shutdown survived it");
}

TEST_CASE("a full disk (ENOSPC): exit 3, a disk_error row, and the fault with its errno in the run record" *
          doctest::timeout(60)) {
  ScratchArena scratch("recnospc");
  TempDir dir;
  Mount small = Mount::tmpfs(dir.path() / "small", "size=3m");
  SKIP_UNLESS(small);
  const std::string out = (dir.path() / "small").string();
  const acq::SimOptions sim = sim_options({"adc0"}, 1024, 0, 400'000);
  make_channels(scratch.arena(), sim);
  Program recorder = start_recorder(scratch, out);
  REQUIRE(wait_for_recorder(scratch.arena(), recorder, 1, out));
  SimWriter writer(scratch.arena(), sim);
  const Exit done = recorder.wait(30s);
  writer.stop();
  INFO(done.out << done.err);
  CHECK(done.exited);
  CHECK(done.code == 3);
  CHECK(contains(done.out, "\"fault\":\"disk_full\""));
  const ledger::RunRecord r = run_record(out, scratch.name(), 1);
  REQUIRE(r.faults.size() == 1);
  CHECK(r.faults[0].reason == "disk_error");
  CHECK(r.faults[0].error_number == ENOSPC);
  const ChannelLedger l = channel_ledger(inspect_all(h5_files(out)), "adc0");
  REQUIRE(r.find_channel("adc0") != nullptr);
  check_tiles(l, 0, r.find_channel("adc0")->written);  // the disk_error row reaches the head the stop saw
  CHECK(rows_of(l, "disk_error").size() == 1);
}

TEST_CASE("the output directory deleted while recording: exit 4, and the summary counts no block in the gone "
          "files" *
          doctest::timeout(60)) {
  ScratchArena scratch("recrmrf");
  TempDir dir;
  const std::string out = (dir.path() / "runs").string();
  const acq::SimOptions sim = sim_options({"adc0"}, 1000, 0, 200'000);
  make_channels(scratch.arena(), sim);
  Program recorder = start_recorder(scratch, out);
  REQUIRE(wait_for_recorder(scratch.arena(), recorder, 1, out));
  SimWriter writer(scratch.arena(), sim);
  REQUIRE(eventually([&] { return recorder_blocks_read(scratch.arena(), "adc0", recorder.pid()) >= 50; }));
  std::filesystem::remove_all(out);
  const Exit done = recorder.wait(10s);
  writer.stop();
  INFO(done.out << done.err);
  CHECK(done.exited);
  CHECK(done.code == 4);
  CHECK(contains(done.err, out));
  CHECK(contains(done.out, "\"blocks\":0"));
  CHECK(!contains(done.out, "\"unreachable_blocks\":0"));
  CHECK(!std::filesystem::exists(out));  // nothing made again in its place
}

TEST_CASE("the output mount detached while recording: exit 4 and no file written onto the disk beneath" *
          doctest::timeout(60)) {
  ScratchArena scratch("reclazy");
  TempDir dir;
  Mount disk = Mount::tmpfs(dir.path() / "disk", "size=64m");
  SKIP_UNLESS(disk);
  const std::string out = (dir.path() / "disk").string();
  const acq::SimOptions sim = sim_options({"adc0"}, 1000, 0, 200'000);
  make_channels(scratch.arena(), sim);
  Program recorder = start_recorder(scratch, out, {"--rotate-s", "0.2"});
  REQUIRE(wait_for_recorder(scratch.arena(), recorder, 1, out));
  SimWriter writer(scratch.arena(), sim);
  REQUIRE(eventually([&] { return h5_files(out).size() >= 2; }));
  disk.unmount();  // lazily: the recorder's open file lives on, the path now names the disk beneath
  const Exit done = recorder.wait(10s);
  writer.stop();
  INFO(done.out << done.err);
  CHECK(done.exited);
  CHECK(done.code == 4);
  CHECK(contains(done.err, "another filesystem"));
  CHECK(h5_files(out).empty());  // nothing on the root disk
}

TEST_CASE("--require-mount refuses an --out on the root filesystem and takes one on a mounted disk") {
  ScratchArena scratch("recmount");
  TempDir dir;
  make_channels(scratch.arena(), sim_options({"adc0"}, 64, 1));
  const std::string root_out = (dir.path() / "on-root").string();  // /tmp: the root filesystem here
  const Exit refused =
      run_program(record_argv(scratch.name(), {"--channels", "adc0", "--out", root_out, "--require-mount"}));
  CHECK(refused.code == 4);
  CHECK(contains(refused.err, root_out));
  CHECK(contains(refused.err, "root filesystem"));
  CHECK(!std::filesystem::exists(root_out));
  Mount disk = Mount::tmpfs(dir.path() / "disk", "size=8m");
  SKIP_UNLESS(disk);
  const std::string out = (dir.path() / "disk").string();
  const Exit taken = run_program(
      record_argv(scratch.name(), {"--channels", "adc0", "--out", out, "--require-mount", "--duration", "0.2"}));
  INFO(taken.err);
  CHECK(taken.code == 0);
  CHECK(h5_files(out).size() == 1);
}

}  // TEST_SUITE
