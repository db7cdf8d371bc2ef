// `weir udp` descheduled through a burst: the process is stopped (SIGSTOP) while the test's own
// VITA 49 writer sends 20,000 packets into a small receive buffer, so the kernel drops most of them
// and the burst ends in drops that no later datagram reports; continued, then stopped by SIGINT, its
// --json report must account for every packet: sent = recorded + source_loss + kernel_drop +
// malformed + duplicate + late, with kernel_drop the socket's own drop count.
#include <doctest/doctest.h>

#include <signal.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "background_weir.hpp"
#include "json.hpp"
#include "live_arena.hpp"
#include "udp_wire.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/kv_store.hpp"

using namespace weir;

namespace {

constexpr auto kReady = std::chrono::seconds(20);
constexpr auto kDrain = std::chrono::milliseconds(20'000);
constexpr std::uint64_t kBurst = 20'000;      // packets sent while the receiver is stopped
constexpr std::uint64_t kAfter = 100;         // packets sent after it continued (the second case)
constexpr std::uint32_t kSamples = 64;        // per packet and per block
constexpr std::uint64_t kRate = 1'000'000;
constexpr std::uint32_t kStreamId = 7;
constexpr const char* kRcvbuf = "65536";      // asked for; the kernel doubles it

std::uint64_t bound_port(const core::Arena& arena) {
  core::KvStore kv(arena);
  std::uint64_t bits = 0;
  core::ValueType type{};
  return kv.get_scalar("udp.port", bits, type) == core::KvStatus::ok ? bits : 0;
}

// Whether the process is stopped (state T in /proc/PID/stat).
bool stopped(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(in, line);
  const auto paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'T';
}

// Packet k of the stream: VITA 49 with a UTC second and a sample-count fraction.
std::vector<std::byte> packet(std::uint64_t k) {
  constexpr std::uint64_t kFirstIndex = 1'700'000'000ULL * kRate;
  test::wire::VitaPacket p;
  p.stream_id = kStreamId;
  p.tsi = 1;
  p.tsf = 1;
  const std::uint64_t index = kFirstIndex + k * kSamples;
  p.integer_ts = static_cast<std::uint32_t>(index / kRate);
  p.fractional_ts = index % kRate;
  p.count = static_cast<std::uint32_t>(k % 16);
  for (std::uint32_t j = 0; j < kSamples; ++j) p.samples.push_back(test::wire::sample_value(0, k * kSamples + j));
  return test::wire::encode(p);
}

void send_range(test::wire::Sender& tx, std::uint64_t from, std::uint64_t to) {
  std::vector<std::vector<std::byte>> bytes;
  for (std::uint64_t k = from; k < to; ++k) bytes.push_back(packet(k));
  std::vector<const std::vector<std::byte>*> datagrams;
  for (const auto& b : bytes) datagrams.push_back(&b);
  tx.send(datagrams);
}

std::uint64_t term(const nlohmann::json& accounting, const char* name) {
  REQUIRE_MESSAGE(accounting.contains(name), "the report's \"accounting\" has no \"", name, "\": ", accounting.dump());
  return accounting[name].get<std::uint64_t>();
}

// Stops `weir udp`, sends the burst, continues it; then sends `after` more packets once it has
// drained, and stops it with SIGINT. Says so, loudly, and checks nothing when the kernel dropped nothing.
void burst_while_stopped(std::uint64_t after) {
  test::ScratchArena scratch("udpstop");
  test::BackgroundWeir rx({"udp", scratch.name(), "--format", "vita49", "--stream", std::to_string(kStreamId) + "=adc0",
                           "--dtype", "i16", "--rate", std::to_string(kRate), "--block", std::to_string(kSamples),
                           "--ring", "32768", "--rcvbuf", kRcvbuf, "--json"});
  REQUIRE(test::eventually([&] { return bound_port(scratch.arena()) != 0; },
                           std::chrono::duration_cast<std::chrono::milliseconds>(kReady)));
  const auto port = static_cast<std::uint16_t>(bound_port(scratch.arena()));
  test::wire::Sender tx(port);
  send_range(tx, 0, 3);  // the stream starts while it runs
  REQUIRE(test::wire::drained(port, kDrain));

  REQUIRE(rx.signal(SIGSTOP));
  REQUIRE(test::eventually([&] { return stopped(rx.pid()); }, std::chrono::milliseconds(5000)));
  send_range(tx, 3, kBurst);
  const test::wire::SocketQueue full = test::wire::socket_queue(port);
  REQUIRE(rx.signal(SIGCONT));
  REQUIRE_MESSAGE(test::wire::drained(port, kDrain), "weir udp did not drain its socket after SIGCONT");
  if (after > 0) {
    send_range(tx, kBurst, kBurst + after);
    REQUIRE(test::wire::drained(port, kDrain));
  }
  const std::uint64_t drops = test::wire::socket_queue(port).drops;
  REQUIRE(rx.signal(SIGINT));
  REQUIRE(rx.wait_exit(std::chrono::seconds(30)) == 0);
  const auto got = test::parse_json(rx.output());
  REQUIRE_MESSAGE(got.is_object(), rx.output());
  INFO("weir udp said: ", rx.output());
  if (drops == 0) {
    MESSAGE("SKIPPED: the kernel dropped nothing of ", kBurst, " packets sent into a stopped receiver (rcvbuf ",
            got["rcvbuf_granted"], " bytes granted, ", full.queued_bytes, " bytes queued): nothing to account for");
    return;
  }
  REQUIRE_MESSAGE(got.contains("accounting"), "no \"accounting\" in the report");
  const nlohmann::json& a = got["accounting"];
  const std::uint64_t sent = kBurst + after;
  const std::uint64_t recorded = term(a, "recorded"), source_loss = term(a, "source_loss"),
                      kernel_drop = term(a, "kernel_drop"), malformed = term(a, "malformed"),
                      duplicate = term(a, "duplicate"), late = term(a, "late");
  CHECK(recorded + source_loss + kernel_drop + malformed + duplicate + late == sent);
  CHECK(kernel_drop == drops);  // the socket's own count, every one of them
  CHECK(kernel_drop > 0);
  CHECK(recorded == got["datagrams"].get<std::uint64_t>());  // every datagram that came was clean and placed
  CHECK(source_loss == 0);
  CHECK(malformed == 0);
  CHECK(duplicate == 0);
  CHECK(late == 0);
  MESSAGE(sent, " sent: ", recorded, " recorded, ", kernel_drop, " dropped by the kernel (rcvbuf ",
          got["rcvbuf_granted"], " bytes, ", full.queued_bytes, " bytes queued when it was continued)");

  // The channel: the packets that came, then (when later packets showed it) one run of gap blocks
  // for what the kernel dropped, labelled so.
  auto reader = core::ChannelReader::open(scratch.arena(), "adc0", core::ConsumerPolicy::lossy, "sigstop-test",
                                          core::StartAt::oldest);
  REQUIRE(reader);
  std::uint64_t blocks = 0, gaps = 0, other_reasons = 0, wrong = 0;
  for (;;) {
    core::BlockView view;
    std::uint64_t n = 0;
    const core::NextStatus status = reader->next(view, n);
    if (status == core::NextStatus::empty) break;
    if (status == core::NextStatus::lost) {
      gaps += n;
      other_reasons += core::lost_reason(view.flags) == core::GapReason::kernel_drop ? 0 : n;
      continue;
    }
    for (std::uint32_t i = 0; i < view.samples; ++i) {
      std::int16_t v = 0;
      std::memcpy(&v, view.data + 2 * i, 2);
      wrong += v != test::wire::sample_value(0, view.sequence * kSamples + i);
    }
    REQUIRE(reader->done(view));
    ++blocks;
  }
  CHECK(wrong == 0);
  CHECK(blocks == recorded);
  CHECK(other_reasons == 0);
  CHECK(gaps == (after > 0 ? kernel_drop : 0));  // a burst that ends in drops leaves no gap: nothing came after
}

}  // namespace

TEST_SUITE("acquisition.udp.sigstop") {

TEST_CASE("weir udp stopped through a burst of 20,000 packets accounts for every one of them") {
  SUBCASE("the burst ends in drops") { burst_while_stopped(0); }
  SUBCASE("packets after the burst show its drops as a gap") { burst_while_stopped(kAfter); }
}

}  // TEST_SUITE
