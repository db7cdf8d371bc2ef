#pragma once
// The file-writer's settings as a command line gives them (text, seconds, MiB), and the checked
// FileWriterOptions made from them. `weir record --from-kafka` fills FileWriterArgs from its options
// (tools/cli/src/cmd_record_kafka.cpp); everything else about them is here.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "weir/core/error.hpp"
#include "weir/kafka_file_writer/file_writer.hpp"
#include "weir/recorder/recorder.hpp"

namespace weir::kafka::fw {

struct FileWriterArgs {
  std::string brokers;               // --from-kafka; empty: a local recording, not the file-writer
  std::vector<std::string> topics;   // data topics
  std::vector<std::string> sources;  // SOURCE or SOURCE=CHANNEL
  std::string control_topic;
  std::string service_id;
  double grace_s = 2;
  double connect_timeout_s = 10;
  std::uint64_t runs = 0;
  std::uint32_t ring_blocks = 1024;
  double arena_mb = 256;
  bool newest = false;
  std::vector<std::string> properties;  // KEY=VALUE librdkafka properties
};

/// "SOURCE" -> {SOURCE, ""}, "SOURCE=CHANNEL" -> {SOURCE, CHANNEL}; fails naming the text when a
/// side of the '=' is empty. Thread: any.
[[nodiscard]] core::Result<SourceRoute> parse_source_route(std::string_view text);

/// The file-writer's options from `args`: `name` the writer's name, `record` the recorder's options
/// (out: the directory runs go into; duration_s: without a control topic, the run's length). Fails
/// naming the option for a bad --source, no --source or --topic, a bad property, or --duration with
/// a control topic (runs end by run stop messages). The rest (brokers, names, --out, ...) is
/// checked by run_file_writer. Thread: any.
[[nodiscard]] core::Result<FileWriterOptions> writer_options(const FileWriterArgs& args, const std::string& name,
                                                             const rec::RecordOptions& record);

}  // namespace weir::kafka::fw
