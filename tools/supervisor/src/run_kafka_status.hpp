#pragma once
// The Kafka parts' share of `weir run`'s status line: messages and bytes per second of each `kafka
// "send"` and `driver "kafka"` from the counters they keep in the arena's keys (kafka.NAME.*), with
// the sender's queue (in_queue) and the receiver's lag (messages behind the high watermark).
#include <cstdint>
#include <string>
#include <vector>

#include "weir/config/pipeline.hpp"
#include "weir/core/arena.hpp"

namespace weir::supervisor {

struct KafkaPartRate {
  std::string name;
  bool sender = true;
  double messages_per_s = 0;   // sent (sender) or received (receiver), over the last interval
  double bytes_per_s = 0;
  std::uint64_t in_queue = 0;  // sender: messages librdkafka holds unacknowledged
  std::uint64_t lag = 0;       // receiver: messages behind the high watermark (0 while unknown)
  bool seen = false;           // its keys exist (the part has published once)
};

class KafkaRates {
 public:
  /// Follows the pipeline's `kafka "send"` parts and `driver "kafka"` parts. Thread: one.
  KafkaRates(const core::Arena& arena, const config::Pipeline& pipeline);
  /// Reads the counters now; rates are over the time since the previous call (a restarted part's
  /// counters begin again at 0: that interval shows no rate).
  std::vector<KafkaPartRate> sample();
  /// " | kafka NAME 1200 msg/s 4.9 MB/s queue 3" per part that has published; "" when none has.
  [[nodiscard]] static std::string text(const std::vector<KafkaPartRate>& rates);

 private:
  struct Followed {
    std::string name;
    bool sender = true;
    std::uint64_t messages = 0, bytes = 0;
  };
  const core::Arena* arena_;
  std::vector<Followed> parts_;
  std::int64_t last_ns_ = 0;
};

}  // namespace weir::supervisor
