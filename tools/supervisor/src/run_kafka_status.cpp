#include "run_kafka_status.hpp"

#include <fmt/format.h>

#include "weir/core/clock.hpp"
#include "weir/core/kv_store.hpp"

namespace weir::supervisor {

namespace {

// A u64 key, or nullopt-like false when absent or of another type.
bool read_u64(const core::KvStore& kv, const std::string& key, std::uint64_t& out) noexcept {
  std::uint64_t bits = 0;
  core::ValueType type = core::ValueType::none;
  if (kv.get_scalar(key, bits, type) != core::KvStatus::ok || type != core::ValueType::u64) return false;
  out = bits;
  return true;
}

}  // namespace

KafkaRates::KafkaRates(const core::Arena& arena, const config::Pipeline& pipeline)
    : arena_(&arena), last_ns_(core::monotonic_ns()) {
  for (const auto& k : pipeline.kafkas) parts_.push_back({k.name, true, 0, 0});
  for (const auto& d : pipeline.drivers)
    if (d.kind == "kafka") parts_.push_back({d.name, false, 0, 0});
}

std::vector<KafkaPartRate> KafkaRates::sample() {
  const core::KvStore kv(*arena_);
  const std::int64_t now = core::monotonic_ns();
  const double dt = static_cast<double>(now - last_ns_) / 1e9;
  last_ns_ = now;
  std::vector<KafkaPartRate> out;
  for (Followed& p : parts_) {
    const std::string base = "kafka." + p.name + ".";
    KafkaPartRate r;
    r.name = p.name;
    r.sender = p.sender;
    std::uint64_t messages = 0, bytes = 0;
    r.seen = read_u64(kv, base + (p.sender ? "sent" : "received"), messages);
    (void)read_u64(kv, base + "bytes", bytes);
    (void)read_u64(kv, base + "in_queue", r.in_queue);
    (void)read_u64(kv, base + "lag", r.lag);
    if (dt > 0 && messages >= p.messages && bytes >= p.bytes) {
      r.messages_per_s = static_cast<double>(messages - p.messages) / dt;
      r.bytes_per_s = static_cast<double>(bytes - p.bytes) / dt;
    }
    p.messages = messages;
    p.bytes = bytes;
    out.push_back(std::move(r));
  }
  return out;
}

std::string KafkaRates::text(const std::vector<KafkaPartRate>& rates) {
  std::string out;
  for (const KafkaPartRate& r : rates) {
    if (!r.seen) continue;
    out += fmt::format(" | kafka {} {:.0f} msg/s {:.1f} MB/s {} {}", r.name, r.messages_per_s, r.bytes_per_s / 1e6,
                       r.sender ? "queue" : "lag", r.sender ? r.in_queue : r.lag);
  }
  return out;
}

}  // namespace weir::supervisor
