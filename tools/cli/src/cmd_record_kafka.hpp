#pragma once
// `weir record --from-kafka`: the options the file-writer adds to `weir record`, and its run.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "weir/recorder/recorder.hpp"

namespace weir::tools {

struct KafkaRecordArgs {
  std::string brokers;  // --from-kafka; empty: a local recording
  std::vector<std::string> topics;
  std::vector<std::string> sources;  // SOURCE or SOURCE=CHANNEL
  std::string control_topic;
  std::string service_id;
  double grace_s = 2;
  double connect_timeout_s = 10;
  std::uint64_t runs = 0;
  std::uint32_t ring_blocks = 1024;
  double arena_mb = 256;
  bool newest = false;
  std::vector<std::string> properties;
};

/// Adds --from-kafka and the file-writer's options to `record`. Thread: main only.
void add_record_kafka_options(CLI::App& record, KafkaRecordArgs& args);

/// Runs the file-writer: `name` the writer's name (the host name when empty), `record` the
/// recorder's options (out: the directory runs go into). Returns the exit status.
int run_record_kafka(const KafkaRecordArgs& args, const std::string& name, const rec::RecordOptions& record, bool json);

}  // namespace weir::tools
