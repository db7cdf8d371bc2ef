// The receiver: a topic's se00 sources into channels (receiver_route.cpp), its f144 values into keys
// (receiver_keys.cpp), the partitions' offsets committed after publication (receiver_offsets.cpp).
#include "weir/kafka/receiver.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "gap_header.hpp"
#include "rdkafka_handle.hpp"
#include "receiver_keys.hpp"
#include "receiver_offsets.hpp"
#include "receiver_route.hpp"
#include "string_map.hpp"
#include "weir/core/clock.hpp"
#include "weir/core/counter_keys.hpp"
#include "weir/kafka/codec.hpp"

namespace weir::kafka {

namespace {

using core::Errc;
using core::fail;
using core::Result;

constexpr int kPollMs = 100;                        // the loop looks at stop this often
constexpr std::int64_t kReceiverKeysEveryNs = 100'000'000;  // counters, commits and results looked at this often
constexpr std::size_t kNoRoute = static_cast<std::size_t>(-1);

// Whether the runs cover `counter`: a zero-value message that says so carries gaps only.
bool covers(const std::vector<GapRun>& runs, std::int64_t counter) {
  const auto c = static_cast<std::uint64_t>(counter);
  return std::any_of(runs.begin(), runs.end(), [c](const GapRun& r) { return r.first <= c && c - r.first < r.count; });
}

class Receiver {
 public:
  Receiver(const core::Arena& arena, const ReceiverOptions& options, rd_kafka_t* rk)
      : arena_(arena), options_(options), rk_(rk), keys_(arena, "kafka." + options.name + "."),
        offsets_(rk, options) {
    for (auto [index, field] :
         {std::pair{&k_received_, "received"}, {&k_gaps_, "gaps"}, {&k_late_, "late"}, {&k_dropped_, "dropped"},
          {&k_refused_, "refused"}, {&k_other_, "other"}, {&k_malformed_, "malformed"}, {&k_errors_, "errors"},
          {&k_bytes_, "bytes"}, {&k_partitions_, "partitions"}, {&k_carriers_, "carriers"},
          {&k_offset_gaps_, "offset_gaps"}, {&k_lag_, "lag"}, {&k_commits_, "commits"},
          {&k_commit_errors_, "commit_errors"}, {&k_sources_, "sources"}, {&k_keys_i64_, "keys_i64"},
          {&k_keys_u64_, "keys_u64"}, {&k_keys_f64_, "keys_f64"}, {&k_keys_array_, "keys_array"},
          {&k_keys_failed_, "keys_failed"}})
      *index = keys_.add(field);
    runs_.reserve(kMaxGapRuns);
    if (!options.routes.empty()) {
      for (const Route& r : options.routes) add_route(r.source, r.channel.empty() ? r.source : r.channel);
    } else if (!options.channel.empty()) {
      add_route(options.source.empty() ? options.channel : options.source, options.channel);
    }
    if (!options.keys.empty()) key_receiver_.emplace(arena, options.keys, keys_.prefix());
  }

  Result<ReceiverReport> run(const std::atomic<bool>& stop) {
    const std::int64_t start = core::monotonic_ns();
    publish_keys();
    if (auto ok = offsets_.assign(stop); !ok) return tl::make_unexpected(ok.error());
    std::int64_t next_keys = 0;
    while (!stop.load(std::memory_order_relaxed)) {  // a flag: nothing else is ordered by it
      if (rd_kafka_message_t* m = rd_kafka_consumer_poll(rk_, kPollMs)) {
        on_message(*m);
        rd_kafka_message_destroy(m);
      }
      if (const std::int64_t now = core::monotonic_ns(); now >= next_keys) {
        offsets_.tick(now);  // commits only what on_message finished with: it is all published
        publish_keys();
        next_keys = now + kReceiverKeysEveryNs;
      }
    }
    offsets_.finish();
    publish_keys();
    ReceiverReport r = report();
    r.elapsed_s = static_cast<double>(core::monotonic_ns() - start) / 1e9;
    return r;
  }

 private:
  void add_route(const std::string& source, const std::string& channel) {
    by_source_.emplace(source, routes_.size());
    routes_.push_back(std::make_unique<SourceRoute>(arena_, options_, source, channel));
  }

  void on_message(const rd_kafka_message_t& m) {
    if (m.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      if (m.err != RD_KAFKA_RESP_ERR__PARTITION_EOF) ++errors_;
      return;
    }
    const std::span<const std::byte> payload = aligned_payload(m, scratch_);
    const std::string_view id = schema_id(payload);
    if (id == kSe00) {
      on_se00(m, payload);
    } else if (id == kF144 && key_receiver_) {
      on_f144(payload);
    } else {
      ++other_;
    }
    (void)offsets_.consumed(m.partition, m.offset);  // done with: its offset may be committed
  }

