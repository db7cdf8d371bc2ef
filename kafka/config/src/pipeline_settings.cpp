// `kafka "send"` and `driver "kafka"` settings -> SenderOptions and ReceiverOptions, through
// config::Fields so every error names the declaration and the key.
#include "weir/kafka/pipeline_settings.hpp"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "rdkafka_handle.hpp"
#include "weir/config/fields.hpp"

namespace weir::kafka {

namespace {

constexpr std::array kSendKeys{"brokers",   "topic",  "keys",     "lossy",     "wait_ms", "queue",
                               "status_ms", "newest", "flush_ms", "properties", "status_topic"};
constexpr std::array kRecvKeys{"brokers", "topic", "source", "group", "block", "ring", "units", "newest", "properties"};
constexpr double kNsPerMs = 1e6;
constexpr double kMaxMs = 3.6e6;              // an hour: the longest wait, heartbeat or flush a file may ask for
constexpr long long kMaxQueueMessages = 10'000'000;  // librdkafka's own ceiling of queue.buffering.max.messages
constexpr long long kMaxBlockSamples = 1LL << 24;
constexpr long long kMaxRingBlocks = 1LL << 20;

template <typename T>
core::Result<T> fail_at(const config::Fields& f, const std::string& message) {
  return tl::make_unexpected(f.error(message));
}

// A duration in milliseconds, above 0 and at most an hour, as nanoseconds.
core::Result<std::int64_t> millis(config::Fields& f, const char* key, std::int64_t fallback_ns) {
  auto ms = f.number(key, static_cast<double>(fallback_ns) / kNsPerMs);
  if (!ms) return tl::make_unexpected(ms.error());
  if (!(*ms > 0 && *ms <= kMaxMs)) return fail_at<std::int64_t>(f, fmt::format("'{}' must be above 0 and at most 3600000", key));
  return static_cast<std::int64_t>(*ms * kNsPerMs);
}

// brokers and topic, both required; brokers checked entry by entry.
core::Result<void> endpoint(config::Fields& f, std::string& brokers, std::string& topic) {
  if (!f.has("brokers"))
    return fail_at<void>(f, "'brokers' is required: the bootstrap servers, \"HOST:PORT,HOST:PORT\" (`weir kafka mock` "
                            "prints one to try)");
  auto b = f.text("brokers");
  if (!b) return tl::make_unexpected(b.error());
  if (auto ok = check_brokers(*b); !ok) return fail_at<void>(f, "'brokers': " + ok.error().what);
  if (!f.has("topic")) return fail_at<void>(f, "'topic' is required: the Kafka topic");
  auto t = f.text("topic");
  if (!t) return tl::make_unexpected(t.error());
  if (t->empty()) return fail_at<void>(f, "'topic' is empty");
  brokers = *b;
  topic = *t;
  return {};
}

// properties = { ["security.protocol"] = "SASL_SSL", ... }: each one set on a throwaway librdkafka
// configuration now, so a misspelt property or a bad value fails the check, not the run.
core::Result<Properties> properties_of(config::Fields& f) {
  auto table = f.table("properties", false);
  if (!table) return tl::make_unexpected(table.error());
  auto values = table->rest({});
  if (!values) return tl::make_unexpected(values.error());
  Properties out(values->begin(), values->end());
  auto conf = make_conf({}, out, "'properties'");
  if (!conf) return fail_at<Properties>(f, conf.error().what);
  rd_kafka_conf_destroy(*conf);
  return out;
}

}  // namespace

core::Result<void> check_brokers(std::string_view brokers) {
  if (brokers.empty()) return core::fail(core::Errc::invalid_argument, "no brokers; write HOST:PORT,HOST:PORT");
  for (std::size_t at = 0; at <= brokers.size();) {
    const std::size_t comma = std::min(brokers.find(',', at), brokers.size());
    std::string_view entry = brokers.substr(at, comma - at);
    at = comma + 1;
    const std::string shown(entry);
    while (!entry.empty() && entry.front() == ' ') entry.remove_prefix(1);
    while (!entry.empty() && entry.back() == ' ') entry.remove_suffix(1);
    if (const std::size_t scheme = entry.find("://"); scheme != std::string_view::npos) entry.remove_prefix(scheme + 3);
    const std::size_t colon = entry.rfind(':');
    if (entry.empty() || colon == std::string_view::npos || colon == 0)
      return core::fail(core::Errc::invalid_argument,
                        fmt::format("broker '{}' in \"{}\" is not HOST:PORT", shown, brokers));
    const std::string_view port = entry.substr(colon + 1);
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc{} || end != port.data() + port.size() || value == 0 || value > 65535)
      return core::fail(core::Errc::invalid_argument,
                        fmt::format("broker '{}' in \"{}\": port '{}' is not 1 to 65535", shown, brokers, port));
  }
  return {};
}

