// `weir snapshot NAME FILE.h5` and `weir snapshot NAME DIR/ --every S` from the shell.
#include <doctest/doctest.h>

#ifdef WEIR_CLI_PATH

#include <hdf5.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "live_arena.hpp"
#include "run_program.hpp"
#include "run_weir.hpp"
#include "scratch_dir.hpp"
#include "weir/core/kv_store.hpp"

using namespace weir;
using namespace weir::test;

namespace {

std::size_t files_in(const std::string& dir) {
  std::size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) n += e.path().extension() == ".h5" ? 1 : 0;
  return n;
}

}  // namespace

TEST_SUITE("recorders.snapshot") {

TEST_CASE("weir snapshot writes FILE.h5, refuses to replace it without --force, and keeps raw copies for other names") {
  ScratchDir dir("snap-cli");
  ScratchArena arena("snapcli");
  core::KvStore kv(arena.arena());
  REQUIRE(kv.set_text("greeting", "hello") == core::KvStatus::ok);
  REQUIRE(kv.set_i64("n", 42) == core::KvStatus::ok);
  const std::string file = dir.file("a.h5");

  const RunResult first = run_weir({"snapshot", arena.name(), file, "--blocks", "4", "--json"});
  CHECK(first.exit_code == kExitOk);
  CHECK(contains(first.out, "\"keys\":2"));
  check_snapshot(file, {"--min-keys", "2"});
  const RunResult again = run_weir({"snapshot", arena.name(), file});
  CHECK(again.exit_code == kExitError);
  CHECK(contains(again.err, "exists"));
  const RunResult forced = run_weir({"snapshot", arena.name(), file, "--force"});
  CHECK(forced.exit_code == kExitOk);
  CHECK(contains(forced.out, "2 keys"));

  const RunResult raw = run_weir({"snapshot", arena.name(), dir.file("raw.arena")});
  CHECK(raw.exit_code == kExitOk);
  CHECK(H5Fis_hdf5(dir.file("raw.arena").c_str()) == 0);  // the raw arena copy, as before
  CHECK(run_weir({"snapshot", arena.name(), dir.file("raw2.arena"), "--blocks", "3"}).exit_code == kExitUsage);
  CHECK(run_weir({"snapshot", arena.name(), file, "--every", "1"}).exit_code == kExitUsage);
}

TEST_CASE("weir snapshot DIR/ writes numbered files, every S seconds with --every, and SIGINT stops it" *
          doctest::timeout(60)) {
  ScratchDir dir("snap-cli-every");
  ScratchArena arena("snapcli");
  REQUIRE(core::KvStore(arena.arena()).set_text("k", "v") == core::KvStatus::ok);
  const std::string slash = dir.str() + "/";

  const RunResult counted = run_weir({"snapshot", arena.name(), slash, "--every", "0.05", "--count", "2"});
  CHECK(counted.exit_code == kExitOk);
  CHECK(contains(counted.out, "snapshot 1 written"));
  CHECK(contains(counted.out, "snapshot 2 written"));
  const RunResult one = run_weir({"snapshot", arena.name(), slash});
  CHECK(one.exit_code == kExitOk);
  CHECK(contains(one.out, "_snap000003.h5"));
  CHECK(files_in(dir.str()) == 3);

  // Until SIGINT: started in the background, stopped once two more files are there.
  CapturedProcess snapshot(command(WEIR_CLI_PATH, {"snapshot", arena.name(), slash, "--every", "0.05"}));
  REQUIRE(snapshot.valid());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (files_in(dir.str()) < 5 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(files_in(dir.str()) >= 5);
  (void)snapshot.signal(SIGINT);
  const ExitStatus status = snapshot.wait(deadline - std::chrono::steady_clock::now());
  REQUIRE_FALSE(status.timed_out);
  CHECK(status.exited);
  CHECK(status.code == kExitOk);
  const std::string text = snapshot.out();
  CHECK(contains(text, "stopped by a signal"));
  CHECK(contains(text, "snapshot 4 written"));  // numbering went on after the files already there
}

}  // TEST_SUITE

#endif  // WEIR_CLI_PATH
