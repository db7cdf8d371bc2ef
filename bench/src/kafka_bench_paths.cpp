#include "kafka_bench_paths.hpp"

#include <librdkafka/rdkafka.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "weir/core/block_copier.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/clock.hpp"
#include "weir/kafka/receiver.hpp"
#include "weir/kafka/sender.hpp"

namespace weir::bench::kafka_paths {

namespace {

constexpr std::size_t kCacheLine = 64;
constexpr std::uint32_t kRingBlocks = 256;
constexpr std::int64_t kWriterWaitNs = 60'000'000'000;   // the writer waits for the sender, never drops
constexpr std::int64_t kGiveUpNs = 120'000'000'000;      // a path that has not finished by then failed
constexpr int kQueueMessages = 10'000;
constexpr auto kPollEvery = std::chrono::microseconds(500);
const std::array<std::pair<const char*, const char*>, 4> kProducerConf{
    {{"enable.idempotence", "true"}, {"acks", "all"}, {"linger.ms", "5"}, {"queue.buffering.max.messages", "10000"}}};

volatile std::uint64_t g_sink = 0;  // the bare consumer's touches, so they are not optimised away

double thread_cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

double process_cpu_s() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

[[noreturn]] void die(const std::string& what) {
  fmt::print(stderr, "weir_kafka_bench: {}\n", what);
  std::exit(1);
}

void set(rd_kafka_conf_t* conf, const char* key, const char* value) {
  std::array<char, 256> err{};
  if (rd_kafka_conf_set(conf, key, value, err.data(), err.size()) != RD_KAFKA_CONF_OK)
    die(fmt::format("{}={}: {}", key, value, err.data()));
}

rd_kafka_t* client(rd_kafka_type_t type, rd_kafka_conf_t* conf) {
  std::array<char, 256> err{};
  rd_kafka_t* rk = rd_kafka_new(type, conf, err.data(), err.size());
  if (rk == nullptr) die(err.data());
  return rk;
}

struct DeliveryCount {
  std::uint64_t ok = 0, failed = 0;
};

void on_delivery(rd_kafka_t* /*rk*/, const rd_kafka_message_t* m, void* opaque) {
  auto* count = static_cast<DeliveryCount*>(opaque);
  (m->err == RD_KAFKA_RESP_ERR_NO_ERROR ? count->ok : count->failed) += 1;
}

// An arena of its own per run, removed at the end.
struct ScratchArena {
  explicit ScratchArena(const std::string& tag) : where(fmt::format("wkb-{}-{}", ::getpid(), tag)) {
    (void)core::Arena::remove(where);
    core::ArenaOptions o;
    o.channel_data_bytes = 64ULL << 20;
    auto a = core::Arena::create(where, o);
    if (!a) die(a.error().what);
    arena.emplace(std::move(*a));
  }
  ~ScratchArena() {
    arena.reset();
    (void)core::Arena::remove(where);
  }
  std::string where;
  std::optional<core::Arena> arena;
};

std::uint64_t blocks_read_by(const core::Arena& arena, const std::string& kind) {
  for (const auto& c : core::list_channels(arena))
    for (const auto& k : c.consumers)
      if (k.kind == kind) return k.blocks_read;
  return UINT64_MAX;  // not registered yet
}

}  // namespace

Timing weir_send(const std::string& brokers, const std::string& topic, std::size_t payload_bytes, std::uint64_t blocks) {
  ScratchArena scratch("send");
  const core::Arena& arena = *scratch.arena;
  core::ChannelSpec spec;
  spec.name = "adc0";
  spec.rate_hz = 1e6;
  spec.samples_per_block = static_cast<std::uint32_t>(payload_bytes / 4);
  spec.ring_blocks = kRingBlocks;
  spec.wait_timeout_ns = kWriterWaitNs;
  if (auto ok = core::create_channel(arena, spec); !ok) die(ok.error().what);
  kafka::SenderOptions o;
  o.name = "bench";
  o.brokers = brokers;
  o.topic = topic;
  o.channels = {"adc0"};
  o.queue_messages = kQueueMessages;
  std::atomic<bool> stop{false};
  kafka::SenderReport report;
  double sender_cpu = 0;
  std::thread sender([&] {
    const double c0 = thread_cpu_s();
    auto r = kafka::run_sender(arena, o, stop);
    sender_cpu = thread_cpu_s() - c0;
    if (!r) die(r.error().what);
    report = *r;
  });
  auto writer = core::ChannelWriter::open(arena, "adc0");
  if (!writer) die(writer.error().what);
  while (blocks_read_by(arena, "kafka:bench") == UINT64_MAX) std::this_thread::sleep_for(kPollEvery);
  std::vector<std::byte> pattern(payload_bytes);
  for (std::size_t i = 0; i < payload_bytes; ++i) pattern[i] = static_cast<std::byte>(i * 131U);
  const std::int64_t t0 = core::monotonic_ns();
  const double cpu0 = process_cpu_s();
  std::uint64_t dropped = 0;
  for (std::uint64_t i = 0; i < blocks; ++i) {
    std::span<std::byte> slot;
    if (writer->claim(slot) != core::ClaimStatus::ok) {
      ++dropped;
      continue;
    }
    std::memcpy(slot.data(), pattern.data(), payload_bytes);
    std::memcpy(slot.data(), &i, sizeof i);
    writer->publish(spec.samples_per_block);
  }
  while (blocks_read_by(arena, "kafka:bench") < blocks - dropped && core::monotonic_ns() - t0 < kGiveUpNs)
    std::this_thread::sleep_for(kPollEvery);
  stop = true;
  sender.join();  // run_sender flushes: every message delivered
  Timing t;
  t.seconds = static_cast<double>(core::monotonic_ns() - t0) / 1e9;
  t.process_cpu_s = process_cpu_s() - cpu0;
  t.client_cpu_s = sender_cpu;
  t.messages = report.delivered;
  t.bytes = report.bytes;
  t.failed = report.failed + dropped + report.dropped + report.lost + report.unflushed + (blocks - report.delivered);
  return t;
}

Timing bare_send(const std::string& brokers, const std::string& topic, std::size_t message_bytes, std::uint64_t messages) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  set(conf, "bootstrap.servers", brokers.c_str());
  for (const auto& [k, v] : kProducerConf) set(conf, k, v);
  DeliveryCount count;
  rd_kafka_conf_set_opaque(conf, &count);
  rd_kafka_conf_set_dr_msg_cb(conf, &on_delivery);
  rd_kafka_t* rk = client(RD_KAFKA_PRODUCER, conf);
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk, topic.c_str(), nullptr);
  std::vector<std::byte> payload(message_bytes);
  for (std::size_t i = 0; i < message_bytes; ++i) payload[i] = static_cast<std::byte>(i * 131U);
  const std::int64_t t0 = core::monotonic_ns();
  const double cpu0 = process_cpu_s(), thread0 = thread_cpu_s();
  for (std::uint64_t i = 0; i < messages;) {
    std::memcpy(payload.data(), &i, sizeof i);
    if (rd_kafka_produce(rkt, 0, RD_KAFKA_MSG_F_COPY, payload.data(), payload.size(), "adc0", 4, nullptr) == 0) {
      ++i;
      (void)rd_kafka_poll(rk, 0);
    } else if (rd_kafka_last_error() == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      (void)rd_kafka_poll(rk, 1);  // wait for delivery reports to make room, as weir's sender does
    } else {
      die(rd_kafka_err2str(rd_kafka_last_error()));
    }
  }
  (void)rd_kafka_flush(rk, static_cast<int>(kGiveUpNs / 1'000'000));
  Timing t;
  t.seconds = static_cast<double>(core::monotonic_ns() - t0) / 1e9;
  t.client_cpu_s = thread_cpu_s() - thread0;
  t.process_cpu_s = process_cpu_s() - cpu0;
  t.messages = count.ok;
  t.bytes = count.ok * message_bytes;
  t.failed = count.failed + (messages - count.ok);
  rd_kafka_topic_destroy(rkt);
  rd_kafka_destroy(rk);
  return t;
}

