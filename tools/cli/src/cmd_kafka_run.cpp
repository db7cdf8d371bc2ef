// `weir kafka run start|stop`: what NICOS or another experiment control sends the facility's
// file-writer: a pl72 run start (job id, run name, file name, start and stop time, service id,
// metadata) or a 6s4t run stop (job id, stop time), produced to a control topic with acks=all and
// confirmed. Prints the job id (the handle a stop needs).
// `weir kafka run written FILE`: what a file-writer sends when it closed a job's file, a wrdn,
// confirmed the same way; exits 0 only once the cluster has it, so it is a recorder's on_close.
#include <charconv>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cmd_kafka_run.hpp"
#include "time_units.hpp"
#include "weir/core/clock.hpp"
#include "weir/kafka/run_control.hpp"
#include "weir/kafka/run_messages.hpp"
#include "weir/kafka_run_door/run_door.hpp"
#include "weir/tools/stop_signals.hpp"
#include "weir/tools/arena_access.hpp"
#include "weir/tools/output.hpp"

namespace weir::tools {
namespace {

constexpr double kMsPerS = 1000.0;

struct RunArgs {
  kafka::ControlOptions o;
  std::vector<std::string> properties;
  double timeout_s = 10;
  std::string job_id;
  std::string run_name;
  std::string filename;
  std::string start_time = "now";
  std::string stop_time;
  std::string service_id;
  std::string metadata;
  std::string nexus_structure;
  std::string instrument;
  std::string command_id;
  std::string file_name;  // written: the closed file, as given
  std::string message;    // written: e.g. the error
  bool error = false;     // written: the file is not whole
  bool json = false;
};

// "now", "now+S", "now-S" (seconds) or milliseconds since the epoch.
core::Result<std::uint64_t> parse_time_ms(std::string_view text, std::string_view option) {
  const std::int64_t now_ms = core::realtime_ns() / kNsPerMs;
  if (text.starts_with("now")) {
    const std::string_view rest = text.substr(3);
    if (rest.empty()) return static_cast<std::uint64_t>(now_ms);
    double s = 0;
    const auto [end, ec] = std::from_chars(rest.data() + 1, rest.data() + rest.size(), s);
    if ((rest[0] == '+' || rest[0] == '-') && ec == std::errc{} && end == rest.data() + rest.size()) {
      const auto delta = static_cast<std::int64_t>(s * kMsPerS);
      return static_cast<std::uint64_t>(rest[0] == '+' ? now_ms + delta : now_ms - delta);
    }
  } else {
    std::uint64_t ms = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), ms);
    if (ec == std::errc{} && end == text.data() + text.size() && !text.empty()) return ms;
  }
  return core::fail(core::Errc::invalid_argument,
                    fmt::format("{} '{}': give ms since the epoch, now, now+SECONDS or now-SECONDS", option, text));
}

// 16 random bytes as hex, the shape of the ids experiment control makes.
std::string new_job_id() {
  std::random_device rd;
  std::string id;
  for (int i = 0; i < 4; ++i) id += fmt::format("{:08x}", rd());
  return id;
}

