// Bridges declared in pipeline files: a `weir run` pipeline with a sim and a `bridge "send"` feeds
// another `weir run` pipeline whose `driver "bridge"` publishes into its own arena (two arenas, two
// supervisors, loopback, CURVE keys from keygen); and `weir check` refuses bad bridge settings with
// the declaration's file:line.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <string>
#include <vector>

#include "bridge_harness.hpp"

namespace weir::test {

namespace {

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  REQUIRE(out.good());
}

// keys/recv.{key,pub}, keys/send.{key,pub} and allowed/send.pub in `dir`.
void make_keys(const ScratchDir& dir) {
  REQUIRE(std::filesystem::create_directory(dir.file("keys")));
  keygen(dir, "keys/recv");
  keygen(dir, "keys/send");
  REQUIRE(std::filesystem::create_directory(dir.file("allowed")));
  std::filesystem::copy_file(dir.file("keys/send.pub"), dir.file("allowed/send.pub"));
}

std::string arena_decl(const std::string& name) {
  return "arena { name = \"" + name + "\", slots = 256, channels = 4, channel_mb = 16 }\n"
         "channel \"adc0\" { dtype = \"f32\", rate = 1e5, block = 1024, ring = 256 }\n";
}

}  // namespace

TEST_SUITE("bridge.pipeline") {

TEST_CASE("a sim and a bridge send in one weir run feed a bridge driver in another: read + lost == written" *
          doctest::timeout(120)) {
  const ScratchDir dir("bridge-pipeline");
  make_keys(dir);
  ArenaGuard near_name(unique_name("bpnear")), far_name(unique_name("bpfar"));
  const std::string endpoint = "tcp://127.0.0.1:" + std::to_string(free_port());
  // Key paths are relative to the pipeline file's folder, not to where weir runs.
  write_file(dir.file("far.lua"), arena_decl(far_name.where()) +
                                      "driver \"bridge\" { name = \"in\", channels = {\"adc0\"}, bind = \"" + endpoint +
                                      "\",\n  key = \"keys/recv.key\", allow = \"allowed\" }\n");
  write_file(dir.file("near.lua"), arena_decl(near_name.where()) +
                                       "driver \"sim\" { channels = {\"adc0\"}, signal = \"noise\", seed = 5 }\n"
                                       "bridge \"send\" { name = \"out\", channels = {\"adc*\"}, to = \"" + endpoint +
                                       "\",\n  key = \"keys/send.key\", server_key = \"keys/recv.pub\", lossless = true }\n");
  for (const char* file : {"far.lua", "near.lua"}) {
    const RunResult check = run_weir({"check", dir.file(file)});
    REQUIRE_MESSAGE(check.exit_code == kExitOk, check.err);
  }

  BackgroundWeir far_run({"run", dir.file("far.lua"), "--keep"});
  std::optional<core::Arena> far;
  REQUIRE_MESSAGE(eventually([&] {
                    if (auto a = core::Arena::open(far_name.where())) far.emplace(std::move(*a));
                    return far.has_value() && key_text(*far, "bridge.in.link") != "";
                  },
                  kSettle),
                  far_run.output());
  FarFollower follower(*far, "adc0");

  const RunResult near_run = run_weir({"run", dir.file("near.lua"), "--duration", "2", "--keep"});
  REQUIRE_MESSAGE(near_run.exit_code == kExitOk, (near_run.out + near_run.err));
  auto near = core::Arena::open(near_name.where());
  REQUIRE(near);
  const std::uint64_t written = head_of(*near, "adc0");
  REQUIRE(written > 0);
  CHECK(key_u64(*near, "bridge.out.sent") == written);  // lossless over a link that stayed up
  CHECK(key_u64(*near, "bridge.out.dropped") == 0);

  REQUIRE_MESSAGE(eventually([&] { return follower.read() + follower.lost() == written; }, kSettle),
                  (far_run.output() + "\nnear:\n" + near_run.out + near_run.err));
  follower.stop();
  CHECK(follower.read() + follower.lost() == written);
  CHECK(follower.lost() == 0);
  CHECK(head_of(*far, "adc0") == written);
  // The receiver's counters are published every 100 ms.
  CHECK(eventually([&] { return key_u64(*far, "bridge.in.received") + key_u64(*far, "bridge.in.gaps") == written; },
                   kSettle));

  REQUIRE(far_run.signal(SIGINT));
  REQUIRE(far_run.wait_exit(std::chrono::seconds(30)) == kExitOk);
  CHECK_MESSAGE(far_run.output().find("started driver \"in\"") != std::string::npos, far_run.output());
  CHECK_MESSAGE(far_run.output().find(std::to_string(written) + " blocks received") != std::string::npos, far_run.output());
}

TEST_CASE("weir check refuses bad bridge settings, naming the file, line and key") {
  const ScratchDir dir("bridge-check");
  make_keys(dir);
  std::filesystem::copy_file(dir.file("keys/send.key"), dir.file("keys/open.key"));
  REQUIRE(::chmod(dir.file("keys/open.key").c_str(), 0644) == 0);
  REQUIRE(std::filesystem::create_directory(dir.file("empty")));
  const std::string head = arena_decl("bpcheck") + "driver \"sim\" { channels = {\"adc0\"} }\n";  // lines 1-3
  const std::string curve = "key = \"keys/send.key\", server_key = \"keys/recv.pub\"";
  struct Case {
    std::string line4, error;
  };
  const std::vector<Case> cases{
      {"bridge \"send\" { channels = {\"adc*\"}, " + curve + " }", "give exactly one of 'to' and 'bind'"},
      {"bridge \"send\" { channels = {\"adc*\"}, to = \"tcp://h:1\", bind = \"tcp://*:1\", " + curve + " }",
       "give exactly one of 'to' and 'bind'"},
      {"bridge \"send\" { channels = {\"adc*\"}, to = \"h:1\", " + curve + " }", "is no ZeroMQ endpoint"},
      {"bridge \"send\" { channels = {\"adc*\"}, to = \"tcp://h:1\" }", "CURVE needs 'key'"},
      {"bridge \"send\" { channels = {\"adc*\"}, to = \"tcp://h:1\", plain = true, " + curve + " }",
       "plain = true sends in clear"},
      {"bridge \"send\" { channels = {\"adc*\"}, to = \"tcp://h:1\", key = \"keys/none.key\", server_key = \"keys/recv.pub\" }",
       "'key': "},
      {"bridge \"send\" { channels = {\"adc*\"}, to = \"tcp://h:1\", key = \"keys/open.key\", server_key = \"keys/recv.pub\" }",
       "'key': "},
      {"bridge \"send\" { channels = {\"adc*\"}, to = \"tcp://h:1\", lossles = true, " + curve + " }",
       "did you mean 'lossless'"},
      {"bridge \"send\" { channels = {\"adc*\"}, to = \"tcp://h:1\", hwm = 0, " + curve + " }", "'hwm'"},
      {"bridge \"send\" { to = \"tcp://h:1\", " + curve + " }", "'channels'"},
      {"bridge \"recv\" { bind = \"tcp://*:1\", plain = true }", "unknown bridge \"recv\""},
      {"driver \"bridge\" { name = \"in\", bind = \"tcp://*:1\", key = \"keys/recv.key\", allow = \"empty\" }",
       "'allow': "},
      {"driver \"bridge\" { name = \"in\", bind = \"tcp://*:1\", from = \"tcp://h:1\", plain = true }",
       "give exactly one of 'bind' and 'from'"},
      {"driver \"bridge\" { name = \"in\", bind = \"tcp://*:1\", key = \"keys/recv.key\" }", "CURVE needs 'key'"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.line4);
    const std::string file = dir.file("bad.lua");
    write_file(file, head + c.line4 + "\n");
    const RunResult r = run_weir({"check", file});
    CHECK(r.exit_code != kExitOk);
    CHECK_MESSAGE(r.err.find(file + ":4: ") != std::string::npos, r.err);
    CHECK_MESSAGE(r.err.find(c.error) != std::string::npos, r.err);
  }
  // The same settings, right, pass.
  write_file(dir.file("good.lua"), head + "bridge \"send\" { channels = {\"adc*\"}, to = \"tcp://h:1\", " + curve + " }\n");
  const RunResult good = run_weir({"check", dir.file("good.lua")});
  CHECK_MESSAGE(good.exit_code == kExitOk, good.err);
}

}  // TEST_SUITE

}  // namespace weir::test