Timing weir_receive(const std::string& brokers, const std::string& topic, std::uint64_t messages) {
  ScratchArena scratch("recv");
  const core::Arena& arena = *scratch.arena;
  kafka::ReceiverOptions o;
  o.name = "benchrx";
  o.brokers = brokers;
  o.topic = topic;
  o.channel = "adc0";
  o.ring_blocks = kRingBlocks;
  std::atomic<bool> stop{false};
  kafka::ReceiverReport report;
  double receiver_cpu = 0;
  const std::int64_t t0 = core::monotonic_ns();
  const double cpu0 = process_cpu_s();
  std::thread receiver([&] {
    const double c0 = thread_cpu_s();
    auto r = kafka::run_receiver(arena, o, stop);
    receiver_cpu = thread_cpu_s() - c0;
    if (!r) die(r.error().what);
    report = *r;
  });
  std::optional<core::BlockCopier> copier;
  std::int64_t done_ns = 0;
  while (core::monotonic_ns() - t0 < kGiveUpNs) {
    if (!copier)
      if (auto c = core::BlockCopier::open(arena, "adc0")) copier.emplace(std::move(*c));
    if (copier && copier->head() >= messages) {
      done_ns = core::monotonic_ns();
      break;
    }
    std::this_thread::sleep_for(kPollEvery);
  }
  stop = true;
  receiver.join();
  Timing t;
  t.seconds = static_cast<double>((done_ns != 0 ? done_ns : core::monotonic_ns()) - t0) / 1e9;
  t.process_cpu_s = process_cpu_s() - cpu0;
  t.client_cpu_s = receiver_cpu;
  t.messages = report.received;
  t.bytes = report.bytes;
  t.failed = report.gaps + report.late + report.dropped + report.refused + report.malformed +
             (done_ns == 0 ? messages : 0);
  return t;
}