  void on_se00(const rd_kafka_message_t& m, std::span<const std::byte> payload) {
    auto block = decode_se00(payload);
    if (!block) {
      ++malformed_;
      return;
    }
    SourceRoute* route = find_route(block->name);
    if (route == nullptr) {
      ++other_;
      return;
    }
    gap_runs(m);
    const bool carrier = block->samples == 0 && covers(runs_, block->counter);
    switch (route->take(*block, runs_, carrier)) {
      case Taken::mismatch: ++malformed_; break;
      case Taken::published:
      case Taken::carried:
      case Taken::held:
      case Taken::late:
      case Taken::dropped:
      case Taken::refused: break;  // counted by the route
    }
  }

  void on_f144(std::span<const std::byte> payload) {
    auto value = decode_f144(payload);
    if (!value) {
      ++malformed_;
      return;
    }
    switch (key_receiver_->take(*value)) {
      case KeyTaken::not_matched: ++other_; break;
      case KeyTaken::set:
      case KeyTaken::failed: break;  // counted by the key receiver
    }
  }

  // The route of a source; with all_sources a new source gets one (cold: once per source), or is
  // refused once, said, when its name cannot be a channel's.
  SourceRoute* find_route(std::string_view source) {
    if (auto it = by_source_.find(source); it != by_source_.end())
      return it->second == kNoRoute ? nullptr : routes_[it->second].get();
    if (!options_.all_sources) return nullptr;
    const std::string name(source);
    if (!channel_name_ok(name)) {
      fmt::print(stderr, "weir kafka recv {}: source '{}' cannot name a channel (1 to 63 printable bytes, no blank or "
                         "'/'): its messages are counted other\n", options_.name, name);
      by_source_.emplace(name, kNoRoute);
      return nullptr;
    }
    add_route(name, name);
    return routes_.back().get();
  }

  void gap_runs(const rd_kafka_message_t& m) {
    runs_.clear();
    rd_kafka_headers_t* headers = nullptr;
    if (rd_kafka_message_headers(&m, &headers) != RD_KAFKA_RESP_ERR_NO_ERROR) return;
    const void* value = nullptr;
    std::size_t size = 0;
    if (rd_kafka_header_get_last(headers, kGapHeader, &value, &size) != RD_KAFKA_RESP_ERR_NO_ERROR || value == nullptr)
      return;
    if (!parse_runs(std::string_view(static_cast<const char*>(value), size), runs_)) ++malformed_;
  }

  [[nodiscard]] ReceiverReport report() const {
    ReceiverReport r;
    for (const auto& route : routes_) {
      const ReceiverSourceReport& s = route->report();
      r.received += s.received;
      r.gaps += s.gaps;
      r.late += s.late;
      r.dropped += s.dropped;
      r.refused += s.refused;
      r.carriers += s.carriers;
      r.bytes += s.bytes;
      r.created = r.created || s.created;
      for (std::size_t i = 0; i < core::kGapReasonCount; ++i) r.gaps_by_reason[i] += s.gaps_by_reason[i];
      r.sources.push_back(s);
    }
    r.other = other_;
    r.malformed = malformed_;
    r.errors = errors_;
    r.offset_gaps = offsets_.offset_gaps();
    r.lag = offsets_.lag();
    r.commits = offsets_.commits();
    r.commit_errors = offsets_.commit_errors();
    if (key_receiver_) {
      r.keys_i64 = key_receiver_->set_i64();
      r.keys_u64 = key_receiver_->set_u64();
      r.keys_f64 = key_receiver_->set_f64();
      r.keys_array = key_receiver_->set_array();
      r.keys_failed = key_receiver_->failed();
    }
    r.partitions = offsets_.partitions();
    r.partition_offsets = offsets_.report();
    return r;
  }

  void publish_keys() {
    std::uint64_t received = 0, gaps = 0, late = 0, dropped = 0, refused = 0, carriers = 0, bytes = 0;
    for (const auto& route : routes_) {
      const ReceiverSourceReport& s = route->report();
      received += s.received;
      gaps += s.gaps;
      late += s.late;
      dropped += s.dropped;
      refused += s.refused;
      carriers += s.carriers;
      bytes += s.bytes;
    }
    keys_.set(k_received_, received);
    keys_.set(k_gaps_, gaps);
    keys_.set(k_late_, late);
    keys_.set(k_dropped_, dropped);
    keys_.set(k_refused_, refused);
    keys_.set(k_carriers_, carriers);
    keys_.set(k_bytes_, bytes);
    keys_.set(k_other_, other_);
    keys_.set(k_malformed_, malformed_);
    keys_.set(k_errors_, errors_);
    keys_.set(k_partitions_, static_cast<std::uint64_t>(offsets_.partitions()));
    keys_.set(k_offset_gaps_, offsets_.offset_gaps());
    keys_.set(k_lag_, offsets_.lag());
    keys_.set(k_commits_, offsets_.commits());
    keys_.set(k_commit_errors_, offsets_.commit_errors());
    keys_.set(k_sources_, routes_.size());
    if (key_receiver_) {
      keys_.set(k_keys_i64_, key_receiver_->set_i64());
      keys_.set(k_keys_u64_, key_receiver_->set_u64());
      keys_.set(k_keys_f64_, key_receiver_->set_f64());
      keys_.set(k_keys_array_, key_receiver_->set_array());
      keys_.set(k_keys_failed_, key_receiver_->failed());
    }
    keys_.publish(offsets_.partitions() > 0 ? "assigned" : "waiting");
  }

