#pragma once
// The four measured paths of weir_kafka_bench, each against a topic of the same in-process mock
// cluster: weir's sender (a channel's writer -> run_sender) and a bare librdkafka producer loop of
// messages of the same size; weir's receiver (run_receiver -> a channel) and a bare librdkafka
// consumer loop over the same topic. Private to bench/.
#include <cstddef>
#include <cstdint>
#include <string>

namespace weir::bench::kafka_paths {

struct Timing {
  double seconds = 0;               // first message handed over -> last one delivered (or published)
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;          // Kafka message values
  double client_cpu_s = 0;          // CPU time of the thread driving the client (weir's loop or the bare one)
  double process_cpu_s = 0;         // the whole process: client, librdkafka's threads, the mock brokers, writer
  std::uint64_t failed = 0;         // delivery reports that failed, blocks dropped, messages missing
  [[nodiscard]] double messages_per_s() const { return seconds > 0 ? static_cast<double>(messages) / seconds : 0; }
  [[nodiscard]] double mb_per_s() const { return seconds > 0 ? static_cast<double>(bytes) / seconds / 1e6 : 0; }
};

/// The producer settings both sides use: idempotent, acks=all, linger.ms=5, a queue of 10000.
/// weir's sender: `blocks` f32 blocks of `payload_bytes` written into a channel (ring of 256) by
/// this thread while run_sender follows it losslessly in another; the clock stops when run_sender
/// returns, every message delivered (it is stopped once it has read the last block, then flushes).
[[nodiscard]] Timing weir_send(const std::string& brokers, const std::string& topic, std::size_t payload_bytes,
                               std::uint64_t blocks);
/// The bare loop: `messages` messages of `message_bytes` (weir's se00 message size, so the bytes
/// on the wire match), key "adc0", copied in, retried on a full queue; then flush.
[[nodiscard]] Timing bare_send(const std::string& brokers, const std::string& topic, std::size_t message_bytes,
                               std::uint64_t messages);
/// weir's receiver reading `messages` se00 messages of `topic` into a new channel; the clock
/// stops when the channel holds them all. Starts at client creation, as bare_receive.
[[nodiscard]] Timing weir_receive(const std::string& brokers, const std::string& topic, std::uint64_t messages);
/// The bare loop: assign partition 0 from the beginning, consumer_poll until `messages` arrived,
/// each touched on every cache line.
[[nodiscard]] Timing bare_receive(const std::string& brokers, const std::string& topic, std::uint64_t messages);

}  // namespace weir::bench::kafka_paths
