// weir bridge across two network namespaces made by the test: a veth pair, an impaired link (tc
// netem delay and loss, or where the kernel has no sch_netem a tbf rate limit that drops packets
// past a short queue), and a cut link (ip link set down). Both ends are real processes started by
// `ip netns exec`; the arenas are in /dev/shm, which the namespaces share, one per side. Skipped,
// loudly, where namespaces cannot be made (not root, no CAP_NET_ADMIN, no veth).
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "bridge_harness.hpp"

namespace weir::test {

namespace {

std::string ip_program() {
  for (const char* p : {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"})
    if (::access(p, X_OK) == 0) return p;
  return "";
}

std::string tc_program() {
  for (const char* p : {"/usr/sbin/tc", "/sbin/tc", "/usr/bin/tc", "/bin/tc"})
    if (::access(p, X_OK) == 0) return p;
  return "";
}

struct Ran {
  int code = -1;
  std::string out;
};

Ran run(const std::vector<std::string>& argv) {
  CapturedProcess p(argv, CapturedProcess::Output::merged);
  if (!p.valid()) return {};
  const ExitStatus s = p.wait(std::chrono::seconds(20));
  return {s.exited ? s.code : -1, p.out()};
}

// Two namespaces joined by a veth pair: A (10.N.M.1) and B (10.N.M.2). Removed by the destructor.
class NetnsPair {
 public:
  NetnsPair() {
    const std::string id = std::to_string(::getpid() % 100000);
    a_ = "weirA" + id;
    b_ = "weirB" + id;
    va_ = "wva" + id;
    vb_ = "wvb" + id;
    const int n = 100 + ::getpid() % 100, m = (::getpid() / 100) % 250;
    addr_a_ = "10." + std::to_string(n) + "." + std::to_string(m) + ".1";
    addr_b_ = "10." + std::to_string(n) + "." + std::to_string(m) + ".2";
    ip_ = ip_program();
    if (ip_.empty()) {
      why_ = "no ip command (Debian: iproute2)";
      return;
    }
    if (::geteuid() != 0) {
      why_ = "not root: network namespaces need CAP_NET_ADMIN";
      return;
    }
    remove();
    for (const std::vector<std::string>& step :
         {std::vector<std::string>{ip_, "netns", "add", a_}, {ip_, "netns", "add", b_},
          {ip_, "link", "add", va_, "type", "veth", "peer", "name", vb_}, {ip_, "link", "set", va_, "netns", a_},
          {ip_, "link", "set", vb_, "netns", b_}, {ip_, "-n", a_, "addr", "add", addr_a_ + "/24", "dev", va_},
          {ip_, "-n", b_, "addr", "add", addr_b_ + "/24", "dev", vb_}, {ip_, "-n", a_, "link", "set", "lo", "up"},
          {ip_, "-n", b_, "link", "set", "lo", "up"}, {ip_, "-n", a_, "link", "set", va_, "up"},
          {ip_, "-n", b_, "link", "set", vb_, "up"}}) {
      const Ran r = run(step);
      if (r.code != 0) {
        std::string cmd;
        for (const std::string& s : step) cmd += s + " ";
        why_ = "`" + cmd + "` failed: " + r.out;
        return;
      }
    }
    ok_ = true;
  }
  ~NetnsPair() { remove(); }
  NetnsPair(const NetnsPair&) = delete;
  NetnsPair& operator=(const NetnsPair&) = delete;

  [[nodiscard]] bool ok() const { return ok_; }
  [[nodiscard]] const std::string& why() const { return why_; }
  [[nodiscard]] const std::string& addr_b() const { return addr_b_; }

  /// Impairs A's side of the link: netem delay and loss with a rate limit where the kernel has
  /// netem, else a tbf rate limit. Returns what it applied.
  std::string impair() {
    const std::string tc = tc_program();
    REQUIRE_MESSAGE(!tc.empty(), "no tc command (Debian: iproute2)");
    const Ran netem = run({ip_, "netns", "exec", a_, tc, "qdisc", "add", "dev", va_, "root", "netem", "delay", "5ms",
                           "loss", "1%", "rate", "16mbit"});
    if (netem.code == 0) return "netem delay 5ms loss 1% rate 16mbit";
    WARN_MESSAGE(false, "sch_netem is not in this kernel (" << netem.out
                                                              << "): impairing with tbf rate 16mbit and a 24 KB queue "
                                                                 "(packets past it are dropped) instead");
    const Ran tbf = run({ip_, "netns", "exec", a_, tc, "qdisc", "add", "dev", va_, "root", "tbf", "rate", "16mbit",
                         "burst", "16kb", "limit", "24kb"});
    REQUIRE_MESSAGE(tbf.code == 0, tbf.out);
    return "tbf rate 16mbit burst 16kb limit 24kb";
  }

  /// Cuts (false) or restores (true) the link on A's side.
  void link(bool up) {
    const Ran r = run({ip_, "-n", a_, "link", "set", va_, up ? "up" : "down"});
    REQUIRE_MESSAGE(r.code == 0, r.out);
  }

  /// weir ARGS run in namespace A or B.
  [[nodiscard]] std::unique_ptr<CapturedProcess> weir_in(bool in_a, const std::vector<std::string>& args) const {
    std::vector<std::string> argv{ip_, "netns", "exec", in_a ? a_ : b_, WEIR_CLI_PATH};
    argv.insert(argv.end(), args.begin(), args.end());
    auto p = std::make_unique<CapturedProcess>(argv, CapturedProcess::Output::merged);
    REQUIRE(p->valid());
    return p;
  }

 private:
  void remove() {
    if (ip_.empty()) return;
    (void)run({ip_, "netns", "del", a_});
    (void)run({ip_, "netns", "del", b_});
    (void)run({ip_, "link", "del", va_});  // only if it was left in this namespace
  }
  std::string ip_, a_, b_, va_, vb_, addr_a_, addr_b_, why_;
  bool ok_ = false;
};

}  // namespace

TEST_SUITE("bridge.netns") {

TEST_CASE("across namespaces, an impaired and then cut link loses blocks the far side counts exactly" *
          doctest::timeout(180)) {
  NetnsPair net;
  if (!net.ok()) {
    MESSAGE("SKIPPED: cannot make network namespaces here: " << net.why());
    return;
  }
  const std::string impairment = net.impair();
  ArenaGuard near_name(unique_name("bnear")), far_name(unique_name("bfar"));
  core::Arena near = make_arena(near_name.where());
  core::Arena far = make_arena(far_name.where());
  const std::string endpoint = "tcp://" + net.addr_b() + ":" + std::to_string(free_port());

  SUBCASE("lossless delivery over the impaired link is bit-identical") {
    constexpr std::uint32_t kBlocks = 200;
    make_channel(near, "adc0", 1024, 256);
    auto recv = net.weir_in(false, {"bridge", "recv", far_name.where(), "--name", "in", "--bind", endpoint, "--plain"});
    auto send = net.weir_in(true, {"bridge", "send", near_name.where(), "--name", "out", "--channels", "adc0", "--to",
                                   endpoint, "--plain", "--lossless"});
    REQUIRE_MESSAGE(eventually([&] { return key_text(near, "bridge.out.link") == "up"; }, kSettle), send->out());
    REQUIRE(run_weir({"sim", near_name.where(), "adc0", "--rate", "1e6", "--block", "1024", "--blocks",
                      std::to_string(kBlocks), "--fast", "--signal", "noise"})
                .exit_code == kExitOk);
    REQUIRE_MESSAGE(eventually([&] { return head_of(far, "adc0") == kBlocks; }, kSettle), recv->out());
    auto a = core::BlockCopier::open(near, "adc0");
    auto b = core::BlockCopier::open(far, "adc0");
    REQUIRE(a);
    REQUIRE(b);
    std::vector<std::byte> da(a->block_bytes()), db(b->block_bytes());
    std::uint64_t identical = 0;
    for (std::uint64_t s = 0; s < kBlocks; ++s) {
      core::BlockRecord ra, rb;
      REQUIRE(a->copy(s, da, ra) == core::BlockStatus::ok);
      REQUIRE(b->copy(s, db, rb) == core::BlockStatus::ok);
      identical += ra.samples == rb.samples && ra.realtime_ns == rb.realtime_ns &&
                           std::memcmp(da.data(), db.data(), std::size_t{ra.samples} * a->sample_bytes()) == 0
                       ? 1
                       : 0;
    }
    CHECK(identical == kBlocks);
    CHECK(key_u64(far, "bridge.in.gaps") == 0);
    MESSAGE("lossless over " << impairment << ": " << identical << " of " << kBlocks << " blocks bit-identical");
  }

  SUBCASE("lossy under the impaired link and a cut: read + lost == written") {
    constexpr std::uint64_t kBlocks = 1500;  // 6 s at 250 blocks/s: 32 Mbit/s into a 16 Mbit/s link
    make_channel(near, "adc0", 4000, 64);
    auto recv = net.weir_in(false, {"bridge", "recv", far_name.where(), "--name", "in", "--bind", endpoint, "--plain"});
    auto send = net.weir_in(true, {"bridge", "send", near_name.where(), "--name", "out", "--channels", "adc0", "--to",
                                   endpoint, "--plain"});
    REQUIRE_MESSAGE(eventually([&] { return key_text(near, "bridge.out.link") == "up"; }, kSettle), send->out());
    FarFollower follower(far, "adc0");
    BackgroundWeir sim({"sim", near_name.where(), "adc0", "--rate", "1e6", "--block", "4000", "--blocks",
                        std::to_string(kBlocks)});
    REQUIRE(eventually([&] { return head_of(far, "adc0") > 100; }, kSettle));
    net.link(false);
    const std::uint64_t at_cut = head_of(near, "adc0");
    // Down for 3 s of blocks: longer than the heartbeat timeout, so both ends see the link go.
    REQUIRE(eventually([&] { return key_text(near, "bridge.out.link") == "down"; }, kSettle));
    REQUIRE(eventually([&] { return head_of(near, "adc0") >= at_cut + 750; }, kSettle));
    net.link(true);
    REQUIRE(sim.wait_exit(kSettle) == kExitOk);
    REQUIRE(head_of(near, "adc0") == kBlocks);
    REQUIRE_MESSAGE(eventually([&] { return head_of(far, "adc0") == kBlocks; }, kSettle), recv->out() << send->out());
    REQUIRE(eventually([&] { return follower.read() + follower.lost() == kBlocks; }, kSettle));
    follower.stop();
    CHECK(follower.read() + follower.lost() == kBlocks);
    CHECK(follower.lost() >= 700);  // at least the cut
    CHECK(follower.read() > 0);
    CHECK(key_u64(near, "bridge.out.dropped") > 0);
    CHECK(eventually([&] { return key_text(far, "bridge.in.link") == "up"; }, kSettle));
    MESSAGE("lossy over " << impairment << " and a 3 s cut: read " << follower.read() << " + lost " << follower.lost()
                          << " = written " << kBlocks << "; sender sent " << key_u64(near, "bridge.out.sent")
                          << ", dropped " << key_u64(near, "bridge.out.dropped") << "; receiver gaps "
                          << key_u64(far, "bridge.in.gaps"));
  }
}

}  // TEST_SUITE

}  // namespace weir::test