  const core::Arena& arena_;
  const ReceiverOptions& options_;
  rd_kafka_t* rk_;
  core::CounterKeys keys_;
  std::size_t k_received_ = 0, k_gaps_ = 0, k_late_ = 0, k_dropped_ = 0, k_refused_ = 0, k_other_ = 0, k_malformed_ = 0,
              k_errors_ = 0, k_bytes_ = 0, k_partitions_ = 0, k_carriers_ = 0, k_offset_gaps_ = 0, k_lag_ = 0,
              k_commits_ = 0, k_commit_errors_ = 0, k_sources_ = 0, k_keys_i64_ = 0, k_keys_u64_ = 0, k_keys_f64_ = 0,
              k_keys_array_ = 0, k_keys_failed_ = 0;
  PartitionOffsets offsets_;
  std::vector<std::unique_ptr<SourceRoute>> routes_;
  StringMap<std::size_t> by_source_;  // -> routes_ index or kNoRoute
  std::optional<KeyReceiver> key_receiver_;
  std::vector<GapRun> runs_;  // the weir.gaps runs of the message at hand
  std::uint64_t other_ = 0, malformed_ = 0, errors_ = 0;
  std::vector<std::byte> scratch_;  // a misaligned payload copied here before it is decoded
};

}  // namespace

Result<void> validate(const ReceiverOptions& o) {
  if (o.name.empty() || o.name.size() > 48)
    return fail(Errc::invalid_argument, fmt::format("kafka recv: name '{}': 1 to 48 bytes", o.name));
  if (o.brokers.empty()) return fail(Errc::invalid_argument, "kafka recv: no --brokers (HOST:PORT,...)");
  if (o.topic.empty()) return fail(Errc::invalid_argument, "kafka recv: no --topic");
  if (o.channel.empty() && o.routes.empty() && !o.all_sources && o.keys.empty())
    return fail(Errc::invalid_argument, "kafka recv: nothing to take: give --channel, --all-sources or --keys");
  if (o.commit_every_ns <= 0 || o.commit_wait_ns < 0)
    return fail(Errc::invalid_argument, "kafka recv: the commit interval must be positive and its wait not negative");
  std::set<std::string_view> sources, channels;
  for (const Route& r : o.routes) {
    const std::string_view channel = r.channel.empty() ? std::string_view(r.source) : std::string_view(r.channel);
    if (r.source.empty()) return fail(Errc::invalid_argument, "kafka recv: a route with no source");
    if (!channel_name_ok(channel))
      return fail(Errc::invalid_argument, fmt::format("kafka recv: channel '{}' of source '{}': 1 to 63 printable "
                                                      "bytes, no blank or '/'", channel, r.source));
    if (!sources.insert(r.source).second)
      return fail(Errc::invalid_argument, fmt::format("kafka recv: source '{}' routed twice", r.source));
    if (!channels.insert(channel).second)
      return fail(Errc::invalid_argument, fmt::format("kafka recv: channel '{}' given to two sources", channel));
  }
  if (o.routes.empty() && !o.channel.empty() && !channel_name_ok(o.channel))
    return fail(Errc::invalid_argument,
                fmt::format("kafka recv: channel '{}': 1 to 63 printable bytes, no blank or '/'", o.channel));
  return {};
}

Result<ReceiverReport> run_receiver(const core::Arena& arena, const ReceiverOptions& options,
                                    const std::atomic<bool>& stop) {
  if (auto ok = validate(options); !ok) return tl::make_unexpected(ok.error());
  const std::string what = "kafka recv " + options.name;
  const Properties defaults{{"bootstrap.servers", options.brokers},
                            {"client.id", "weir-" + options.name},
                            {"group.id", options.group.empty() ? "weir-" + options.name : options.group},
                            {"enable.auto.commit", "false"},
                            {"enable.auto.offset.store", "false"},
                            {"auto.offset.reset", options.from_newest ? "latest" : "earliest"},
                            {"enable.partition.eof", "false"}};
  auto conf = make_conf(defaults, options.properties, what);
  if (!conf) return tl::make_unexpected(conf.error());
  auto client = make_client(RD_KAFKA_CONSUMER, *conf, what);
  if (!client) return tl::make_unexpected(client.error());
  (void)rd_kafka_poll_set_consumer(client->get());
  Result<ReceiverReport> report;
  {
    Receiver receiver(arena, options, client->get());  // its commit queue goes before the client
    report = receiver.run(stop);
  }
  (void)rd_kafka_consumer_close(client->get());
  return report;
}

}  // namespace weir::kafka
