// Disks that refuse: an --out that cannot be written is refused before anything starts; a disk
// that fills stops the recording with a clear error and a file that still opens, holding every
// block it says it has. Full and read-only disks are small tmpfs mounts (needs root; skipped
// with a message where mounting is not permitted).
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/mount.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "harness.hpp"
#include "live_arena.hpp"

using namespace weir;
using namespace weir::test;

namespace {

// A tmpfs mounted for one test and detached however the test ends.
class Mount {
 public:
  Mount(const std::filesystem::path& at, const char* options, unsigned long flags) : at_(at) {
    std::filesystem::create_directories(at);
    mounted_ = ::mount("tmpfs", at.c_str(), "tmpfs", flags, options) == 0;
    if (!mounted_) why_ = std::strerror(errno);
  }
  Mount(const Mount&) = delete;
  Mount& operator=(const Mount&) = delete;
  ~Mount() {
    if (mounted_) ::umount2(at_.c_str(), MNT_DETACH);
  }
  [[nodiscard]] bool mounted() const { return mounted_; }
  [[nodiscard]] const std::string& why() const { return why_; }

 private:
  std::filesystem::path at_;
  bool mounted_ = false;
  std::string why_;
};

}  // namespace

TEST_SUITE("recorders.stream.disk") {

TEST_CASE("an --out path through a regular file is refused before anything starts") {
  ScratchArena scratch("recbad");
  TempDir dir;
  make_channels(scratch.arena(), sim_options({"adc0"}, 64, 1));
  std::ofstream(dir.path() / "file") << "x";
  const std::string bad = (dir.path() / "file" / "sub").string();
  const Exit e = run_program(record_argv(scratch.name(), {"--channels", "adc0", "--out", bad}));
  CHECK(e.code == 1);
  CHECK(contains(e.err, bad));
  CHECK(contains(e.err, "Not a directory"));
  for (const core::ChannelInfo& c : core::list_channels(scratch.arena())) CHECK(c.consumers.empty());
}

TEST_CASE("a read-only --out is refused before anything starts, even for root") {
  ScratchArena scratch("recro");
  TempDir dir;
  make_channels(scratch.arena(), sim_options({"adc0"}, 64, 1));
  const Mount ro(dir.path() / "ro", "size=1m", MS_RDONLY);
  if (!ro.mounted()) {
    MESSAGE("skipped: cannot mount a read-only tmpfs here (" << ro.why() << ")");
    return;
  }
  const std::string out = (dir.path() / "ro").string();
  const Exit e = run_program(record_argv(scratch.name(), {"--channels", "adc0", "--out", out}));
  CHECK(e.code == 4);  // EROFS: a disk fault, at start as while running
  CHECK(contains(e.err, out));
  CHECK(contains(e.err, "Read-only file system"));
  for (const core::ChannelInfo& c : core::list_channels(scratch.arena())) CHECK(c.consumers.empty());
}

TEST_CASE("a full disk stops the recording with a clear error, a disk_error gap row and a file that opens" *
          doctest::timeout(60)) {
  for (const bool encoded : {false, true})  // encoded: chunks rewritten whole at every flush until full
  for (const bool reserve : {true, false}) {
    CAPTURE(encoded);
    CAPTURE(reserve);
    ScratchArena scratch("recfull");
    TempDir dir, exported;
    // Encoded, the reserve also holds the chunks being encoded (a MiB with two threads).
    const Mount small(dir.path() / "small", encoded ? "size=4m" : "size=2m", 0);
    if (!small.mounted()) {
      MESSAGE("skipped: cannot mount a small tmpfs here (" << small.why() << ")");
      return;
    }
    // Paced at 1.6 MB/s: the small disk fills after a second or two, many flushes in.
    const acq::SimOptions sim = sim_options({"adc0"}, 1024, 0, 400'000);
    make_channels(scratch.arena(), sim);
    const std::string out = (dir.path() / "small").string();
    // Without the reserve the recorder runs into ENOSPC itself: HDF5's writes fail.
    std::vector<std::string> args{"--channels", "adc0", "--out", out, "--flush-ms", "50"};
    if (!reserve) args.insert(args.end(), {"--min-free-mb", "0"});
    if (encoded) args.insert(args.end(), {"--codec", "shuffle+lz4", "--encode-threads", "2"});
    // A failed HDF5 chunk write leaks inside HDF5 (lsan_hdf5.supp says which): a sanitizer build
    // of the recorder is told to let exactly that pass.
    Program recorder = Program::start(
        record_argv(scratch.name(), args),
        {"LSAN_OPTIONS=print_suppressions=0:suppressions=" + std::string(WEIR_RECORDER_SCRIPTS) + "/lsan_hdf5.supp"});
    REQUIRE(wait_for_recorder(scratch.arena(), recorder, 1, out));
    SimWriter writer(scratch.arena(), sim);  // lossless: it waits for the recorder until it stops
    const Exit done = recorder.wait(30s);
    writer.stop();
    INFO(done.out << done.err);
    CHECK(done.exited);
    CHECK(done.code == 3);  // a full disk (kExitDiskFull)
    if (reserve) CHECK(contains(done.err, "disk full"));
    if (!reserve) CHECK(contains(done.err, "No space left on device"));
    const auto files = h5_files(out);
    REQUIRE(files.size() == 1);
    const Facts f = inspect(files[0], false, exported.str());
    INFO(f.exit.out << f.exit.err);
    REQUIRE(f.ok());
    CHECK(h5dump(files[0]).code == 0);
    CHECK(f.num("adc0", "blocks") > 0);
    const auto ranges = parse_ranges(f.seqs.at("adc0"));
    REQUIRE(ranges.size() == 1);
    CHECK(ranges[0].first == 0);
    // The reserve leaves room for the disk_error row; a failed write may leave none for it.
    REQUIRE(f.gaps.size() == (reserve ? 1U : f.gaps.size()));
    CHECK(f.gaps.size() <= 1);
    if (!f.gaps.empty()) {
      CHECK(f.gaps[0].reason == "disk_error");
      CHECK(f.gaps[0].sequence == ranges[0].second + 1);  // recording stopped right after the last block kept
    }
    const std::string kept = std::string(encoded ? "encoded, " : "") + (reserve ? "reserve: " : "ENOSPC: ") +
                             std::to_string(f.num("adc0", "blocks")) + " blocks kept, " +
                             std::to_string(f.gaps.size()) + " disk_error row";
    MESSAGE(kept);
    check_samples(f, exported.str(), sim, 0);  // and every block it kept is whole
  }
}

}  // TEST_SUITE
