// `weir kafka send|recv|mock`: channels and keys to Kafka in the ESS schemas (se00, hs01, ev44, f144, x5f2),
// a topic's se00 sources back into channels (every missing counter a gap) and its f144 values into
// keys, resuming from the group's committed offsets, and librdkafka's mock cluster for trying it
// without one (docs/design/kafka.md). Ctrl-C stops and reports. `weir run` starts a pipeline's
// `kafka "send"` and `driver "kafka"` as `--pipeline FILE --part NAME`.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "cmd_kafka_run.hpp"
#include "command.hpp"
#include "weir/config/pipeline.hpp"
#include "weir/core/gap_reason.hpp"
#include "weir/kafka/mock_cluster.hpp"
#include "weir/kafka/pipeline_settings.hpp"
#include "weir/kafka/receiver.hpp"
#include "weir/kafka/sender.hpp"
#include "weir/tools/arena_access.hpp"
#include "weir/tools/output.hpp"
#include "weir/tools/stop_signals.hpp"

namespace weir::tools {
namespace {

constexpr double kNsPerMsKafka = 1e6;

struct MockArgs {
  int brokers = 3;
  std::vector<std::string> topics;
  int partitions = 1;
  int replication = 0;
  bool json = false;
};

struct SendArgs {
  std::string where;
  kafka::SenderOptions o;
  std::vector<std::string> properties;
  double wait_ms = static_cast<double>(kafka::kDefaultLosslessWaitNs) / kNsPerMsKafka;
  double status_ms = static_cast<double>(kafka::kDefaultStatusEveryNs) / kNsPerMsKafka;
  double flush_ms = static_cast<double>(kafka::kDefaultFlushNs) / kNsPerMsKafka;
  double gap_carrier_ms = static_cast<double>(kafka::kDefaultGapCarrierNs) / kNsPerMsKafka;
  std::vector<std::string> schemas;
  std::string pipeline, part;
  bool json = false;
};

struct RecvArgs {
  std::string where;
  kafka::ReceiverOptions o;
  std::vector<std::string> channels;
  std::vector<std::string> properties;
  double commit_ms = static_cast<double>(kafka::kDefaultCommitEveryNs) / kNsPerMsKafka;
  std::string pipeline, part;
  bool json = false;
};

// The options of the pipeline file's `kafka "send"` (sender) or `driver "kafka"` called `part`.
template <typename Options>
core::Result<Options> from_pipeline(const std::string& file, const std::string& part) {
  constexpr bool kSender = std::is_same_v<Options, kafka::SenderOptions>;
  auto pipeline = config::load_pipeline(file);
  if (!pipeline) return tl::make_unexpected(pipeline.error());
  if constexpr (kSender) {
    for (const auto& k : pipeline->kafkas)
      if (k.name == part) return kafka::sender_options(k);
  } else {
    for (const auto& d : pipeline->drivers)
      if (d.name == part && d.kind == "kafka") return kafka::receiver_options(d);
  }
  return core::fail(core::Errc::invalid_argument,
                    fmt::format("{}: no {} called '{}'", file, kSender ? "kafka \"send\"" : "driver \"kafka\"", part));
}

core::Result<kafka::Properties> parse_properties(const std::vector<std::string>& texts) {
  kafka::Properties out;
  for (const std::string& t : texts) {
    auto p = kafka::parse_property(t);
    if (!p) return tl::make_unexpected(p.error());
    out.push_back(std::move(*p));
  }
  return out;
}

int run_mock(const MockArgs& args) {
  auto cluster = kafka::MockCluster::start(args.brokers);
  if (!cluster) return report_error("", cluster.error());
  const int replication = args.replication != 0 ? args.replication : std::min(3, args.brokers);
  for (const std::string& topic : args.topics)
    if (auto ok = cluster->create_topic(topic, args.partitions, replication); !ok) return report_error("", ok.error());
  if (args.json) {
    JsonArray topics;
    for (const std::string& t : args.topics) topics.text(t);
    print_json(JsonObject()
                   .text("bootstrap", cluster->bootstraps())
                   .number("brokers", static_cast<std::uint64_t>(args.brokers))
                   .number("partitions", static_cast<std::uint64_t>(args.partitions))
                   .number("replication", static_cast<std::uint64_t>(replication))
                   .raw("topics", topics.str()));
  } else {
    fmt::print("{}\n", cluster->bootstraps());
  }
  std::fflush(stdout);
  fmt::print(stderr, "kafka mock: {} brokers (librdkafka's mock cluster) at {}; topics made on first use, or {} "
                     "partition(s) with replication {} for --topic; Ctrl-C stops\n",
             args.brokers, cluster->bootstraps(), args.partitions, replication);
  const StopSignals signals;
  while (!StopSignals::flag().load(std::memory_order_relaxed)) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return kExitOk;
}

int run_send(const SendArgs& args) {
  kafka::SenderOptions o = args.o;
  if (!args.pipeline.empty()) {
    auto loaded = from_pipeline<kafka::SenderOptions>(args.pipeline, args.part);
    if (!loaded) return report_error("kafka send", loaded.error());
    o = std::move(*loaded);
  } else {
    auto props = parse_properties(args.properties);
    if (!props) return report_usage(props.error().what);
    o.properties = std::move(*props);
    if (o.name.empty()) o.name = host_name_or("weir").substr(0, 48);
    o.lossless_wait_ns = static_cast<std::int64_t>(args.wait_ms * kNsPerMsKafka);
    o.status_every_ns = static_cast<std::int64_t>(args.status_ms * kNsPerMsKafka);
    o.flush_ns = static_cast<std::int64_t>(args.flush_ms * kNsPerMsKafka);
    o.gap_carrier_ns = static_cast<std::int64_t>(args.gap_carrier_ms * kNsPerMsKafka);
    for (const std::string& text : args.schemas) {  // CHANNEL_GLOB=SCHEMA; validate() names a bad one
      const std::size_t eq = text.rfind('=');
      o.schemas.push_back(eq == std::string::npos ? kafka::SchemaChoice{text, ""}
                                                  : kafka::SchemaChoice{text.substr(0, eq), text.substr(eq + 1)});
    }
  }
  if (auto ok = kafka::validate(o); !ok) return report_usage(ok.error().what);
  auto arena = open_arena(args.where, Access::read_write);
  if (!arena) return kExitError;
  const StopSignals signals;
  auto r = kafka::run_sender(*arena, o, StopSignals::flag());
  if (!r) return report_error("", r.error());
  if (args.json) {
    JsonArray channels;
    for (const auto& c : r->channels)
      channels.raw(JsonObject()
                       .text("name", c.name)
                       .text("schema", c.schema)
                       .number("sent", c.sent)
                       .number("delivered", c.delivered)
                       .number("failed", c.failed)
                       .number("dropped", c.dropped)
                       .number("gaps", c.gaps)
                       .number("lost", c.lost)
                       .number("bytes", c.bytes)
                       .number("carriers", c.carriers)
                       .number("events_dropped", c.events_dropped)
                       .number("frames_cut", c.frames_cut)
                       .str());
    print_json(JsonObject()
                   .text("arena", args.where)
                   .text("name", o.name)
                   .text("brokers", o.brokers)
                   .text("topic", o.topic)
                   .boolean("lossless", !o.lossy)
                   .number("sent", r->sent)
                   .number("delivered", r->delivered)
                   .number("failed", r->failed)
                   .number("dropped", r->dropped)
                   .number("gaps", r->gaps)
                   .number("lost", r->lost)
                   .number("bytes", r->bytes)
                   .number("waits", r->waits)
                   .number("wait_ns", r->wait_ns)
                   .number("keys_sent", r->keys_sent)
                   .number("keys_skipped", r->keys_skipped)
                   .number("status_sent", r->status_sent)
                   .number("carriers", r->carriers)
                   .number("events_dropped", r->events_dropped)
                   .number("frames_cut", r->frames_cut)
                   .number("unflushed", r->unflushed)
                   .real("elapsed_s", r->elapsed_s)
                   .raw("channels", channels.str()));
  } else {
    fmt::print("kafka send {} from {} to {} topic {} ({}): {:.3f} s\n", o.name, args.where, o.brokers, o.topic,
               o.lossy ? "lossy" : "lossless", r->elapsed_s);
    fmt::print("  {} messages sent, {} delivered, {} failed, {} dropped (sink_overflow), {} gap blocks passed on, {} lost "
               "here; {} waits for the queue ({:.1f} ms); {} key updates, {} keys skipped; {} left unflushed\n",
               r->sent, r->delivered, r->failed, r->dropped, r->gaps, r->lost, r->waits,
               static_cast<double>(r->wait_ns) / kNsPerMsKafka, r->keys_sent, r->keys_skipped, r->unflushed);
    fmt::print("  {} gap carriers, {} events dropped (ev44: outside int32), {} frames cut (hs01)\n", r->carriers,
               r->events_dropped, r->frames_cut);
    for (const auto& c : r->channels)
      fmt::print("  {:<24} {} {:>10} sent {:>10} delivered {:>8} dropped {:>8} lost {:>6} carriers\n", c.name,
                 c.schema, c.sent, c.delivered, c.dropped, c.lost, c.carriers);
  }
  return r->unflushed == 0 ? kExitOk : kExitError;
}

// --channel NAME (with --source), or --channel SOURCE=CHANNEL / NAME repeated, into the options.
core::Result<void> parse_routes(const std::vector<std::string>& channels, kafka::ReceiverOptions& o) {
  if (channels.size() == 1 && channels[0].find('=') == std::string::npos) {
    o.channel = channels[0];
    return {};
  }
  if (!o.source.empty())
    return core::fail(core::Errc::invalid_argument, "kafka recv: --source goes with one --channel; give several as "
                                                    "--channel SOURCE=CHANNEL");
  for (const std::string& c : channels) {
    const std::size_t eq = c.find('=');
    if (eq == std::string::npos) {
      o.routes.push_back({c, c});
    } else if (eq == 0) {
      return core::fail(core::Errc::invalid_argument,
                        fmt::format("kafka recv: --channel '{}': give SOURCE=CHANNEL or CHANNEL", c));
    } else {
      o.routes.push_back({c.substr(0, eq), c.substr(eq + 1)});
    }
  }
  return {};
}

void print_recv(const RecvArgs& args, const kafka::ReceiverOptions& o, const kafka::ReceiverReport& r) {
  const auto reasons_of = [](const auto& by_reason) {
    std::string text;
    for (std::size_t i = 0; i < core::kGapReasonCount; ++i)
      if (by_reason[i] != 0) text += fmt::format(" {} {}", core::kGapReasonNames[i], by_reason[i]);
    return text.empty() ? std::string("none") : text.substr(1);
  };
  if (args.json) {
    const auto reasons_json = [](const auto& by_reason) {
      JsonObject reasons;
      for (std::size_t i = 0; i < core::kGapReasonCount; ++i)
        if (by_reason[i] != 0) reasons.number(core::kGapReasonNames[i], by_reason[i]);
      return reasons.str();
    };
    JsonArray sources;
    for (const kafka::ReceiverSourceReport& s : r.sources)
      sources.raw(JsonObject()
                      .text("name", s.name)
                      .text("channel", s.channel)
                      .boolean("created", s.created)
                      .boolean("resumed", s.resumed)
                      .number("received", s.received)
                      .number("gaps", s.gaps)
                      .raw("gaps_by_reason", reasons_json(s.gaps_by_reason))
                      .number("late", s.late)
                      .number("dropped", s.dropped)
                      .number("carriers", s.carriers)
                      .number("refused", s.refused)
                      .number("bytes", s.bytes)
                      .str());
    JsonArray partitions;
    for (const kafka::ReceiverPartitionReport& p : r.partition_offsets)
      partitions.raw(JsonObject()
                         .number("partition", p.partition)
                         .number("committed_at_start", p.committed_at_start)
                         .number("first", p.first)
                         .number("next", p.next)
                         .number("offset_gaps", p.offset_gaps)
                         .str());
    print_json(JsonObject()
                   .text("arena", args.where)
                   .text("name", o.name)
                   .text("topic", o.topic)
                   .text("channel", o.channel)
                   .boolean("created", r.created)
                   .number("partitions", static_cast<std::uint64_t>(r.partitions))
                   .number("received", r.received)
                   .number("gaps", r.gaps)
                   .raw("gaps_by_reason", reasons_json(r.gaps_by_reason))
                   .number("late", r.late)
                   .number("dropped", r.dropped)
                   .number("carriers", r.carriers)
                   .number("refused", r.refused)
                   .number("other", r.other)
                   .number("malformed", r.malformed)
                   .number("errors", r.errors)
                   .number("bytes", r.bytes)
                   .number("offset_gaps", r.offset_gaps)
                   .number("lag", r.lag)
                   .number("commits", r.commits)
                   .number("commit_errors", r.commit_errors)
                   .number("keys_i64", r.keys_i64)
                   .number("keys_u64", r.keys_u64)
                   .number("keys_f64", r.keys_f64)
                   .number("keys_array", r.keys_array)
                   .number("keys_failed", r.keys_failed)
                   .real("elapsed_s", r.elapsed_s)
                   .raw("sources", sources.str())
                   .raw("partition_offsets", partitions.str()));
    return;
  }
  fmt::print("kafka recv {} from {} topic {} into {}: {} source(s), {:.3f} s\n", o.name, o.brokers, o.topic,
             args.where, r.sources.size(), r.elapsed_s);
  fmt::print("  {} blocks received, {} gap blocks ({}), {} late, {} dropped here, {} gap carriers, {} refused, {} other "
             "messages, {} malformed, {} consumer errors\n",
             r.received, r.gaps, reasons_of(r.gaps_by_reason), r.late, r.dropped, r.carriers, r.refused, r.other,
             r.malformed, r.errors);
  fmt::print("  {} offsets gone (offset gaps), lag {} messages, {} commits ({} failed); keys set: {} i64, {} u64, "
             "{} f64, {} arrays, {} failed\n",
             r.offset_gaps, r.lag, r.commits, r.commit_errors, r.keys_i64, r.keys_u64, r.keys_f64, r.keys_array,
             r.keys_failed);
  for (const kafka::ReceiverSourceReport& s : r.sources)
    fmt::print("  {:<24} -> {:<24} {:>10} received {:>8} gaps {:>8} late {:>8} dropped{}\n", s.name, s.channel,
               s.received, s.gaps, s.late, s.dropped, s.resumed ? " (resumed)" : "");
}

int run_recv(const RecvArgs& args) {
  kafka::ReceiverOptions o = args.o;
  if (!args.pipeline.empty()) {
    auto loaded = from_pipeline<kafka::ReceiverOptions>(args.pipeline, args.part);
    if (!loaded) return report_error("kafka recv", loaded.error());
    o = std::move(*loaded);
  } else {
    auto props = parse_properties(args.properties);
    if (!props) return report_usage(props.error().what);
    o.properties = std::move(*props);
    if (o.name.empty()) o.name = host_name_or("weir").substr(0, 48);
    if (auto ok = parse_routes(args.channels, o); !ok) return report_usage(ok.error().what);
    if (!o.source.empty() && o.channel.empty()) return report_usage("kafka recv: --source needs a --channel");
    o.commit_every_ns = static_cast<std::int64_t>(args.commit_ms * kNsPerMsKafka);
  }
  if (auto ok = kafka::validate(o); !ok) return report_usage(ok.error().what);
  auto arena = open_arena(args.where, Access::read_write);
  if (!arena) return kExitError;
  const StopSignals signals;
  auto r = kafka::run_receiver(*arena, o, StopSignals::flag());
  if (!r) return report_error("", r.error());
  print_recv(args, o, *r);
  return kExitOk;
}

void add_client_options(CLI::App& sub, std::string& name, std::string& brokers, std::string& topic,
                        std::vector<std::string>& properties) {
  sub.add_option("--brokers", brokers, "bootstrap servers: HOST:PORT,... (required unless --pipeline)");
  sub.add_option("--topic", topic, "the topic (required unless --pipeline)");
  sub.add_option("--name", name, "this client's name: keys kafka.NAME.* (default: host name)");
  sub.add_option("-X,--property", properties,
                 "librdkafka property KEY=VALUE, over weir's defaults (e.g. security.protocol=SASL_SSL)");
}

// --pipeline FILE --part NAME: run the file's declaration with its settings (the way `weir run`
// starts it); the other options then do not apply.
void add_pipeline_options(CLI::App& sub, std::string& pipeline, std::string& part, const char* what) {
  CLI::Option* file = sub.add_option("--pipeline", pipeline, fmt::format("run the pipeline file's {} called --part", what));
  sub.add_option("--part", part, "the declaration's name in --pipeline")->needs(file);
  file->needs("--part");
  for (const char* other : {"--name", "--brokers", "--topic", "--property", "--channel", "--keys", "--lossy", "--wait-ms", "--queue",
                            "--status-topic", "--status-ms", "--flush-ms", "--newest", "--source", "--group", "--block",
                            "--ring", "--units", "--schema", "--gap-carrier-ms", "--all-sources", "--commit-ms"})
    if (CLI::Option* o = sub.get_option_no_throw(other); o != nullptr) file->excludes(o);
}

}  // namespace

void add_kafka_commands(CLI::App& app, Action& action) {
  CLI::App* kafka = app.add_subcommand("kafka", "Stream channels and keys to Kafka in the ESS schemas, and back");
  kafka->require_subcommand(1);

  auto mock = std::make_shared<MockArgs>();
  CLI::App* m = kafka->add_subcommand(
      "mock", "Run librdkafka's mock cluster (real brokers on loopback) and print its bootstrap address; Ctrl-C stops");
  m->add_option("--brokers", mock->brokers, "how many brokers")->capture_default_str()->check(CLI::Range(1, 16));
  m->add_option("--topic", mock->topics, "topics to make now (others are made on first use)");
  m->add_option("--partitions", mock->partitions, "partitions of each --topic")->capture_default_str()->check(CLI::Range(1, 64));
  m->add_option("--replication", mock->replication, "replicas of each --topic (default: up to 3)")->check(CLI::Range(1, 16));
  add_json_flag(*m, mock->json);
  bind_action(*m, action, mock, &run_mock);

  auto send = std::make_shared<SendArgs>();
  CLI::App* s = kafka->add_subcommand(
      "send", "Produce channels (event channels as ev44, spectra and other framed channels with an axis as hs01, "
              "the rest as se00) and keys as f144 (idempotent, acks=all); lossless unless --lossy; Ctrl-C sends "
              "pending gap runs, flushes and reports");
  add_name_option(*s, send->where);
  add_client_options(*s, send->o.name, send->o.brokers, send->o.topic, send->properties);
  s->add_option("--channel", send->o.channels, "channel names or globs to send (default: every channel)");
  s->add_option("--keys", send->o.keys, "key names or globs to send as f144, each change once");
  s->add_flag("--lossy", send->o.lossy, "drop a block the producer's queue cannot take now (a sink_overflow gap)");
  s->add_option("--wait-ms", send->wait_ms, "lossless: longest wait for the queue per block before it is dropped")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  s->add_option("--queue", send->o.queue_messages, "messages librdkafka may hold unsent")->capture_default_str();
  s->add_option("--status-topic", send->o.status_topic, "send an x5f2 heartbeat to this topic");
  s->add_option("--status-ms", send->status_ms, "heartbeat interval")->capture_default_str()->check(CLI::PositiveNumber);
  s->add_option("--flush-ms", send->flush_ms, "at stop: longest wait for the queue to empty")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  s->add_flag("--newest", send->o.from_newest, "start at each channel's newest block, not the oldest still held");
  s->add_option("--schema", send->schemas,
                "CHANNEL_GLOB=se00|hs01|ev44: send matching channels in this schema (first match wins; default: "
                "ev44 for event channels, hs01 for framed channels with an axis, se00 for the rest)");
  s->add_option("--gap-carrier-ms", send->gap_carrier_ms,
                "a channel with only gaps this long sends them in a gap carrier (no values) at once")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  add_pipeline_options(*s, send->pipeline, send->part, "kafka \"send\"");
  add_json_flag(*s, send->json);
  bind_action(*s, action, send, &run_send);

  auto recv = std::make_shared<RecvArgs>();
  CLI::App* r = kafka->add_subcommand(
      "recv", "Publish se00 sources into channels of this arena (created, or attached if they match) and f144 values "
              "as keys; every missing message counter becomes a gap; offsets committed to the group after "
              "publication, so a restart resumes exactly; Ctrl-C stops and reports");
  add_name_option(*r, recv->where);
  add_client_options(*r, recv->o.name, recv->o.brokers, recv->o.topic, recv->properties);
  r->add_option("--channel", recv->channels,
                "a channel to publish into: NAME (the source of that name, or --source's), or SOURCE=CHANNEL; repeat "
                "for several sources");
  r->add_option("--source", recv->o.source, "with one --channel NAME: the se00 source to take (default: NAME)");
  r->add_flag("--all-sources", recv->o.all_sources,
              "every se00 source on the topic into a channel of its own name (made on its first message)");
  r->add_option("--keys", recv->o.keys, "f144 sources matching these globs set as arena keys of the same name and type");
  r->add_option("--group", recv->o.group,
                "consumer group id, which holds the committed offsets a restart resumes from (default: weir-NAME)");
  r->add_option("--commit-ms", recv->commit_ms, "commit the offsets of what is published this often (and at stop)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  r->add_option("--block", recv->o.block_samples, "a created channel's samples per block (default: the first message's)");
  r->add_option("--ring", recv->o.ring_blocks, "a created channel's ring, in blocks (a power of two)")->capture_default_str();
  r->add_option("--units", recv->o.units, "a created channel's units");
  r->add_flag("--newest", recv->o.from_newest,
              "a partition with no committed offset starts at its end, not its beginning");
  add_pipeline_options(*r, recv->pipeline, recv->part, "driver \"kafka\"");
  add_json_flag(*r, recv->json);
  bind_action(*r, action, recv, &run_recv);

  add_kafka_run_commands(*kafka, action);
}

}  // namespace weir::tools