core::Result<SenderOptions> sender_options(const config::KafkaDecl& decl) {
  config::Fields f(fmt::format("kafka \"{}\"", decl.name), decl.origin, decl.settings);
  SenderOptions o;
  o.name = decl.name;
  o.channels = decl.channels;
  if (auto ok = endpoint(f, o.brokers, o.topic); !ok) return tl::make_unexpected(ok.error());
  auto keys = f.list("keys", false);
  if (!keys) return tl::make_unexpected(keys.error());
  o.keys = *keys;
  auto lossy = f.boolean("lossy", false);
  if (!lossy) return tl::make_unexpected(lossy.error());
  o.lossy = *lossy;
  auto wait = millis(f, "wait_ms", kDefaultLosslessWaitNs);
  if (!wait) return tl::make_unexpected(wait.error());
  o.lossless_wait_ns = *wait;
  auto queue = f.integer("queue", 1, kMaxQueueMessages, kDefaultQueueMessages);
  if (!queue) return tl::make_unexpected(queue.error());
  o.queue_messages = static_cast<int>(*queue);
  auto status_topic = f.text("status_topic", std::string());
  if (!status_topic) return tl::make_unexpected(status_topic.error());
  o.status_topic = *status_topic;
  auto status = millis(f, "status_ms", kDefaultStatusEveryNs);
  if (!status) return tl::make_unexpected(status.error());
  o.status_every_ns = *status;
  auto flush = millis(f, "flush_ms", kDefaultFlushNs);
  if (!flush) return tl::make_unexpected(flush.error());
  o.flush_ns = *flush;
  auto newest = f.boolean("newest", false);
  if (!newest) return tl::make_unexpected(newest.error());
  o.from_newest = *newest;
  auto properties = properties_of(f);
  if (!properties) return tl::make_unexpected(properties.error());
  o.properties = std::move(*properties);
  if (auto ok = f.no_other_keys(kSendKeys); !ok) return tl::make_unexpected(ok.error());
  if (auto ok = validate(o); !ok) return fail_at<SenderOptions>(f, ok.error().what);
  return o;
}

core::Result<ReceiverOptions> receiver_options(const config::DriverDecl& decl) {
  config::Fields f = config::driver_fields(decl);
  ReceiverOptions o;
  o.name = decl.name;
  if (decl.channels.size() != 1)
    return fail_at<ReceiverOptions>(f, fmt::format("'channels' must name exactly one channel (the one it writes), not {}",
                                                   decl.channels.size()));
  o.channel = decl.channels.front();
  if (auto ok = endpoint(f, o.brokers, o.topic); !ok) return tl::make_unexpected(ok.error());
  auto source = f.text("source", std::string());
  if (!source) return tl::make_unexpected(source.error());
  o.source = *source;
  auto group = f.text("group", std::string());
  if (!group) return tl::make_unexpected(group.error());
  o.group = *group;
  auto block = f.integer("block", 0, kMaxBlockSamples, 0);
  if (!block) return tl::make_unexpected(block.error());
  o.block_samples = static_cast<std::uint32_t>(*block);
  auto ring = f.integer("ring", 2, kMaxRingBlocks, o.ring_blocks);
  if (!ring) return tl::make_unexpected(ring.error());
  if ((*ring & (*ring - 1)) != 0) return fail_at<ReceiverOptions>(f, fmt::format("'ring' = {} must be a power of two", *ring));
  o.ring_blocks = static_cast<std::uint32_t>(*ring);
  auto units = f.text("units", std::string());
  if (!units) return tl::make_unexpected(units.error());
  o.units = *units;
  auto newest = f.boolean("newest", false);
  if (!newest) return tl::make_unexpected(newest.error());
  o.from_newest = *newest;
  auto properties = properties_of(f);
  if (!properties) return tl::make_unexpected(properties.error());
  o.properties = std::move(*properties);
  if (auto ok = f.no_other_keys(kRecvKeys); !ok) return tl::make_unexpected(ok.error());
  if (auto ok = validate(o); !ok) return fail_at<ReceiverOptions>(f, ok.error().what);
  return o;
}

core::Result<void> check_kafka_senders(const config::Pipeline& pipeline) {
  for (const auto& k : pipeline.kafkas)
    if (auto o = sender_options(k); !o) return tl::make_unexpected(o.error());
  return {};
}

core::Result<void> check_receiver_driver(const config::Pipeline& /*pipeline*/, const config::DriverDecl& decl) {
  auto o = receiver_options(decl);
  if (!o) return tl::make_unexpected(o.error());
  return {};
}

}  // namespace weir::kafka
