// weir_kafka_bench: weir's Kafka sender and receiver against bare librdkafka loops of the same
// message sizes, against the same in-process mock cluster (3 brokers, replication 3) in the same
// run: the producer (idempotent, acks=all, linger.ms=5 on both sides) with 4 KiB and 64 KiB
// payloads, and the consumer over the topic weir's sender filled. Each repetition gets a fresh
// cluster; the order of weir and bare alternates between repetitions. Reported: medians of the
// rates, the median of the per-repetition ratios (weir / bare), and where the CPU went (the
// client's thread against the whole process: librdkafka's threads and the mock brokers).
// Usage: weir_kafka_bench [--reps N] [--quick] [--sizes 4096,65536] [--producer-only]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "kafka_bench_paths.hpp"
#include "weir/kafka/mock_cluster.hpp"

namespace {

using weir::bench::kafka_paths::Timing;
namespace paths = weir::bench::kafka_paths;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct Series {
  std::vector<double> weir_mbps, bare_mbps, ratio, weir_cpu_us, bare_cpu_us, weir_proc_us, bare_proc_us;
  std::uint64_t failed = 0;
  void add(const Timing& w, const Timing& b) {
    weir_mbps.push_back(w.mb_per_s());
    bare_mbps.push_back(b.mb_per_s());
    ratio.push_back(b.messages_per_s() > 0 ? w.messages_per_s() / b.messages_per_s() : 0);
    const auto per = [](double s, const Timing& t) { return t.messages != 0 ? s * 1e6 / static_cast<double>(t.messages) : 0; };
    weir_cpu_us.push_back(per(w.client_cpu_s, w));
    bare_cpu_us.push_back(per(b.client_cpu_s, b));
    weir_proc_us.push_back(per(w.process_cpu_s, w));
    bare_proc_us.push_back(per(b.process_cpu_s, b));
    failed += w.failed + b.failed;
  }
  void print(const char* what, std::size_t payload, std::size_t message_bytes, std::uint64_t messages) const {
    fmt::print("| {} | {} KiB ({} B messages) x {} | {:.0f} | {:.0f} | {:.2f} | {:.1f} / {:.1f} | {:.1f} / {:.1f} | {} |\n",
               what, payload / 1024, message_bytes, messages, median(weir_mbps), median(bare_mbps), median(ratio),
               median(weir_cpu_us), median(bare_cpu_us), median(weir_proc_us), median(bare_proc_us), failed);
    std::fflush(stdout);
  }
};

}  // namespace

int main(int argc, char** argv) {
  int reps = 5;
  bool quick = false, producer_only = false;
  std::vector<std::size_t> sizes{4096, 65536};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--quick") {
      quick = true;
    } else if (a == "--producer-only") {
      producer_only = true;
    } else if (a == "--sizes" && i + 1 < argc) {
      sizes.clear();
      for (std::string rest = argv[++i]; !rest.empty();) {
        const std::size_t comma = rest.find(',');
        sizes.push_back(static_cast<std::size_t>(std::strtoull(rest.substr(0, comma).c_str(), nullptr, 10)));
        rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
      }
    } else {
      fmt::print(stderr, "usage: weir_kafka_bench [--reps N] [--quick] [--sizes BYTES,BYTES] [--producer-only]\n");
      return 2;
    }
  }
  fmt::print("Kafka through librdkafka's mock cluster (3 brokers, replication 3, in this process), medians of {} runs;\n"
             "MB/s of message bytes; ratio = weir / bare in messages/s; CPU us per message: the client's thread / the "
             "whole process\n\n",
             reps);
  fmt::print("| path | messages | weir MB/s | bare MB/s | ratio | client CPU weir / bare | process CPU weir / bare | "
             "failed |\n|---|---|---|---|---|---|---|---|\n");
  std::uint64_t failed = 0;
  for (const std::size_t payload : sizes) {
    const std::uint64_t total_bytes = quick ? (16ULL << 20) : (256ULL << 20);
    const std::uint64_t messages = std::max<std::uint64_t>(200, total_bytes / payload);
    Series send, recv;
    std::size_t message_bytes = 0;
    for (int rep = 0; rep < reps; ++rep) {
      auto cluster = weir::kafka::MockCluster::start(3);
      if (!cluster) {
        fmt::print(stderr, "mock cluster: {}\n", cluster.error().what);
        return 1;
      }
      for (const char* topic : {"weir", "bare"})
        if (auto ok = cluster->create_topic(topic, 1, 3); !ok) {
          fmt::print(stderr, "{}\n", ok.error().what);
          return 1;
        }
      const std::string& brokers = cluster->bootstraps();
      // The first run learns the size of weir's se00 message: the bare loop sends that many bytes.
      Timing ws, bs;
      if (rep % 2 == 0 || message_bytes == 0) {
        ws = paths::weir_send(brokers, "weir", payload, messages);
        if (message_bytes == 0) message_bytes = ws.messages != 0 ? ws.bytes / ws.messages : payload;
        bs = paths::bare_send(brokers, "bare", message_bytes, messages);
      } else {
        bs = paths::bare_send(brokers, "bare", message_bytes, messages);
        ws = paths::weir_send(brokers, "weir", payload, messages);
      }
      send.add(ws, bs);
      if (producer_only) continue;
      // Both consumers read the topic weir's sender filled (se00 messages the receiver decodes).
      Timing wr, br;
      if (rep % 2 == 0) {
        wr = paths::weir_receive(brokers, "weir", messages);
        br = paths::bare_receive(brokers, "weir", messages);
      } else {
        br = paths::bare_receive(brokers, "weir", messages);
        wr = paths::weir_receive(brokers, "weir", messages);
      }
      recv.add(wr, br);
    }
    send.print("producer", payload, message_bytes, messages);
    if (!producer_only) recv.print("consumer", payload, message_bytes, messages);
    failed += send.failed + recv.failed;
  }
  if (failed != 0) fmt::print(stderr, "weir_kafka_bench: {} messages failed, dropped or missing\n", failed);
  return failed == 0 ? 0 : 1;
}
