// `weir udp` receiving from `weir udpgen` over loopback into a real arena, both as separate
// processes: losses counted exactly, gap blocks in the channel, samples where they belong; and
// every bad input refused naming the part and the input.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "background_weir.hpp"
#include "json.hpp"
#include "live_arena.hpp"
#include "run_weir.hpp"
#include "scratch_dir.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/udp/generator.hpp"

using namespace weir;
using weir::test::BackgroundWeir;
using weir::test::run_weir;

namespace {

constexpr auto kReady = std::chrono::seconds(20);
constexpr std::uint32_t kPacketSamples = 256;
constexpr std::uint64_t kPackets = 400;  // per stream
constexpr int kStillRunningForTests = test::kStillRunning;

// The port `weir udp` bound, once it has published it (0 until then).
std::uint64_t bound_port(const core::Arena& arena, const std::string& part) {
  core::KvStore kv(arena);
  std::uint64_t bits = 0;
  core::ValueType type{};
  if (kv.get_scalar(part + ".port", bits, type) != core::KvStatus::ok) return 0;
  return bits;
}

// A UDP socket bound to a free loopback port, held open for the test.
struct HeldPort {
  int fd = -1;
  std::uint16_t port = 0;
  HeldPort() {
    fd = ::socket(AF_INET, SOCK_DGRAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    socklen_t len = sizeof a;
    REQUIRE(getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
    port = ntohs(a.sin_port);
  }
  ~HeldPort() { ::close(fd); }
  HeldPort(const HeldPort&) = delete;
  HeldPort& operator=(const HeldPort&) = delete;
};

void loopback(const std::string& format) {
  test::ScratchArena scratch("udp");
  BackgroundWeir rx({"udp", scratch.name(), "--format", format, "--stream", "1=adc0", "--stream", "2=adc1", "--dtype",
                     "i16", "--rate", "100000", "--block", std::to_string(kPacketSamples), "--ring", "1024", "--json"});
  REQUIRE(test::eventually([&] { return bound_port(scratch.arena(), "udp") != 0; },
                           std::chrono::duration_cast<std::chrono::milliseconds>(kReady)));
  const std::uint64_t port = bound_port(scratch.arena(), "udp");

  const auto gen = run_weir({"udpgen", "--port", std::to_string(port), "--format", format, "--streams", "2", "--rate",
                             "100000", "--samples", std::to_string(kPacketSamples), "--packets",
                             std::to_string(kPackets), "--drop-every", "7", "--loss", "0.02", "--reorder", "0.05",
                             "--duplicate", "0.02", "--malformed", "0.02", "--seed", "11", "--json"});
  REQUIRE_MESSAGE(gen.exit_code == 0, gen.err);
  const auto sent = test::parse_json(gen.out);
  REQUIRE(sent.is_object());
  REQUIRE(rx.signal(SIGINT));
  REQUIRE(rx.wait_exit(std::chrono::seconds(30)) == 0);
  const auto got = test::parse_json(rx.output());
  REQUIRE_MESSAGE(got.is_object(), rx.output());

  if (got["kernel_drops"].get<std::uint64_t>() != 0 || sent["send_errors"].get<std::uint64_t>() != 0) {
    MESSAGE("skipped: the kernel dropped datagrams on loopback (", got["kernel_drops"], " kernel drops, ",
            sent["send_errors"], " send errors): exact counts cannot be compared");
    return;
  }
  CHECK(sent["samples_dropped"].get<std::uint64_t>() > 0);
  CHECK(got["malformed_total"] == sent["malformed"]);
  CHECK(got["unknown_stream"] == 0);
  for (std::size_t s = 0; s < 2; ++s) {
    CAPTURE(s);
    const auto& tx = sent["streams"][s];
    const auto& st = got["streams"][s];
    REQUIRE(st["id"] == tx["id"]);
    CHECK(st["lost_samples"] == tx["samples_dropped"]);  // exact, whatever the 4-bit count did
    CHECK(st["samples"] == tx["samples_sent"]);
    CHECK(st["gap_blocks"] == tx["packets_dropped"]);    // one packet per block: a lost packet, a gap block
    CHECK(st["duplicates"] == tx["duplicates"]);
    CHECK(st["reordered"] == tx["reordered"]);
    CHECK(st["late"] == 0);
    CHECK(st["discarded_samples"] == 0);
    CHECK(st["blocks_published"].get<std::uint64_t>() + st["gap_blocks"].get<std::uint64_t>() == kPackets);

    // The channel: every block in place, every lost one a gap that a reader counts lost.
    const std::string channel = st["channel"];
    auto reader = core::ChannelReader::open(scratch.arena(), channel, core::ConsumerPolicy::lossy, "udp-test",
                                            core::StartAt::oldest);
    REQUIRE(reader);
    std::uint64_t blocks = 0, lost = 0, wrong = 0;
    const auto id = static_cast<std::uint32_t>(tx["id"].get<std::uint64_t>());
    for (;;) {
      core::BlockView view;
      std::uint64_t n = 0;
      const core::NextStatus status = reader->next(view, n);
      if (status == core::NextStatus::empty) break;
      if (status == core::NextStatus::lost) {
        lost += n;
        continue;
      }
      REQUIRE(view.samples == kPacketSamples);
      for (std::uint32_t i = 0; i < view.samples; ++i) {
        std::int16_t v = 0;
        std::memcpy(&v, view.data + 2 * i, 2);
        if (v != static_cast<std::int16_t>(acq::udpgen_sample(id, view.sequence * kPacketSamples + i))) ++wrong;
      }
      REQUIRE(reader->done(view));
      ++blocks;
    }
    CHECK(wrong == 0);
    CHECK(blocks == st["blocks_published"]);
    CHECK(lost == tx["packets_dropped"]);
  }
}

}  // namespace

TEST_SUITE("acquisition.udp.cli") {

TEST_CASE("weir udp counts exactly the samples weir udpgen dropped and publishes them as gap blocks") {
  SUBCASE("VITA 49 with sample-count timestamps") { loopback("vita49"); }
  SUBCASE("raw") { loopback("raw"); }
}

TEST_CASE("weir udp writes its counters and clock provenance to keys") {
  test::ScratchArena scratch("udpk");
  BackgroundWeir rx({"udp", scratch.name(), "--part", "dig", "--stream", "5=adc0", "--dtype", "i16", "--rate", "1000",
                     "--block", "64"});
  REQUIRE(test::eventually([&] { return bound_port(scratch.arena(), "dig") != 0; },
                           std::chrono::duration_cast<std::chrono::milliseconds>(kReady)));
  const auto gen = run_weir({"udpgen", "--port", std::to_string(bound_port(scratch.arena(), "dig")), "--first-id",
                             "5", "--rate", "1000", "--samples", "64", "--packets", "20", "--fast", "--drop-every",
                             "5"});
  REQUIRE(gen.exit_code == 0);
  REQUIRE(rx.signal(SIGTERM));
  REQUIRE(rx.wait_exit(std::chrono::seconds(30)) == 0);
  core::KvStore kv(scratch.arena());
  std::uint64_t bits = 0;
  core::ValueType type{};
  REQUIRE(kv.get_scalar("dig.adc0.lost", bits, type) == core::KvStatus::ok);
  CHECK(type == core::ValueType::u64);
  CHECK(bits == 3 * 64);  // packets 5, 10, 15 of 20
  REQUIRE(kv.get_scalar("dig.adc0.packets", bits, type) == core::KvStatus::ok);
  CHECK(bits == 17);
  REQUIRE(kv.get_scalar("dig.rcvbuf_bytes", bits, type) == core::KvStatus::ok);
  CHECK(bits > 0);
  REQUIRE(kv.get_scalar("dig.malformed.bad_magic", bits, type) == core::KvStatus::ok);
  CHECK(bits == 0);
  std::array<std::byte, 256> text{};
  core::ValueInfo info;
  REQUIRE(kv.get("dig.adc0.clock", text, info) == core::KvStatus::ok);
  const std::string clock(reinterpret_cast<const char*>(text.data()), info.length);
  CHECK(clock.find("packet: VITA 49 TSI utc, TSF sample_count") == 0);
}

TEST_CASE("weir udp joins a multicast group and receives what udpgen sends to it") {
  test::ScratchArena scratch("udpmc");
  BackgroundWeir rx({"udp", scratch.name(), "--stream", "1=adc0", "--dtype", "i16", "--rate", "1000", "--block", "64",
                     "--group", "239.255.77.1", "--json"});
  const bool bound = test::eventually([&] { return bound_port(scratch.arena(), "udp") != 0; },
                                      std::chrono::duration_cast<std::chrono::milliseconds>(kReady));
  if (!bound) {
    REQUIRE(rx.wait_exit(std::chrono::seconds(30)) != kStillRunningForTests);
    MESSAGE("skipped: this host cannot join an IPv4 multicast group (no multicast route?): ", rx.output());
    return;
  }
  const auto gen = run_weir({"udpgen", "--dest", "239.255.77.1", "--port",
                             std::to_string(bound_port(scratch.arena(), "udp")), "--rate", "1000", "--samples", "64",
                             "--packets", "10", "--fast"});
  REQUIRE(gen.exit_code == 0);
  REQUIRE(rx.signal(SIGINT));
  REQUIRE(rx.wait_exit(std::chrono::seconds(30)) == 0);
  const auto got = test::parse_json(rx.output());
  REQUIRE_MESSAGE(got.is_object(), rx.output());
  CHECK(got["joined_group"] == true);
  CHECK(got["streams"][0]["samples"] == 640);
  CHECK(got["streams"][0]["blocks_published"] == 10);
}

TEST_CASE("weir udp refuses bad input with a message naming the part and the input") {
  test::ScratchArena scratch("udpbad");
  const std::vector<std::string> base{"udp", scratch.name(), "--part", "dig", "--dtype", "i16", "--rate", "1000",
                                      "--block", "64", "--seconds", "1"};
  const auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return run_weir(args);
  };
  SUBCASE("an unknown format") {
    const auto r = run({"--stream", "1=adc0", "--format", "vita50"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("udp part 'dig'") != std::string::npos);
    CHECK(r.err.find("'vita50'") != std::string::npos);
  }
  SUBCASE("a port in use") {
    const HeldPort held;
    const auto r = run({"--stream", "1=adc0", "--port", std::to_string(held.port)});
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("udp part 'dig'") != std::string::npos);
    CHECK(r.err.find(":" + std::to_string(held.port)) != std::string::npos);
    CHECK(r.err.find("in use") != std::string::npos);
  }
  SUBCASE("a stream mapping without '='") {
    const auto r = run({"--stream", "1adc0"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--stream '1adc0'") != std::string::npos);
  }
  SUBCASE("a stream id that is not a number") {
    const auto r = run({"--stream", "x=adc0"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--stream 'x=adc0'") != std::string::npos);
  }
  SUBCASE("one stream id mapped twice") {
    const auto r = run({"--stream", "1=adc0", "--stream", "1=adc1"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("stream id 1 is mapped twice") != std::string::npos);
  }
  SUBCASE("a channel that does not exist, without settings to create it") {
    const auto r = run_weir({"udp", scratch.name(), "--part", "dig", "--stream", "1=nosuch", "--seconds", "1"});
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("udp part 'dig'") != std::string::npos);
    CHECK(r.err.find("'nosuch' does not exist") != std::string::npos);
  }
  SUBCASE("a multicast group that is not a multicast address") {
    const auto r = run({"--stream", "1=adc0", "--group", "10.1.2.3"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("udp part 'dig'") != std::string::npos);
    CHECK(r.err.find("'10.1.2.3' is not a multicast address") != std::string::npos);
  }
  SUBCASE("a multicast group that is not an address at all") {
    const auto r = run({"--stream", "1=adc0", "--group", "lab-digitizers"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("udp part 'dig'") != std::string::npos);
    CHECK(r.err.find("'lab-digitizers' is not a numeric IPv4 or IPv6 address") != std::string::npos);
  }
}

TEST_CASE("weir check refuses a driver \"udp\" with bad settings, naming the line, the part and the key") {
  const test::ScratchDir dir("udpcheck");
  const auto check = [&](const std::string& driver) {
    const auto file = dir.path() / "p.lua";
    std::FILE* f = std::fopen(file.c_str(), "w");
    REQUIRE(f != nullptr);
    std::fprintf(f, "arena { name = \"udpcheck\" }\n"
                    "channel \"adc0\" { dtype = \"i16\", rate = 1e6, block = 1024 }\n%s\n", driver.c_str());
    std::fclose(f);
    return run_weir({"check", file.string()});
  };
  const std::string head = "driver \"udp\" { name = \"dig\", channels = {\"adc0\"}, ";
  CHECK(check(head + "port = 5000, streams = { {id = 1, channel = \"adc0\"} } }").exit_code == 0);
  SUBCASE("an unknown format") {
    const auto r = check(head + "port = 5000, format = \"vita50\", streams = { {id = 1, channel = \"adc0\"} } }");
    CHECK(r.exit_code != 0);
    CHECK(r.err.find("p.lua:3: driver \"dig\": format: unknown packet format 'vita50'") != std::string::npos);
  }
  SUBCASE("a stream to a channel the driver does not write") {
    const auto r = check(head + "port = 5000, streams = { {id = 1, channel = \"adc9\"} } }");
    CHECK(r.exit_code != 0);
    CHECK(r.err.find("driver \"dig\".streams[1]: channel 'adc9' is not one of this driver's channels") !=
          std::string::npos);
  }
  SUBCASE("no port") {
    const auto r = check(head + "streams = { {id = 1, channel = \"adc0\"} } }");
    CHECK(r.exit_code != 0);
    CHECK(r.err.find("port") != std::string::npos);
  }
  SUBCASE("a misspelt key") {
    const auto r = check(head + "port = 5000, rcvbuff = 1, streams = { {id = 1, channel = \"adc0\"} } }");
    CHECK(r.exit_code != 0);
    CHECK(r.err.find("rcvbuff") != std::string::npos);
    CHECK(r.err.find("rcvbuf") != std::string::npos);
  }
  SUBCASE("a multicast group that is not a multicast address") {
    const auto r = check(head + "port = 5000, group = \"10.0.0.1\", streams = { {id = 1, channel = \"adc0\"} } }");
    CHECK(r.exit_code != 0);
    CHECK(r.err.find("driver \"dig\": udp part 'dig': multicast group '10.0.0.1' is not a multicast address") !=
          std::string::npos);
  }
}

TEST_CASE("weir udpgen refuses bad input naming it") {
  SUBCASE("a VITA 49 payload that is not whole words") {
    const auto r = run_weir({"udpgen", "--port", "9", "--rate", "1000", "--samples", "3", "--packets", "1"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("whole 32-bit words") != std::string::npos);
  }
  SUBCASE("a destination that is not an address") {
    const auto r = run_weir({"udpgen", "--dest", "daq-host", "--port", "9", "--rate", "1000", "--samples", "4",
                             "--packets", "1"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("'daq-host'") != std::string::npos);
  }
}

}  // TEST_SUITE
