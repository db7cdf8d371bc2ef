// `weir kafka send|recv|mock`: channels and keys to Kafka in the ESS schemas (se00, f144, x5f2),
// a topic's se00 messages back into a channel with every missing counter a gap, and librdkafka's
// mock cluster for trying it without one (docs/design/kafka.md). Ctrl-C stops and reports. `weir run`
// starts a pipeline's `kafka "send"` and `driver "kafka"` as `--pipeline FILE --part NAME`.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

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
  std::string pipeline, part;
  bool json = false;
};

struct RecvArgs {
  std::string where;
  kafka::ReceiverOptions o;
  std::vector<std::string> properties;
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
                       .number("sent", c.sent)
                       .number("delivered", c.delivered)
                       .number("failed", c.failed)
                       .number("dropped", c.dropped)
                       .number("gaps", c.gaps)
                       .number("lost", c.lost)
                       .number("bytes", c.bytes)
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
                   .number("unflushed", r->unflushed)
                   .real("elapsed_s", r->elapsed_s)
                   .raw("channels", channels.str()));
  } else {
    fmt::print("kafka send {} from {} to {} topic {} ({}): {:.3f} s\n", o.name, args.where, o.brokers, o.topic,
               o.lossy ? "lossy" : "lossless", r->elapsed_s);
    fmt::print("  {} blocks sent, {} delivered, {} failed, {} dropped (sink_overflow), {} gap blocks passed on, {} lost "
               "here; {} waits for the queue ({:.1f} ms); {} key updates, {} keys skipped; {} left unflushed\n",
               r->sent, r->delivered, r->failed, r->dropped, r->gaps, r->lost, r->waits,
               static_cast<double>(r->wait_ns) / kNsPerMsKafka, r->keys_sent, r->keys_skipped, r->unflushed);
    for (const auto& c : r->channels)
      fmt::print("  {:<24} {:>10} sent {:>10} delivered {:>8} dropped {:>8} lost\n", c.name, c.sent, c.delivered,
                 c.dropped, c.lost);
  }
  return r->unflushed == 0 ? kExitOk : kExitError;
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
  }
  if (auto ok = kafka::validate(o); !ok) return report_usage(ok.error().what);
  auto arena = open_arena(args.where, Access::read_write);
  if (!arena) return kExitError;
  const StopSignals signals;
  auto r = kafka::run_receiver(*arena, o, StopSignals::flag());
  if (!r) return report_error("", r.error());
  if (args.json) {
    JsonObject reasons;
    for (std::size_t i = 0; i < core::kGapReasonCount; ++i)
      if (r->gaps_by_reason[i] != 0) reasons.number(core::kGapReasonNames[i], r->gaps_by_reason[i]);
    print_json(JsonObject()
                   .text("arena", args.where)
                   .text("name", o.name)
                   .text("topic", o.topic)
                   .text("channel", o.channel)
                   .boolean("created", r->created)
                   .number("partitions", static_cast<std::uint64_t>(r->partitions))
                   .number("received", r->received)
                   .number("gaps", r->gaps)
                   .raw("gaps_by_reason", reasons.str())
                   .number("late", r->late)
                   .number("dropped", r->dropped)
                   .number("refused", r->refused)
                   .number("other", r->other)
                   .number("malformed", r->malformed)
                   .number("errors", r->errors)
                   .number("bytes", r->bytes)
                   .real("elapsed_s", r->elapsed_s));
  } else {
    fmt::print("kafka recv {} from {} topic {} into {} channel {}: {:.3f} s\n", o.name, o.brokers, o.topic, args.where,
               o.channel, r->elapsed_s);
    std::string reasons;
    for (std::size_t i = 0; i < core::kGapReasonCount; ++i)
      if (r->gaps_by_reason[i] != 0) reasons += fmt::format(" {} {}", core::kGapReasonNames[i], r->gaps_by_reason[i]);
    fmt::print("  {} blocks received, {} gap blocks ({}), {} late, {} dropped here, {} refused, {} other messages, "
               "{} malformed, {} consumer errors\n",
               r->received, r->gaps, reasons.empty() ? std::string("none") : reasons.substr(1), r->late, r->dropped,
               r->refused, r->other, r->malformed, r->errors);
  }
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
                            "--ring", "--units"})
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
      "send", "Produce channels as se00 and keys as f144 (idempotent, acks=all); lossless unless --lossy; Ctrl-C "
              "flushes and reports");
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
  add_pipeline_options(*s, send->pipeline, send->part, "kafka \"send\"");
  add_json_flag(*s, send->json);
  bind_action(*s, action, send, &run_send);

  auto recv = std::make_shared<RecvArgs>();
  CLI::App* r = kafka->add_subcommand(
      "recv", "Publish a source's se00 messages into a channel of this arena (created, or attached if it matches); "
              "every missing message counter becomes a gap; Ctrl-C stops and reports");
  add_name_option(*r, recv->where);
  add_client_options(*r, recv->o.name, recv->o.brokers, recv->o.topic, recv->properties);
  r->add_option("--channel", recv->o.channel, "the channel to publish into (required unless --pipeline)");
  r->add_option("--source", recv->o.source, "the se00 source name to take (default: the channel's name)");
  r->add_option("--group", recv->o.group, "consumer group id (default: weir-NAME; offsets are not committed)");
  r->add_option("--block", recv->o.block_samples, "a created channel's samples per block (default: the first message's)");
  r->add_option("--ring", recv->o.ring_blocks, "a created channel's ring, in blocks (a power of two)")->capture_default_str();
  r->add_option("--units", recv->o.units, "a created channel's units");
  r->add_flag("--newest", recv->o.from_newest, "start at the end of each partition, not the beginning");
  add_pipeline_options(*r, recv->pipeline, recv->part, "driver \"kafka\"");
  add_json_flag(*r, recv->json);
  bind_action(*r, action, recv, &run_recv);
}

}  // namespace weir::tools