Timing bare_receive(const std::string& brokers, const std::string& topic, std::uint64_t messages) {
  const std::int64_t t0 = core::monotonic_ns();
  const double cpu0 = process_cpu_s(), thread0 = thread_cpu_s();
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  set(conf, "bootstrap.servers", brokers.c_str());
  set(conf, "group.id", "weir-bench-bare");
  set(conf, "enable.auto.commit", "false");
  set(conf, "enable.partition.eof", "false");
  rd_kafka_t* rk = client(RD_KAFKA_CONSUMER, conf);
  (void)rd_kafka_poll_set_consumer(rk);
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(list, topic.c_str(), 0)->offset = RD_KAFKA_OFFSET_BEGINNING;
  if (const rd_kafka_resp_err_t err = rd_kafka_assign(rk, list); err != RD_KAFKA_RESP_ERR_NO_ERROR)
    die(rd_kafka_err2str(err));
  rd_kafka_topic_partition_list_destroy(list);
  Timing t;
  std::uint64_t sink = 0;
  while (t.messages < messages && core::monotonic_ns() - t0 < kGiveUpNs) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 100);
    if (m == nullptr) continue;
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      const auto* d = static_cast<const unsigned char*>(m->payload);
      for (std::size_t off = 0; off < m->len; off += kCacheLine) sink += d[off];
      ++t.messages;
      t.bytes += m->len;
    }
    rd_kafka_message_destroy(m);
  }
  t.seconds = static_cast<double>(core::monotonic_ns() - t0) / 1e9;
  t.client_cpu_s = thread_cpu_s() - thread0;
  t.process_cpu_s = process_cpu_s() - cpu0;
  t.failed = messages - t.messages;
  g_sink = g_sink + sink;
  (void)rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  return t;
}

}  // namespace weir::bench::kafka_paths