// "@FILE" reads the file; anything else is the text itself.
core::Result<std::string> text_or_file(const std::string& value, std::string_view option) {
  if (!value.starts_with('@')) return value;
  std::ifstream in(value.substr(1), std::ios::binary);
  if (!in) return core::fail(core::Errc::not_found, fmt::format("{} {}: cannot read it", option, value.substr(1)));
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

core::Result<kafka::ControlOptions> control_options(const RunArgs& args) {
  kafka::ControlOptions o = args.o;
  for (const std::string& t : args.properties) {
    auto p = kafka::parse_property(t);
    if (!p) return tl::make_unexpected(p.error());
    o.properties.push_back(std::move(*p));
  }
  o.timeout_ns = static_cast<std::int64_t>(args.timeout_s * 1e9);
  return o;
}

int print_sent(const RunArgs& args, std::string_view what, const std::string& job_id, std::uint64_t time_ms) {
  if (args.json)
    print_json(JsonObject()
                   .text("sent", what)
                   .text("job_id", job_id)
                   .text("topic", args.o.topic)
                   .number("time_ms", time_ms));
  else
    fmt::print("{}\n", job_id);
  return kExitOk;
}

int run_start(const RunArgs& args) {
  auto o = control_options(args);
  if (!o) return report_usage(o.error().what);
  kafka::RunStart s;
  auto start = parse_time_ms(args.start_time, "--start-time");
  if (!start) return report_usage(start.error().what);
  s.start_time_ms = *start;
  if (!args.stop_time.empty()) {
    auto stop = parse_time_ms(args.stop_time, "--stop-time");
    if (!stop) return report_usage(stop.error().what);
    if (*stop <= *start)
      return report_usage(fmt::format("--stop-time {} is not after --start-time {}", *stop, *start));
    s.stop_time_ms = *stop;
  }
  s.job_id = args.job_id.empty() ? new_job_id() : args.job_id;
  s.run_name = args.run_name;
  s.filename = args.filename;
  s.service_id = args.service_id;
  s.instrument_name = args.instrument;
  auto metadata = text_or_file(args.metadata, "--metadata");
  if (!metadata) return report_usage(metadata.error().what);
  s.metadata = std::move(*metadata);
  auto structure = text_or_file(args.nexus_structure, "--nexus-structure");
  if (!structure) return report_usage(structure.error().what);
  s.nexus_structure = std::move(*structure);
  s.control_topic = o->topic;
  const std::vector<std::byte> message = kafka::encode_pl72(s);
  if (auto ok = kafka::send_control(*o, message, s.job_id); !ok) return report_error("kafka run start", ok.error());
  return print_sent(args, "pl72", s.job_id, s.start_time_ms);
}

int run_stop(const RunArgs& args) {
  auto o = control_options(args);
  if (!o) return report_usage(o.error().what);
  kafka::RunStop s;
  auto stop = parse_time_ms(args.stop_time.empty() ? std::string("now") : args.stop_time, "--stop-time");
  if (!stop) return report_usage(stop.error().what);
  s.stop_time_ms = *stop;
  s.job_id = args.job_id;
  s.run_name = args.run_name;
  s.service_id = args.service_id;
  s.command_id = args.command_id.empty() ? new_job_id() : args.command_id;
  const std::vector<std::byte> message = kafka::encode_6s4t(s);
  if (auto ok = kafka::send_control(*o, message, s.job_id); !ok) return report_error("kafka run stop", ok.error());
  return print_sent(args, "6s4t", s.job_id, s.stop_time_ms);
}

// `weir kafka run written`: one wrdn for one closed file. Exit 0 only once it is delivered (acks=all),
// anything else is a failure a recorder's hand-off retries.
int run_written(const RunArgs& args) {
  auto o = control_options(args);
  if (!o) return report_usage(o.error().what);
  if (o->name.empty()) o->name = "written";
  kafka::FinishedWriting f;
  f.service_id = args.service_id.empty() ? "weir-" + host_name_or("localhost") : args.service_id;
  f.job_id = args.job_id;
  f.file_name = args.file_name;
  f.error_encountered = args.error;
  f.message = args.message;
  auto metadata = text_or_file(args.metadata, "--metadata");
  if (!metadata) return report_usage(metadata.error().what);
  f.metadata = std::move(*metadata);
  if (f.job_id.empty()) return report_usage("--job-id is empty");
  if (f.file_name.empty()) return report_usage("FILE is empty");
  const std::vector<std::byte> message = kafka::encode_wrdn(f);
  if (auto ok = kafka::send_control(*o, message, f.job_id); !ok)
    return report_error(fmt::format("kafka run written {}", f.file_name), ok.error());
  if (args.json)
    print_json(JsonObject()
                   .text("sent", "wrdn")
                   .text("job_id", f.job_id)
                   .text("service_id", f.service_id)
                   .text("file_name", f.file_name)
                   .text("topic", args.o.topic));
  else
    fmt::print("{}\n", f.file_name);
  return kExitOk;
}

void add_common(CLI::App& sub, RunArgs& a) {
  sub.add_option("--brokers", a.o.brokers, "bootstrap servers: HOST:PORT,...")->required();
  sub.add_option("--topic", a.o.topic, "the control topic the file-writer listens to")->required();
  sub.add_option("--service-id", a.service_id, "the file-writer that should take it (empty: any)");
  sub.add_option("--run-name", a.run_name, "the run's name");
  sub.add_option("--timeout-s", a.timeout_s, "longest wait for the cluster to take the message")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sub.add_option("-X,--property", a.properties, "librdkafka property KEY=VALUE, over weir's defaults");
  add_json_flag(sub, a.json);
}

struct ControlArgs {
  RunArgs client;
  std::string where;
};

// `weir kafka control ARENA`: the control topic's pl72 and 6s4t start and stop the arena's runs.
int run_control(const ControlArgs& args) {
  auto o = control_options(args.client);
  if (!o) return report_usage(o.error().what);
  if (o->name.empty()) o->name = "control";
  auto arena = open_arena(args.where, Access::read_write);
  if (!arena) return kExitError;
  const StopSignals signals;
  auto counts = kafka::follow_run_control(*arena, *o, StopSignals::flag(), [](const std::string& line) {
    print_error(fmt::format("kafka control: {}", line));
  });
  if (!counts) return report_error("kafka control", counts.error());
  fmt::print("kafka control {}: {} run(s) started, {} stopped, {} refused, {} malformed message(s)\n", args.where,
             counts->starts, counts->stops, counts->refused, counts->malformed);
  return kExitOk;
}

}  // namespace

