#include "weir/controls/driver_counters.hpp"

#include <fmt/format.h>

#include "weir/core/kv_store.hpp"

namespace weir::controls {

namespace {

// The keys' order: the index of each in CounterKeys.
constexpr const char* kFields[] = {"pvs",     "pvs_connected", "updates",    "connects", "disconnects",
                                   "dropped", "truncated",     "log_blocks", "polled"};

}  // namespace

CounterPublisher::CounterPublisher(const core::Arena& arena, const std::string& part, bool polled)
    : keys_(arena, part + "."), polled_(polled) {
  for (const char* f : kFields)
    if (polled_ || std::string_view(f) != "polled") (void)keys_.add(f);
}

void CounterPublisher::publish(std::uint64_t items, const DriverCounts& counts, std::uint64_t dropped,
                               std::uint64_t log_blocks) {
  const std::uint64_t connected = counts.connected.load(std::memory_order_relaxed);  // relaxed: statistics, each alone
  const std::uint64_t values[] = {items,
                                  connected,
                                  counts.updates.load(std::memory_order_relaxed),
                                  counts.connects.load(std::memory_order_relaxed),
                                  counts.disconnects.load(std::memory_order_relaxed),
                                  dropped,
                                  counts.truncated.load(std::memory_order_relaxed),
                                  log_blocks,
                                  counts.polled.load(std::memory_order_relaxed)};
  for (std::size_t i = 0; i < std::size(values) - (polled_ ? 0 : 1); ++i) keys_.set(i, values[i]);
  keys_.publish(connected == items ? "connected" : fmt::format("connected {}/{}", connected, items));
}

DriverTotals read_totals(const core::Arena& arena, const std::string& part) {
  const core::KvStore kv(arena);
  const auto value = [&](const char* field) {
    std::uint64_t bits = 0;
    core::ValueType type{};
    return kv.get_scalar(part + "." + field, bits, type) == core::KvStatus::ok ? bits : 0;
  };
  DriverTotals t;
  t.connected = value("pvs_connected");
  t.updates = value("updates");
  t.connects = value("connects");
  t.disconnects = value("disconnects");
  t.dropped = value("dropped");
  t.truncated = value("truncated");
  t.log_blocks = value("log_blocks");
  t.polled = value("polled");
  return t;
}

}  // namespace weir::controls
