// `weir record --from-kafka BROKERS --topic DATA --out DIR [--control-topic CONTROL]`: the NeXus
// file-writer fed from Kafka (weir::kafka_file_writer, kafka/file_writer/). With a control topic it
// writes one run per pl72 run start, ended by the 6s4t run stop of its job id or the start's own
// stop time; without one it records from its start until SIGINT, SIGTERM or --duration. This file
// only registers the options, calls run_file_writer and prints its notices and report.
#include <cstdio>
#include <string>

#include <fmt/format.h>

#include "cmd_record_kafka.hpp"
#include "command.hpp"
#include "weir/kafka_file_writer/file_writer.hpp"
#include "weir/tools/arena_access.hpp"
#include "weir/tools/output.hpp"
#include "weir/tools/stop_signals.hpp"

namespace weir::tools {

namespace {

JsonObject run_json(const kafka::fw::RunReport& r) {
  JsonArray files;
  for (const std::string& f : r.summary.files) files.text(f);
  JsonArray channels;
  for (const auto& [name, c] : r.channels)
    channels.raw(JsonObject()
                     .text("name", name)
                     .number("copied", c.copied)
                     .number("gap_blocks", c.gap_blocks)
                     .number("before", c.before)
                     .number("after", c.after)
                     .number("unplaced", c.unplaced)
                     .number("dropped", c.dropped)
                     .str());
  JsonObject out;
  out.text("job_id", r.job_id)
      .text("run_name", r.run_name)
      .number("run", r.summary.run)
      .text("out", r.out)
      .number("start_ns", static_cast<std::uint64_t>(r.start_ns))
      .number("stop_ns", static_cast<std::uint64_t>(r.stop_ns))
      .text("ended_by", r.ended_by)
      .number("blocks", r.summary.blocks)
      .number("gaps", r.summary.gaps)
      .number("gap_blocks", r.summary.gap_blocks)
      .number("bytes", r.summary.bytes)
      .raw("files", files.str())
      .raw("channels", channels.str());
  if (!r.summary.error.empty()) out.text("error", r.summary.error);
  return out;
}

void print_run(const kafka::fw::RunReport& r) {
  fmt::print("record run {} (job {}, '{}'): ended by {}, {} blocks, {} gap rows ({} blocks missing), {}\n",
             r.summary.run, r.job_id.empty() ? "-" : r.job_id, r.run_name, r.ended_by, r.summary.blocks,
             r.summary.gaps, r.summary.gap_blocks, human_bytes(r.summary.bytes));
  for (const auto& [name, c] : r.channels)
    fmt::print("  {:<24} {:>10} blocks {:>8} gap blocks, {} before the run, {} after, {} unplaced, {} dropped\n", name,
               c.copied, c.gap_blocks, c.before, c.after, c.unplaced, c.dropped);
  for (const std::string& f : r.summary.files) fmt::print("  {}\n", f);
  if (!r.summary.error.empty()) fmt::print("  error: {}\n", r.summary.error);
  std::fflush(stdout);
}

}  // namespace

void add_record_kafka_options(CLI::App& sub, KafkaRecordArgs& a) {
  const std::string group = "From Kafka (the file-writer)";
  sub.add_option("--from-kafka", a.brokers,
                 "record from Kafka: bootstrap servers HOST:PORT,...; NAME becomes the writer's name (default: the "
                 "host name)")
      ->group(group);
  sub.add_option("--topic", a.topics, "data topics (se00 sources)")->group(group);
  sub.add_option("--source", a.sources, "se00 sources to record: SOURCE or SOURCE=CHANNEL")->group(group);
  sub.add_option("--control-topic", a.control_topic,
                 "write one run per pl72 run start on this topic, each ended by its job's 6s4t run stop or its own "
                 "stop time (default: one run from now until stopped)")
      ->group(group);
  sub.add_option("--service-id", a.service_id, "take only run starts with this service id")->group(group);
  sub.add_option("--grace-s", a.grace_s, "after a run's stop time: the longest wait for sources still behind it")
      ->capture_default_str()
      ->check(CLI::PositiveNumber)
      ->group(group);
  sub.add_option("--connect-timeout-s", a.connect_timeout_s, "the longest wait for the control topic's brokers")
      ->capture_default_str()
      ->check(CLI::PositiveNumber)
      ->group(group);
  sub.add_option("--runs", a.runs, "exit after this many runs (default: until SIGINT or SIGTERM)")->group(group);
  sub.add_option("--ring", a.ring_blocks, "each source's ring in blocks (a power of two): how far before a run "
                                          "start the data is still there")
      ->capture_default_str()
      ->group(group);
  sub.add_option("--arena-mb", a.arena_mb, "channel pool of the staging arena and of each run's arena (MiB)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber)
      ->group(group);
  sub.add_flag("--newest", a.newest, "start at each data partition's end, not its beginning")->group(group);
  sub.add_option("-X,--property", a.properties, "librdkafka property KEY=VALUE for every Kafka client")->group(group);
}

int run_record_kafka(const KafkaRecordArgs& args, const std::string& name, const rec::RecordOptions& record, bool json) {
  auto options = kafka::fw::writer_options(args, name.empty() ? host_name_or("weir").substr(0, 32) : name, record);
  if (!options) return report_usage(options.error().what);
  const StopSignals signals(Sigpipe::ignore);
  const auto notice = [](std::string_view line) { print_error(fmt::format("record: {}", line)); };
  const auto on_run = [json](const kafka::fw::RunReport& r) {
    if (!json) print_unless_closed([&] { print_run(r); });
  };
  auto report = kafka::fw::run_file_writer(*options, StopSignals::flag(), on_run, notice);
  if (!report) return report_error("record --from-kafka", report.error());
  if (json) {
    JsonArray runs;
    for (const kafka::fw::RunReport& r : report->runs) runs.raw(run_json(r).str());
    std::uint64_t received = 0, late = 0, gaps = 0;
    for (const kafka::ReceiverReport& r : report->receivers) {
      received += r.received;
      late += r.late;
      gaps += r.gaps;
    }
    print_unless_closed([&] {
      print_json(JsonObject()
                     .text("name", options->name)
                     .raw("runs", runs.str())
                     .number("starts_refused", report->starts_refused)
                     .number("starts_ignored", report->starts_ignored)
                     .number("stops_unknown", report->stops_unknown)
                     .number("other", report->other)
                     .number("malformed", report->malformed)
                     .number("received", received)
                     .number("late", late)
                     .number("gap_blocks_received", gaps));
    });
  }
  for (const kafka::fw::RunReport& r : report->runs)
    if (!r.summary.error.empty()) return kExitError;
  return kExitOk;
}

}  // namespace weir::tools