void add_kafka_run_commands(CLI::App& kafka, Action& action) {
  CLI::App* run = kafka.add_subcommand(
      "run", "Start or stop a run of the file-writers listening to a control topic (pl72 / 6s4t, as experiment "
             "control sends them), or say a file was written (wrdn)");
  run->require_subcommand(1);

  auto start = std::make_shared<RunArgs>();
  CLI::App* s = run->add_subcommand("start", "Send a pl72 run start; prints its job id");
  add_common(*s, *start);
  s->add_option("--job-id", start->job_id, "the job's id (default: 32 random hex digits)");
  s->add_option("--filename", start->filename, "the file to write, inside the file-writer's --out (e.g. run_17.nxs)");
  s->add_option("--start-time", start->start_time, "ms since the epoch, now, now+S or now-S: data from here")
      ->capture_default_str();
  s->add_option("--stop-time", start->stop_time, "ms since the epoch, now+S ...: data up to here (default: until a "
                                                "run stop)");
  s->add_option("--metadata", start->metadata, "static metadata (JSON text, or @FILE)");
  s->add_option("--nexus-structure", start->nexus_structure, "the file's NeXus structure (JSON text, or @FILE)");
  s->add_option("--instrument", start->instrument, "the instrument's name");
  bind_action(*s, action, start, &run_start);

  auto stop = std::make_shared<RunArgs>();
  CLI::App* p = run->add_subcommand("stop", "Send a 6s4t run stop for a job");
  add_common(*p, *stop);
  p->add_option("--job-id", stop->job_id, "the job to stop (as run start printed it)")->required();
  p->add_option("--stop-time", stop->stop_time, "ms since the epoch, now, now+S or now-S: data up to here (default: "
                                               "now)");
  p->add_option("--command-id", stop->command_id, "this command's id (default: random)");
  bind_action(*p, action, stop, &run_stop);

  auto written = std::make_shared<RunArgs>();
  CLI::App* w = run->add_subcommand(
      "written", "Send a wrdn (a file finished writing) for FILE and exit 0 once the cluster has it: a recorder's "
                 "on_close = {\"weir\", \"kafka\", \"run\", \"written\", ..., \"{path}\"}");
  w->add_option("--brokers", written->o.brokers, "bootstrap servers: HOST:PORT,...")->required();
  w->add_option("--topic", written->o.topic, "the control topic")->required();
  w->add_option("--job-id", written->job_id, "the job the file belongs to: the pl72's job id, or the run number")
      ->required();
  w->add_option("--service-id", written->service_id, "the writer that wrote it (default: weir-HOSTNAME)");
  w->add_flag("--error", written->error, "the file is not whole (error_encountered)");
  w->add_option("--message", written->message, "e.g. what went wrong");
  w->add_option("--metadata", written->metadata, "metadata (JSON text, or @FILE)");
  w->add_option("--timeout-s", written->timeout_s, "longest wait for the cluster to take the message")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  w->add_option("-X,--property", written->properties, "librdkafka property KEY=VALUE, over weir's defaults");
  w->add_option("FILE", written->file_name, "the closed file, as it goes in file_name (give its full path)")
      ->required();
  add_json_flag(*w, written->json);
  bind_action(*w, action, written, &run_written);

  auto control = std::make_shared<ControlArgs>();
  CLI::App* c = kafka.add_subcommand(
      "control", "Follow a control topic: a pl72 starts a run of the arena (its controlled runs), the 6s4t of the same "
                 "job stops it; refusals are logged; Ctrl-C stops");
  add_name_option(*c, control->where);
  c->add_option("--brokers", control->client.o.brokers, "bootstrap servers: HOST:PORT,...")->required();
  c->add_option("--topic", control->client.o.topic, "the control topic")->required();
  c->add_option("--name", control->client.o.name, "client.id weir-NAME (default: control)");
  c->add_option("--timeout-s", control->client.timeout_s, "longest wait for the topic's metadata")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  c->add_option("-X,--property", control->client.properties, "librdkafka property KEY=VALUE, over weir's defaults");
  bind_action(*c, action, control, &run_control);
}

}  // namespace weir::tools
