// The recorder's start and its stop as seen from outside: a disk that fails before the first file
// (full: exit 3, faulty: exit 4, as when it fails later), and a log no one reads any more (the
// reader of stdout and stderr gone, as when `weir run` is killed) that must not kill the recorder.
// Mounts need root and loop devices; where they are not allowed each case says why and is skipped.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <thread>

#include "harness.hpp"
#include "ledger_check.hpp"
#include "live_arena.hpp"
#include "mount.hpp"

using namespace weir;
using namespace weir::test;

namespace {

// Fills the filesystem of `dir` with one file until it takes no more (ENOSPC).
bool fill(const std::filesystem::path& dir) {
  const int fd = ::open((dir / "filler").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  std::vector<char> chunk(1 << 16, 'x');
  int last = 0;
  for (;;) {
    const ssize_t n = ::write(fd, chunk.data(), chunk.size());
    if (n <= 0) {
      last = errno;
      break;
    }
  }
  ::close(fd);
  return last == ENOSPC;
}

}  // namespace

TEST_SUITE("recorders.stream.start") {

TEST_CASE("a recorder that starts below its free-space reserve exits 3, as a full disk while running does, with "
          "ENOSPC in the run record" *
          doctest::timeout(60)) {
  ScratchArena scratch("recstartlow");
  TempDir dir;
  make_channels(scratch.arena(), sim_options({"adc0"}, 64, 1));
  const std::string out = (dir.path() / "runs").string();
  const Exit done = run_program(record_argv(
      scratch.name(), {"--channels", "adc0", "--out", out, "--min-free-mb", "1000000000", "--run", "7", "--json"}));
  INFO(done.out << done.err);
  CHECK(done.exited);
  CHECK(done.code == 3);
  CHECK(contains(done.err, "disk full"));
  CHECK(contains(done.out, "\"fault\":\"disk_full\""));
  CHECK(h5_files(out).empty());
  const ledger::RunRecord r = run_record(out, scratch.name(), 7);
  REQUIRE(r.faults.size() == 1);
  CHECK(r.faults[0].reason == "disk_error");
  CHECK(r.faults[0].error_number == ENOSPC);
}

TEST_CASE("a recorder that starts on a full tmpfs exits 3" * doctest::timeout(60)) {
  ScratchArena scratch("recstartfull");
  TempDir dir;
  Mount small = Mount::tmpfs(dir.path() / "small", "size=1m");
  SKIP_UNLESS(small);
  REQUIRE(fill(dir.path() / "small"));
  make_channels(scratch.arena(), sim_options({"adc0"}, 64, 1));
  const std::string out = (dir.path() / "small" / "runs").string();
  const Exit done = run_program(record_argv(scratch.name(), {"--channels", "adc0", "--out", out}));
  INFO(done.out << done.err);
  CHECK(done.exited);
  CHECK(done.code == 3);
  CHECK(contains(done.err, out));
}

TEST_CASE("a recorder that starts on a shut-down XFS (EIO) exits 4" * doctest::timeout(120)) {
  ScratchArena scratch("recstarteio");
  TempDir dir;
  Mount xfs = Mount::xfs(dir.path() / "xfs", dir.path() / "xfs.img");
  SKIP_UNLESS(xfs);
  make_channels(scratch.arena(), sim_options({"adc0"}, 64, 1));
  const std::string existing = (dir.path() / "xfs" / "runs").string();
  std::filesystem::create_directories(existing);
  const Exit shutdown = run_program({"/usr/sbin/xfs_io", "-x", "-c", "shutdown", (dir.path() / "xfs").string()});
  REQUIRE_MESSAGE(shutdown.code == 0, shutdown.err);
  for (const std::string& out : {existing, (dir.path() / "xfs" / "new").string()}) {
    CAPTURE(out);
    const Exit done = run_program(record_argv(scratch.name(), {"--channels", "adc0", "--out", out, "--json"}));
    INFO(done.out << done.err);
    CHECK(done.exited);
    CHECK(done.code == 4);
    CHECK(contains(done.err, "Input/output error"));
  }
}

TEST_CASE("stdout and stderr a pipe whose reader is gone: the recorder's next notices do not kill it, SIGTERM "
          "stops it cleanly (exit 0) and its files close" *
          doctest::timeout(60)) {
  ScratchArena scratch("recpipe");
  TempDir dir;
  const acq::SimOptions sim = sim_options({"adc0"}, 1000, 0, 200'000);
  make_channels(scratch.arena(), sim);
  const std::string out = (dir.path() / "runs").string();
  int pipe_fds[2];
  REQUIRE(::pipe2(pipe_fds, O_CLOEXEC) == 0);
  const int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  SpawnOptions options;
  options.in = in;
  options.out = pipe_fds[1];
  options.err = pipe_fds[1];
  ChildProcess recorder(record_argv(scratch.name(), {"--channels", "adc0", "--out", out, "--flush-ms", "50"}), options);
  ::close(in);
  ::close(pipe_fds[1]);
  REQUIRE(recorder.valid());
  REQUIRE(eventually([&] { return recorder_rows(scratch.arena(), recorder.pid()) == 1 && !h5_files(out).empty(); }));
  ::close(pipe_fds[0]);  // the reader is gone
  SimWriter writer(scratch.arena(), sim);
  for (int i = 0; i < 3; ++i) {  // each rotation prints "recording to FILE": EPIPE, not SIGPIPE
    recorder.signal(SIGHUP);
    REQUIRE(eventually([&] { return h5_files(out).size() >= static_cast<std::size_t>(i + 2) || !recorder.running(); }));
  }
  REQUIRE(recorder.running());
  recorder.signal(SIGTERM);
  const ExitStatus done = recorder.wait(10s);
  writer.stop();
  CHECK(done.exited);
  CHECK(done.signal == 0);
  CHECK(done.code == 0);
  const std::vector<std::string> files = h5_files(out);
  const std::vector<Facts> facts = inspect_all(files);  // plain h5py: no SWMR mark left
  for (std::size_t i = 0; i < files.size(); ++i) {
    CAPTURE(files[i]);
    INFO(facts[i].exit.out << facts[i].exit.err);
    CHECK(facts[i].ok());
    CHECK(facts[i].root.at("stop_time") != "-");
  }
}

TEST_CASE("--missing-before names the reason of the row for blocks no file of the run holds (a supervisor's "
          "restart after the directory went with its files), and refuses any other reason" *
          doctest::timeout(60)) {
  for (const std::string reason : {"disk_error", "recorder_down"}) {
    CAPTURE(reason);
    ScratchArena scratch("recmissing");
    TempDir dir;
    constexpr std::uint64_t kEarly = 300, kLater = 50;
    make_channels(scratch.arena(), sim_options({"adc0"}, 256, kEarly), 64);
    SimWriter(scratch.arena(), sim_options({"adc0"}, 256, kEarly)).finish();  // no reader yet
    Program recorder = Program::start(
        record_argv(scratch.name(), {"--channels", "adc0", "--out", dir.str(), "--missing-before", reason}));
    REQUIRE(wait_for_recorder(scratch.arena(), recorder, 1, dir.path()));
    SimWriter(scratch.arena(), sim_options({"adc0"}, 256, kLater)).finish();
    REQUIRE(eventually([&] { return recorder_blocks_read(scratch.arena(), "adc0", recorder.pid()) >= kLater; }));
    recorder.signal(SIGTERM);
    const Exit done = recorder.wait();
    INFO(done.out << done.err);
    CHECK(done.code == 0);
    const ChannelLedger l = channel_ledger(inspect_all(h5_files(dir.path())), "adc0");
    check_tiles(l, 0, kEarly + kLater);
    CHECK(rows_of(l, "before_start").empty());
    const auto rows = rows_of(l, reason);
    REQUIRE(rows.size() == 1);
    CHECK(rows[0].sequence == 0);
    CHECK(rows[0].blocks == kEarly);
  }
  ScratchArena scratch("recmissbad");
  TempDir dir;
  make_channels(scratch.arena(), sim_options({"adc0"}, 64, 1));
  const Exit refused = run_program(
      record_argv(scratch.name(), {"--channels", "adc0", "--out", dir.str(), "--missing-before", "lapped"}));
  CHECK(refused.code == 2);
  CHECK(contains(refused.err, "--missing-before lapped"));
  CHECK(h5_files(dir.path()).empty());
}

TEST_CASE("a recorder stopped together with its writer takes every block the writer published before it ended, "
          "and one stopped while its writer runs on still stops promptly" *
          doctest::timeout(60)) {
  const acq::SimOptions sim = sim_options({"adc0"}, 1000, 0, 200'000);  // 200 blocks/s
  for (const bool writer_stops : {true, false}) {
    CAPTURE(writer_stops);
    ScratchArena scratch("recstopwith");
    TempDir dir;
    make_channels(scratch.arena(), sim);
    Program recorder =
        Program::start(record_argv(scratch.name(), {"--channels", "adc0", "--out", dir.str(), "--flush-ms", "50"}));
    REQUIRE(wait_for_recorder(scratch.arena(), recorder, 1, dir.path()));
    SimWriter writer(scratch.arena(), sim);
    REQUIRE(eventually([&] { return recorder_blocks_read(scratch.arena(), "adc0", recorder.pid()) >= 50; }));
    const auto asked = Clock::now();
    recorder.signal(SIGTERM);
    std::this_thread::sleep_for(150ms);  // the writer's own stop comes a little later (as after a supervisor died)
    if (writer_stops) writer.stop();
    const Exit done = recorder.wait(10s);
    const auto took = Clock::now() - asked;
    if (!writer_stops) writer.stop();
    INFO(done.out << done.err);
    CHECK(done.code == 0);
    CHECK(took < 2s);
    const ledger::RunRecord r = run_record(dir.path(), scratch.name(), 1);
    REQUIRE(r.find_channel("adc0") != nullptr);
    const std::uint64_t written = r.find_channel("adc0")->written;
    const ChannelLedger l = channel_ledger(inspect_all(h5_files(dir.path())), "adc0");
    check_tiles(l, 0, written);
    if (writer_stops) {
      std::uint64_t published = 0;
      for (const core::ChannelInfo& c : core::list_channels(scratch.arena()))
        if (c.name == "adc0") published = c.blocks_written;
      CHECK(written == published);  // nothing the writer published is outside the run
      CHECK(l.rows.empty());
    }
  }
}

TEST_CASE("a segment is made under a hidden name and takes its own only when whole: none is left behind by "
          "rotations, and one a killed recorder was making is removed at the next start (one of a live recorder "
          "is not)" *
          doctest::timeout(60)) {
  ScratchArena scratch("recmaking");
  TempDir dir;
  const acq::SimOptions sim = sim_options({"adc0"}, 1000, 0, 200'000);
  make_channels(scratch.arena(), sim);
  const std::string name = scratch.name() + "_run000001_0099.h5";
  // A dead pid: a child that has already been reaped.
  ChildProcess gone({"/bin/true"});
  REQUIRE(gone.wait(5s).exited);
  const std::filesystem::path stale = dir.path() / ("." + name + "." + std::to_string(gone.pid()) + ".making");
  const std::filesystem::path live = dir.path() / ("." + name + "." + std::to_string(::getpid()) + ".making");
  std::ofstream(stale) << "half a file";
  std::ofstream(live) << "a live recorder's";
  Program recorder = Program::start(record_argv(
      scratch.name(), {"--channels", "adc0", "--out", dir.str(), "--flush-ms", "50", "--rotate-s", "0.1"}));
  REQUIRE(wait_for_recorder(scratch.arena(), recorder, 1, dir.path()));
  SimWriter writer(scratch.arena(), sim);
  REQUIRE(eventually([&] { return h5_files(dir.path()).size() >= 5; }));
  recorder.signal(SIGTERM);
  const Exit done = recorder.wait();
  writer.stop();
  INFO(done.out << done.err);
  CHECK(done.code == 0);
  CHECK(!std::filesystem::exists(stale));
  CHECK(contains(done.err, stale.string()));
  CHECK(std::filesystem::exists(live));
  std::size_t making = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path()))
    making += contains(e.path().filename().string(), ".making") ? 1 : 0;
  CHECK(making == 1);  // the live one only
  const std::vector<std::string> files = h5_files(dir.path());
  const std::vector<Facts> facts = inspect_all(files);
  for (std::size_t i = 0; i < files.size(); ++i) {
    CAPTURE(files[i]);
    CHECK(facts[i].ok());
  }
  const ChannelLedger l = channel_ledger(facts, "adc0");
  const ledger::RunRecord r = run_record(dir.path(), scratch.name(), 1);
  REQUIRE(r.find_channel("adc0") != nullptr);
  check_tiles(l, 0, r.find_channel("adc0")->written);
}

}  // TEST_SUITE
