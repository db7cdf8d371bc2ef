#pragma once
// What `weir run` shows while it runs: input rate, losses, lag, restarts and disk written, from the
// arena's own counters (every part keeps them there), as one status line or a periodic log line.
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "run_kafka_status.hpp"
#include "run_supervisor.hpp"
#include "weir/config/pipeline.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/supervisor/run_pipeline.hpp"

namespace weir::supervisor {

struct RunTotals {
  double samples_per_s = 0;  // into the source channels, over the last interval
  double bytes_per_s = 0;
  std::uint64_t samples = 0;  // since the run started (source channels)
  std::uint64_t lost = 0;     // blocks consumers lost (lapped, torn)
  std::uint64_t dropped = 0;  // blocks dropped at the source
  std::uint64_t max_lag = 0;  // blocks, the furthest-behind consumer
  std::uint64_t disk_bytes = 0;
  std::uint64_t errors = 0;   // blocks parts failed to process
  std::string kafka;          // the Kafka parts' rates (KafkaRates::text), "" without any
};

class RunStatus {
 public:
  /// `sources`: the channels drivers write (their rate is the pipeline's input rate).
  RunStatus(const core::Arena& arena, std::set<std::string> sources);
  /// Adds the pipeline's Kafka parts' rates, queue and lag to every line.
  void follow_kafka(const config::Pipeline& pipeline) { kafka_.emplace(*arena_, pipeline); }
  /// Reads the counters now; rates are over the time since the previous call.
  RunTotals sample();
  [[nodiscard]] static std::string line(const RunTotals& t, const Supervisor& s, double elapsed_s);
  /// A table per channel and consumer, for the end of the run.
  [[nodiscard]] std::string summary() const;
  /// The same from a snapshot of the channels.
  [[nodiscard]] static std::string summary(const std::vector<core::ChannelInfo>& channels);

 private:
  const core::Arena* arena_;
  std::set<std::string> sources_;
  std::uint64_t last_samples_ = 0, last_bytes_ = 0;
  std::int64_t last_ns_ = 0;
  std::optional<KafkaRates> kafka_;
};

/// Leaves the part's state, restarts and last exit in the arena's keys (kPartKeyPrefix). Thread: any.
void publish_part(core::KvStore& kv, const PartState& part);

/// What went wrong with the run so far, one line each: parts given up, configuration errors, and
/// (when `at_stop`) essential parts not running as the stop began. Thread: any.
[[nodiscard]] std::vector<std::string> run_failures(const Supervisor& supervisor, bool at_stop);

/// Each part's CPU time next to what it handled: drivers by their channels' counters, shards by
/// their consumer rows (named after the part, or "<part>.<channel>" for a label), recorders by the
/// rows of kind "record:*" on the channels they record. `channels`: a snapshot taken once the run
/// drained, before the shards and recorders left. Thread: any.
[[nodiscard]] std::vector<PartCost> part_costs(const Supervisor& supervisor, const config::Pipeline& pipeline,
                                               const config::Resolved& resolved,
                                               const std::vector<core::ChannelInfo>& channels);

}  // namespace weir::supervisor
