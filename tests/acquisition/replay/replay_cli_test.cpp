// `weir replay` from the shell: replays and reports, refuses a bad file with exit 1 naming it, and
// takes a bad --speed as a usage error.
#include <doctest/doctest.h>

#ifdef WEIR_CLI_PATH

#include <signal.h>

#include "background_weir.hpp"
#include "json.hpp"
#include "live_arena.hpp"
#include "replay_fixture.hpp"
#include "run_weir.hpp"
#include "scratch_dir.hpp"

using namespace weir;
using namespace weir::test;

TEST_SUITE("acquisition.replay") {

TEST_CASE("weir replay plays a recording into an arena and reports what it replayed") {
  ScratchDir dir("replay-cli");
  RecChannel c = u32_channel("adc0", {{0, 6}, {8, 4}}, 0);
  c.gaps = {RecGap{6, 2, 0, kRealtime0}};
  write_recording(dir.file("run.h5"), {c});
  ScratchArena arena("replaycli");
  const RunResult r = run_weir({"replay", dir.file("run.h5"), arena.name(), "--speed", "max", "--json"});
  CHECK(r.exit_code == kExitOk);
  CHECK(contains(r.out, "\"blocks_published\":10"));
  CHECK(contains(r.out, "\"blocks_missing\":2"));
  CHECK(contains(r.out, "\"created\":true"));
  const ReadBack back = read_back(arena.arena(), "adc0");
  CHECK(back.blocks.size() == 10);

  const RunResult text = run_weir({"replay", dir.file("run.h5"), arena.name(), "--speed", "max"});
  CHECK(text.exit_code == kExitOk);
  CHECK(contains(text.out, "replayed 1 file into"));
  CHECK(contains(text.out, "attached"));
}

TEST_CASE("weir replay refuses a bad file with exit 1 naming it, and a bad speed with exit 2") {
  ScratchDir dir("replay-cli-bad");
  ScratchArena arena("replaycli");
  const RunResult missing = run_weir({"replay", dir.file("none.h5"), arena.name()});
  CHECK(missing.exit_code == kExitError);
  CHECK(contains(missing.err, "none.h5"));
  write_recording(dir.file("run.h5"), {u32_channel("adc0", {{0, 2}}, 0)});
  const RunResult speed = run_weir({"replay", dir.file("run.h5"), arena.name(), "--speed", "fast"});
  CHECK(speed.exit_code == kExitUsage);
  CHECK(contains(speed.err, "--speed"));
  const RunResult alone = run_weir({"replay", dir.file("run.h5")});
  CHECK(alone.exit_code == kExitUsage);
}

TEST_CASE("a replay at full speed into a recorder started first records every block once it waits for the recorder") {
  ScratchDir dir("replay-wait");
  constexpr std::uint64_t kBlocks = 3943;  // far more than the ring (64 blocks) holds
  write_recording(dir.file("run.h5"), {u32_channel("adc0", {{0, kBlocks}}, 0)});
  ScratchArena arena("replaywait");
  const std::string out = (dir.path() / "out").string();
  BackgroundWeir recorder({"record", arena.name(), "--channels", "adc0", "--wait-for-channels", "--out", out, "--json"});
  const RunResult r = run_weir({"replay", dir.file("run.h5"), arena.name(), "--speed", "max", "--wait-consumers", "1"});
  CHECK_MESSAGE(r.exit_code == kExitOk, r.out, r.err);
  REQUIRE(recorder.signal(SIGINT));
  REQUIRE_MESSAGE(recorder.wait_exit(std::chrono::seconds(60)) == 0, recorder.output());
  const std::string said = recorder.output();
  const std::size_t json_at = said.rfind("{\"arena\"");
  REQUIRE_MESSAGE(json_at != std::string::npos, said);
  const nlohmann::json summary = parse_json(said.substr(json_at));
  REQUIRE_MESSAGE(summary.is_object(), said);
  CHECK(summary["blocks"].get<std::uint64_t>() == kBlocks);
  CHECK(summary["gap_blocks"].get<std::uint64_t>() == 0);
  const RunResult audit = run_weir({"audit", out});
  CHECK_MESSAGE(audit.exit_code == kExitOk, audit.out, audit.err);
  // Nobody registers: the wait ends with an error naming the channel, and nothing is published.
  ScratchArena lonely("replaywait");
  const RunResult alone = run_weir({"replay", dir.file("run.h5"), lonely.name(), "--speed", "max", "--wait-consumers",
                                    "1", "--wait-consumers-s", "0.3"});
  CHECK(alone.exit_code == kExitError);
  CHECK_MESSAGE(contains(alone.err, "channels still without 1 lossless 'record:hdf5' consumer(s): adc0 (0)"), alone.err);
}

}  // TEST_SUITE

#endif  // WEIR_CLI_PATH
