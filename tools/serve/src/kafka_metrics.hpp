#pragma once
// The Kafka clients' counters in /metrics: whatever kafka.NAME.* keys `weir kafka send` and `weir
// kafka recv` keep in the arena (a key that is absent is not exported), as weir_kafka_* families
// labelled by the client's name and role (send, recv). Throughput is rate() of the counters.
#include <string>

#include "weir/core/kv_store.hpp"

namespace weir::serve {

/// Appends the weir_kafka_* families for every Kafka client that left keys in `kv`; nothing when
/// there is none. Thread: any.
void append_kafka_metrics(std::string& out, const core::KvStore& kv);

}  // namespace weir::serve
