#pragma once
// `weir record --from-kafka`: the options the file-writer adds to `weir record`, and its run. The
// file-writer itself is weir::kafka_file_writer (kafka/file_writer/); this parses and prints.
#include <string>

#include <CLI/CLI.hpp>

#include "weir/kafka_file_writer/file_writer_args.hpp"
#include "weir/recorder/recorder.hpp"

namespace weir::tools {

using KafkaRecordArgs = kafka::fw::FileWriterArgs;  // brokers empty: a local recording

/// Adds --from-kafka and the file-writer's options to `record`. Thread: main only.
void add_record_kafka_options(CLI::App& record, KafkaRecordArgs& args);

/// Runs the file-writer: `name` the writer's name (the host name when empty), `record` the
/// recorder's options (out: the directory runs go into). Returns the exit status.
int run_record_kafka(const KafkaRecordArgs& args, const std::string& name, const rec::RecordOptions& record, bool json);

}  // namespace weir::tools
