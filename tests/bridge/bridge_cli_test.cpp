// weir bridge over loopback: real send and recv processes, weir sim writing. Lossless delivery is
// bit-identical block by block; a killed receiver or sender resumes and the far side's read + lost
// equals the near side's written exactly; a wrong CURVE key is refused and counted; plain TCP only
// when asked; several senders into one receiver.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "bridge_harness.hpp"

namespace weir::test {

namespace {

using std::chrono::milliseconds;

std::string endpoint(int port) { return "tcp://127.0.0.1:" + std::to_string(port); }

struct Keys {
  ScratchDir dir{"bridge-keys"};
  std::string allow;
  Keys() {
    keygen(dir, "recv");
    keygen(dir, "send");
    keygen(dir, "stranger");
    allow = dir.file("allowed");
    REQUIRE(std::filesystem::create_directory(allow));
    std::filesystem::copy_file(dir.file("send.pub"), allow + "/send.pub");
  }
  [[nodiscard]] std::vector<std::string> recv_args() const {
    return {"--curve-key", dir.file("recv.key"), "--allow", allow};
  }
  [[nodiscard]] std::vector<std::string> send_args(const std::string& who = "send") const {
    return {"--curve-key", dir.file(who + ".key"), "--curve-server-key", dir.file("recv.pub")};
  }
};

std::vector<std::string> join(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Waits until the sender follows `channels` channels and its link is up.
void wait_following(const core::Arena& near, const std::string& bridge, std::uint64_t channels, const BackgroundWeir& sender) {
  REQUIRE_MESSAGE(eventually([&] { return key_u64(near, "bridge." + bridge + ".channels") == channels &&
                                          key_text(near, "bridge." + bridge + ".link") == "up"; },
                             kSettle),
                  sender.output());
}

}  // namespace

TEST_SUITE("bridge.cli") {

TEST_CASE("lossless delivery over CURVE is bit-identical block by block on both arenas" * doctest::timeout(120)) {
  ArenaGuard near_name(unique_name("bnear")), far_name(unique_name("bfar"));
  core::Arena near = make_arena(near_name.where());
  core::Arena far = make_arena(far_name.where());
  constexpr std::uint32_t kBlocks = 400;
  make_channel(near, "adc0", 1024, 512);
  make_channel(near, "adc1", 1024, 512);
  const Keys keys;
  const int port = free_port();
  BackgroundWeir recv(join({"bridge", "recv", far_name.where(), "--name", "in", "--bind", endpoint(port)}, keys.recv_args()));
  BackgroundWeir send(join({"bridge", "send", near_name.where(), "--name", "out", "--channels", "adc*", "--to",
                            endpoint(port), "--lossless"},
                           keys.send_args()));
  wait_following(near, "out", 2, send);
  const RunResult sim = run_weir({"sim", near_name.where(), "adc0", "adc1", "--rate", "1e6", "--block", "1024",
                                  "--blocks", std::to_string(kBlocks), "--fast", "--signal", "noise", "--seed", "3"});
  REQUIRE_MESSAGE(sim.exit_code == kExitOk, sim.err);
  for (const char* ch : {"adc0", "adc1"}) {
    REQUIRE(head_of(near, ch) == kBlocks);
    REQUIRE_MESSAGE(eventually([&] { return head_of(far, ch) == kBlocks; }, kSettle), recv.output());
    auto a = core::BlockCopier::open(near, ch);
    auto b = core::BlockCopier::open(far, ch);
    REQUIRE(a);
    REQUIRE(b);
    CHECK(b->desc().dtype == a->desc().dtype);
    CHECK(b->samples_per_block() == a->samples_per_block());
    CHECK(std::string(b->desc().units) == "V");
    std::vector<std::byte> da(a->block_bytes()), db(b->block_bytes());
    std::uint64_t identical = 0;
    for (std::uint64_t s = 0; s < kBlocks; ++s) {
      core::BlockRecord ra, rb;
      REQUIRE(a->copy(s, da, ra) == core::BlockStatus::ok);
      REQUIRE(b->copy(s, db, rb) == core::BlockStatus::ok);
      const bool same = ra.samples == rb.samples && ra.flags == rb.flags && ra.realtime_ns == rb.realtime_ns &&
                        ra.monotonic_ns == rb.monotonic_ns && ra.first_sample == rb.first_sample &&
                        std::memcmp(da.data(), db.data(), std::size_t{ra.samples} * a->sample_bytes()) == 0;
      identical += same ? 1 : 0;
    }
    CHECK(identical == kBlocks);
  }
  CHECK(key_u64(near, "bridge.out.dropped") == 0);
  CHECK(eventually([&] { return key_u64(far, "bridge.in.received") == 2 * kBlocks; }, kSettle));
  CHECK(key_u64(far, "bridge.in.gaps") == 0);
  CHECK(key_text(far, "bridge.in.link") == "up");
  CHECK(key_u64(far, "bridge.in.auth_failures") == 0);
  send.signal(SIGTERM);
  recv.signal(SIGTERM);
  CHECK(send.wait_exit(kSettle) == kExitOk);
  CHECK(recv.wait_exit(kSettle) == kExitOk);
}

TEST_CASE("a killed receiver resumes and the far side's read + lost equals the near side's written" *
          doctest::timeout(120)) {
  ArenaGuard near_name(unique_name("bnear")), far_name(unique_name("bfar"));
  core::Arena near = make_arena(near_name.where());
  core::Arena far = make_arena(far_name.where());
  make_channel(near, "adc0", 1000, 64, 2e5);
  const int port = free_port();
  const std::vector<std::string> recv_args{"bridge", "recv", far_name.where(), "--name", "in", "--bind", endpoint(port), "--plain"};
  auto recv = std::make_unique<BackgroundWeir>(recv_args);
  BackgroundWeir send({"bridge", "send", near_name.where(), "--name", "out", "--channels", "adc0", "--to", endpoint(port), "--plain"});
  wait_following(near, "out", 1, send);
  FarFollower follower(far, "adc0");
  BackgroundWeir sim({"sim", near_name.where(), "adc0", "--rate", "2e5", "--block", "1000", "--blocks", "1200"});  // 6 s
  REQUIRE(eventually([&] { return head_of(far, "adc0") > 100; }, kSettle));
  recv->kill_and_reap();
  const std::uint64_t at_kill = head_of(near, "adc0");
  REQUIRE(eventually([&] { return head_of(near, "adc0") > at_kill + 200; }, kSettle));  // a second of blocks with nobody there
  recv = std::make_unique<BackgroundWeir>(recv_args);
  REQUIRE(sim.wait_exit(kSettle) == kExitOk);
  REQUIRE(head_of(near, "adc0") == 1200);
  REQUIRE_MESSAGE(eventually([&] { return head_of(far, "adc0") == 1200; }, kSettle), recv->output());
  REQUIRE(eventually([&] { return follower.read() + follower.lost() == 1200; }, kSettle));
  follower.stop();
  CHECK(follower.read() + follower.lost() == 1200);
  CHECK(follower.lost() >= 150);  // the time the receiver was away
  CHECK(follower.read() >= 300);
  CHECK(key_u64(far, "bridge.in.gaps") > 0);  // counted by the second receiver
  MESSAGE("killed receiver: read " << follower.read() << " + lost " << follower.lost() << " = written 1200; sender dropped "
                                   << key_u64(near, "bridge.out.dropped"));
}

TEST_CASE("a killed sender resumes with a new session and the far side counts the gap exactly" * doctest::timeout(120)) {
  ArenaGuard near_name(unique_name("bnear")), far_name(unique_name("bfar"));
  core::Arena near = make_arena(near_name.where());
  core::Arena far = make_arena(far_name.where());
  make_channel(near, "adc0", 1000, 64, 2e5);
  const int port = free_port();
  BackgroundWeir recv({"bridge", "recv", far_name.where(), "--name", "in", "--bind", endpoint(port), "--plain"});
  const std::vector<std::string> send_args{"bridge", "send", near_name.where(), "--name", "out", "--channels", "adc0",
                                           "--to", endpoint(port), "--plain"};
  auto send = std::make_unique<BackgroundWeir>(send_args);
  wait_following(near, "out", 1, *send);
  FarFollower follower(far, "adc0");
  BackgroundWeir sim({"sim", near_name.where(), "adc0", "--rate", "2e5", "--block", "1000", "--blocks", "1200"});
  REQUIRE(eventually([&] { return head_of(far, "adc0") > 100; }, kSettle));
  send->kill_and_reap();
  const std::uint64_t at_kill = head_of(near, "adc0");
  REQUIRE(eventually([&] { return head_of(near, "adc0") > at_kill + 200; }, kSettle));  // more than the ring: a gap
  send = std::make_unique<BackgroundWeir>(send_args);
  REQUIRE(sim.wait_exit(kSettle) == kExitOk);
  REQUIRE_MESSAGE(eventually([&] { return head_of(far, "adc0") == 1200; }, kSettle), recv.output());
  REQUIRE(eventually([&] { return follower.read() + follower.lost() == 1200; }, kSettle));
  follower.stop();
  CHECK(follower.read() + follower.lost() == 1200);
  CHECK(follower.lost() >= 100);
  CHECK(key_u64(far, "bridge.in.sessions") == 2);
  MESSAGE("killed sender: read " << follower.read() << " + lost " << follower.lost() << " = written 1200; late "
                                 << key_u64(far, "bridge.in.late"));
}

TEST_CASE("a sender whose key is not allowed is refused and counted on both ends" * doctest::timeout(60)) {
  ArenaGuard near_name(unique_name("bnear")), far_name(unique_name("bfar"));
  core::Arena near = make_arena(near_name.where());
  core::Arena far = make_arena(far_name.where());
  make_channel(near, "adc0", 256, 64);
  const Keys keys;
  const int port = free_port();
  BackgroundWeir recv(join({"bridge", "recv", far_name.where(), "--name", "in", "--bind", endpoint(port)}, keys.recv_args()));
  BackgroundWeir send(join({"bridge", "send", near_name.where(), "--name", "out", "--channels", "adc0", "--to", endpoint(port)},
                           keys.send_args("stranger")));
  REQUIRE(run_weir({"sim", near_name.where(), "adc0", "--rate", "1e6", "--block", "256", "--blocks", "10", "--fast"})
              .exit_code == kExitOk);
  CHECK_MESSAGE(eventually([&] { return key_u64(far, "bridge.in.zap_refused") >= 1 &&
                                        key_u64(far, "bridge.in.auth_failures") >= 1; },
                           kSettle),
                recv.output());
  CHECK(eventually([&] { return key_u64(near, "bridge.out.auth_failures") >= 1; }, kSettle));
  CHECK(key_text(near, "bridge.out.link") == "down");
  CHECK(key_u64(far, "bridge.in.received") == 0);
  CHECK_FALSE(core::find_channel(far, "adc0"));
}

TEST_CASE("without keys a bridge end refuses to start unless --plain is given") {
  ArenaGuard name(unique_name("bnear"));
  core::Arena arena = make_arena(name.where());
  const RunResult send = run_weir({"bridge", "send", name.where(), "--channels", "adc0", "--to", "tcp://127.0.0.1:1"});
  CHECK(send.exit_code == kExitUsage);
  CHECK(contains(send.err, "--plain"));
  CHECK(contains(send.err, "--curve-key"));
  const RunResult recv = run_weir({"bridge", "recv", name.where(), "--bind", "tcp://127.0.0.1:1"});
  CHECK(recv.exit_code == kExitUsage);
  CHECK(contains(recv.err, "--allow"));
  SUBCASE("a secret key others may read is refused, naming the file") {
    const Keys keys;
    REQUIRE(::chmod(keys.dir.file("recv.key").c_str(), 0644) == 0);
    const RunResult r = run_weir(join({"bridge", "recv", name.where(), "--bind", endpoint(free_port())}, keys.recv_args()));
    CHECK(r.exit_code == kExitError);
    CHECK(contains(r.err, "recv.key"));
    CHECK(contains(r.err, "chmod 600"));
  }
  SUBCASE("keygen never overwrites a key") {
    const Keys keys;
    const RunResult r = run_weir({"bridge", "keygen", keys.dir.file("recv")});
    CHECK(r.exit_code == kExitError);
    CHECK(contains(r.err, "never overwrites"));
    struct stat st {};
    REQUIRE(::stat(keys.dir.file("recv.key").c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
  }
}

TEST_CASE("two senders feed one receiver: a {sender} prefix keeps them apart, a clash is refused" * doctest::timeout(90)) {
  ArenaGuard a_name(unique_name("bnear")), b_name(unique_name("bnear")), far_name(unique_name("bfar"));
  core::Arena a = make_arena(a_name.where());
  core::Arena b = make_arena(b_name.where());
  core::Arena far = make_arena(far_name.where());
  make_channel(a, "adc0", 256, 64);
  make_channel(b, "adc0", 256, 64);
  const int port = free_port();
  SUBCASE("with a prefix both arrive") {
    BackgroundWeir recv({"bridge", "recv", far_name.where(), "--name", "in", "--bind", endpoint(port), "--plain", "--prefix", "{sender}."});
    BackgroundWeir sa({"bridge", "send", a_name.where(), "--name", "alpha", "--channels", "adc0", "--to", endpoint(port), "--plain", "--lossless"});
    BackgroundWeir sb({"bridge", "send", b_name.where(), "--name", "beta", "--channels", "adc0", "--to", endpoint(port), "--plain", "--lossless"});
    wait_following(a, "alpha", 1, sa);
    wait_following(b, "beta", 1, sb);
    REQUIRE(run_weir({"sim", a_name.where(), "adc0", "--rate", "1e6", "--block", "256", "--blocks", "50", "--fast"}).exit_code == kExitOk);
    REQUIRE(run_weir({"sim", b_name.where(), "adc0", "--rate", "1e6", "--block", "256", "--blocks", "70", "--fast"}).exit_code == kExitOk);
    CHECK_MESSAGE(eventually([&] { return head_of(far, "alpha.adc0") == 50 && head_of(far, "beta.adc0") == 70; }, kSettle),
                  recv.output());
    CHECK(key_u64(far, "bridge.in.refused") == 0);
  }
  SUBCASE("without one the second sender's channel is refused and counted") {
    BackgroundWeir recv({"bridge", "recv", far_name.where(), "--name", "in", "--bind", endpoint(port), "--plain"});
    BackgroundWeir sa({"bridge", "send", a_name.where(), "--name", "alpha", "--channels", "adc0", "--to", endpoint(port), "--plain"});
    wait_following(a, "alpha", 1, sa);
    REQUIRE(eventually([&] { return core::find_channel(far, "adc0").has_value(); }, kSettle));
    BackgroundWeir sb({"bridge", "send", b_name.where(), "--name", "beta", "--channels", "adc0", "--to", endpoint(port), "--plain"});
    wait_following(b, "beta", 1, sb);
    REQUIRE(run_weir({"sim", b_name.where(), "adc0", "--rate", "1e6", "--block", "256", "--blocks", "20", "--fast"}).exit_code == kExitOk);
    CHECK(eventually([&] { return key_u64(far, "bridge.in.refused") > 0; }, kSettle));
    CHECK(eventually([&] { return contains(recv.output(), "fed by sender 'alpha', not 'beta'"); }, kSettle));
  }
}

}  // TEST_SUITE

}  // namespace weir::test
