// The sender: channels as se00, keys as f144, a heartbeat as x5f2, through one idempotent producer.
#include "weir/kafka/sender.hpp"

#include <fnmatch.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <memory>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "weir/core/counter_keys.hpp"
#include "gap_header.hpp"
#include "rdkafka_handle.hpp"
#include "sender_keys.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/clock.hpp"
#include "weir/core/signals.hpp"
#include "weir/kafka/codec.hpp"

namespace weir::kafka {

namespace {

using core::Errc;
using core::fail;
using core::GapReason;
using core::Result;

constexpr std::uint32_t kBatchBlocks = 64;         // blocks per channel per pass, so no channel starves the rest
constexpr std::int64_t kIdleWaitNs = 10'000'000;   // nothing to send: sleep on the channels' groups this long
constexpr std::int64_t kKeysEveryNs = 100'000'000;  // counters published and keys scanned
constexpr std::int64_t kRescanEveryNs = 1'000'000'000;
constexpr int kFullPollMs = 5;                     // lossless, queue full: serve delivery reports this long, try again
constexpr std::int64_t kNsPerMs = 1'000'000;

// Delivery reports land here (the message's opaque), in rd_kafka_poll on the sender's thread.
struct Tally {
  std::uint64_t delivered = 0, failed = 0;
};

struct Outgoing {
  Outgoing(std::string channel, core::ChannelReader r) : name(std::move(channel)), reader(std::move(r)) {}
  std::string name;
  core::ChannelReader reader;
  SampleBlock block;            // the channel's fields filled in once
  std::uint32_t sample_bytes = 0;
  std::vector<GapRun> pending;  // runs not sent since the last message (gap_header.hpp)
  Tally tally;
  SenderChannelReport report;
};

bool matches(const std::vector<std::string>& patterns, const std::string& name) {
  if (patterns.empty()) return true;
  for (const std::string& p : patterns)
    if (fnmatch(p.c_str(), name.c_str(), 0) == 0) return true;
  return false;
}

void on_delivery(rd_kafka_t* /*rk*/, const rd_kafka_message_t* m, void* /*opaque*/) {
  if (m->_private == nullptr) return;
  Tally& t = *static_cast<Tally*>(m->_private);
  if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR)
    ++t.delivered;
  else
    ++t.failed;
}

std::string host_name() {
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 ? std::string(name) : std::string("unknown");
}

class Sender {
 public:
  Sender(const core::Arena& arena, const SenderOptions& options, rd_kafka_t* rk, rd_kafka_topic_t* topic,
         rd_kafka_topic_t* status_topic)
      : arena_(arena), options_(options), rk_(rk), topic_(topic), status_topic_(status_topic),
        keys_(arena, "kafka." + options.name + "."),
        forwarder_(arena, options.keys, keys_.prefix()) {
    for (auto [index, field] : {std::pair{&k_sent_, "sent"}, {&k_delivered_, "delivered"}, {&k_failed_, "failed"},
                                {&k_dropped_, "dropped"}, {&k_gaps_, "gaps"}, {&k_lost_, "lost"}, {&k_waits_, "waits"},
                                {&k_wait_ns_, "wait_ns"}, {&k_bytes_, "bytes"}, {&k_keys_sent_, "keys_sent"},
                                {&k_keys_skipped_, "keys_skipped"}, {&k_status_, "status_sent"},
                                {&k_channels_, "channels"}, {&k_queue_, "in_queue"}})
      *index = keys_.add(field);
    if (auto w = core::Watcher::create(arena); w) watcher_.emplace(std::move(*w));
    status_.software_version = WEIR_KAFKA_VERSION;
    status_.service_id = options.name;
    status_.host_name = host_name();
    status_.process_id = static_cast<std::uint32_t>(::getpid());
    status_.update_interval_ms = static_cast<std::uint32_t>(options.status_every_ns / kNsPerMs);
  }

  Result<SenderReport> run(const std::atomic<bool>& stop) {
    const std::int64_t start = core::monotonic_ns();
    std::int64_t next_rescan = 0, next_keys = 0, next_status = 0;
    while (!stop.load(std::memory_order_relaxed)) {  // a flag: nothing else is ordered by it
      const std::int64_t now = core::monotonic_ns();
      if (now >= next_rescan) {
        if (auto ok = rescan(); !ok) return tl::make_unexpected(ok.error());
        next_rescan = now + kRescanEveryNs;
      }
      std::uint64_t work = 0;
      for (auto& c : channels_) work += pump(*c, stop);
      (void)rd_kafka_poll(rk_, 0);  // delivery reports
      if (now >= next_keys) {
        work += forwarder_.scan([this](std::string_view key, std::span<const std::byte> m) {
          return produce(topic_, m, key, nullptr, &key_tally_) == RD_KAFKA_RESP_ERR_NO_ERROR;
        });
        publish_keys();
        next_keys = now + kKeysEveryNs;
      }
      if (status_topic_ != nullptr && now >= next_status) {
        send_status();
        next_status = now + options_.status_every_ns;
      }
      if (work == 0) idle();
    }
    const auto flush_ms = static_cast<int>(std::min<std::int64_t>(options_.flush_ns / kNsPerMs, INT32_MAX));
    (void)rd_kafka_flush(rk_, flush_ms);
    SenderReport r = totals();
    r.unflushed = static_cast<std::uint64_t>(std::max(0, rd_kafka_outq_len(rk_)));
    publish_keys();
    r.elapsed_s = static_cast<double>(core::monotonic_ns() - start) / 1e9;
    return r;
  }

 private:
  Result<void> rescan() {
    for (const core::ChannelInfo& info : core::list_channels(arena_)) {
      if (!matches(options_.channels, info.name) || refused_.contains(info.name)) continue;
      bool known = false;
      for (auto& c : channels_) known = known || c->name == info.name;
      if (known) continue;
      if (!se00_carries(info.dtype)) {
        fmt::print(stderr, "weir kafka send {}: channel '{}' is {}, which se00 has no array for; not sent\n",
                   options_.name, info.name, core::dtype_name(info.dtype));
        refused_.insert(info.name);
        continue;
      }
      auto reader = core::ChannelReader::open(arena_, info.name,
                                              options_.lossy ? core::ConsumerPolicy::lossy : core::ConsumerPolicy::lossless,
                                              "kafka " + options_.name,
                                              options_.from_newest ? core::StartAt::newest : core::StartAt::oldest);
      if (!reader) return tl::make_unexpected(core::with_context(reader.error(), "follow channel '" + info.name + "'"));
      reader->set_kind("kafka:" + options_.name);
      auto c = std::make_unique<Outgoing>(info.name, std::move(*reader));
      const core::ChannelDesc& d = c->reader.desc();
      c->sample_bytes = d.sample_bytes;
      c->block.name = c->name;
      c->block.dtype = d.dtype;
      c->block.time_delta_ns = info.rate_hz > 0 ? 1e9 / info.rate_hz : 0.0;
      c->pending.reserve(kMaxGapRuns);
      c->report.name = info.name;
      if (watcher_) (void)watcher_->subscribe_channel(info.name);
      channels_.push_back(std::move(c));
    }
    return {};
  }

  // Sends up to kBatchBlocks blocks of one channel; returns how many blocks it handled.
  std::uint64_t pump(Outgoing& c, const std::atomic<bool>& stop) {
    std::uint64_t handled = 0;
    for (std::uint32_t i = 0; i < kBatchBlocks && !stop.load(std::memory_order_relaxed); ++i) {
      core::BlockView view;
      std::uint64_t lost = 0;
      const std::uint64_t at = c.reader.cursor();
      const core::NextStatus next = c.reader.next(view, lost);
      if (next == core::NextStatus::empty) break;
      ++handled;
      if (next == core::NextStatus::lost) {
        if ((view.flags & core::kBlockGapFlag) != 0) {
          c.report.gaps += lost;
          add_run(c.pending, at, lost, core::lost_reason(view.flags));
        } else {  // lapped: the sender was too slow (lossy); to the far side the source lost them
          c.report.lost += lost;
          add_run(c.pending, at, lost, GapReason::source_loss);
        }
        continue;
      }
      c.block.counter = static_cast<std::int64_t>(view.sequence);
      c.block.packet_timestamp_ns = static_cast<std::int64_t>(view.realtime_ns);
      c.block.samples = view.samples;
      c.block.values = std::span<const std::byte>(view.data, std::size_t{view.samples} * c.sample_bytes);
      const std::span<const std::byte> message = encoder_.encode(c.block);
      if (!c.reader.done(view)) {  // overwritten while copied
        ++c.report.lost;
        add_run(c.pending, view.sequence, 1, GapReason::source_loss);
        continue;
      }
      send_block(c, message, stop);
    }
    return handled;
  }

  void send_block(Outgoing& c, std::span<const std::byte> message, const std::atomic<bool>& stop) {
    const std::int64_t began = core::monotonic_ns();
    bool waited = false;
    for (;;) {
      rd_kafka_headers_t* headers = nullptr;
      if (!c.pending.empty()) {
        headers = rd_kafka_headers_new(1);
        const std::string runs = format_runs(c.pending);
        (void)rd_kafka_header_add(headers, kGapHeader, -1, runs.data(), static_cast<ssize_t>(runs.size()));
      }
      const rd_kafka_resp_err_t err = produce(topic_, message, c.name, headers, &c.tally);
      if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        c.pending.clear();
        ++c.report.sent;
        c.report.bytes += c.block.values.size();
        c.reader.counters().blocks_out.store(c.report.sent, std::memory_order_relaxed);
        c.reader.counters().bytes_out.store(c.report.bytes, std::memory_order_relaxed);
        break;
      }
      const std::int64_t now = core::monotonic_ns();
      if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL || options_.lossy || stop.load(std::memory_order_relaxed) ||
          now - began >= options_.lossless_wait_ns) {
        ++c.report.dropped;
        if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) c.reader.counters().errors.fetch_add(1, std::memory_order_relaxed);
        c.reader.counters().blocks_skipped.store(c.report.dropped, std::memory_order_relaxed);
        add_run(c.pending, static_cast<std::uint64_t>(c.block.counter), 1, GapReason::sink_overflow);
        break;
      }
      if (!waited) ++waits_;
      waited = true;
      (void)rd_kafka_poll(rk_, kFullPollMs);  // delivery reports make room
    }
    if (waited) wait_ns_ += static_cast<std::uint64_t>(core::monotonic_ns() - began);
  }

  // One message (copied by librdkafka); headers become librdkafka's when taken, else freed here.
  rd_kafka_resp_err_t produce(rd_kafka_topic_t* topic, std::span<const std::byte> value, std::string_view key,
                              rd_kafka_headers_t* headers, Tally* tally) noexcept {
    std::array<rd_kafka_vu_t, 6> vu{};
    std::size_t n = 0;
    vu[n].vtype = RD_KAFKA_VTYPE_RKT;
    vu[n++].u.rkt = topic;
    vu[n].vtype = RD_KAFKA_VTYPE_VALUE;
    vu[n].u.mem.ptr = const_cast<std::byte*>(value.data());  // copied: RD_KAFKA_MSG_F_COPY
    vu[n++].u.mem.size = value.size();
    vu[n].vtype = RD_KAFKA_VTYPE_KEY;
    vu[n].u.mem.ptr = const_cast<char*>(key.data());
    vu[n++].u.mem.size = key.size();
    vu[n].vtype = RD_KAFKA_VTYPE_MSGFLAGS;
    vu[n++].u.i = RD_KAFKA_MSG_F_COPY;
    vu[n].vtype = RD_KAFKA_VTYPE_OPAQUE;
    vu[n++].u.ptr = tally;
    if (headers != nullptr) {
      vu[n].vtype = RD_KAFKA_VTYPE_HEADERS;
      vu[n++].u.headers = headers;
    }
    rd_kafka_error_t* error = rd_kafka_produceva(rk_, vu.data(), n);
    if (error == nullptr) return RD_KAFKA_RESP_ERR_NO_ERROR;
    const rd_kafka_resp_err_t code = rd_kafka_error_code(error);
    rd_kafka_error_destroy(error);
    if (headers != nullptr) rd_kafka_headers_destroy(headers);
    return code;
  }

  void send_status() {
    const SenderReport r = totals();
    status_.status_json = fmt::format(
        R"({{"topic":"{}","channels":{},"sent":{},"delivered":{},"failed":{},"dropped":{},"gaps":{},"lost":{},)"
        R"("keys_sent":{},"lossless":{}}})",
        options_.topic, channels_.size(), r.sent, r.delivered, r.failed, r.dropped, r.gaps, r.lost, r.keys_sent,
        options_.lossy ? "false" : "true");
    const std::span<const std::byte> m = status_encoder_.encode(status_);
    if (produce(status_topic_, m, options_.name, nullptr, &status_tally_) == RD_KAFKA_RESP_ERR_NO_ERROR) ++status_sent_;
  }

  void idle() noexcept {
    if (watcher_) {
      (void)watcher_->wait(kIdleWaitNs);
      (void)watcher_->drain([](const core::Change&) {});
    } else {
      ::usleep(static_cast<useconds_t>(kIdleWaitNs / 10'000));  // a tenth of it, in microseconds
    }
  }

  SenderReport totals() {
    SenderReport r;
    for (auto& c : channels_) {
      c->report.delivered = c->tally.delivered;
      c->report.failed = c->tally.failed;
      r.sent += c->report.sent;
      r.delivered += c->report.delivered;
      r.failed += c->report.failed;
      r.dropped += c->report.dropped;
      r.gaps += c->report.gaps;
      r.lost += c->report.lost;
      r.bytes += c->report.bytes;
      r.channels.push_back(c->report);
    }
    r.failed += key_tally_.failed + status_tally_.failed;
    r.waits = waits_;
    r.wait_ns = wait_ns_;
    r.keys_sent = forwarder_.sent();
    r.keys_skipped = forwarder_.skipped();
    r.status_sent = status_sent_;
    return r;
  }

  void publish_keys() {
    std::uint64_t sent = 0, delivered = 0, failed = key_tally_.failed + status_tally_.failed, dropped = 0, gaps = 0,
                  lost = 0, bytes = 0;
    for (const auto& c : channels_) {
      sent += c->report.sent;
      delivered += c->tally.delivered;
      failed += c->tally.failed;
      dropped += c->report.dropped;
      gaps += c->report.gaps;
      lost += c->report.lost;
      bytes += c->report.bytes;
    }
    keys_.set(k_sent_, sent);
    keys_.set(k_delivered_, delivered);
    keys_.set(k_failed_, failed);
    keys_.set(k_dropped_, dropped);
    keys_.set(k_gaps_, gaps);
    keys_.set(k_lost_, lost);
    keys_.set(k_waits_, waits_);
    keys_.set(k_wait_ns_, wait_ns_);
    keys_.set(k_bytes_, bytes);
    keys_.set(k_keys_sent_, forwarder_.sent());
    keys_.set(k_keys_skipped_, forwarder_.skipped());
    keys_.set(k_status_, status_sent_);
    keys_.set(k_channels_, channels_.size());
    keys_.set(k_queue_, static_cast<std::uint64_t>(std::max(0, rd_kafka_outq_len(rk_))));
    keys_.publish(sent == delivered + failed ? "idle" : "sending");
  }

  const core::Arena& arena_;
  const SenderOptions& options_;
  rd_kafka_t* rk_;
  rd_kafka_topic_t* topic_;
  rd_kafka_topic_t* status_topic_;
  core::CounterKeys keys_;
  std::size_t k_sent_ = 0, k_delivered_ = 0, k_failed_ = 0, k_dropped_ = 0, k_gaps_ = 0, k_lost_ = 0, k_waits_ = 0,
              k_wait_ns_ = 0, k_bytes_ = 0, k_keys_sent_ = 0, k_keys_skipped_ = 0, k_status_ = 0, k_channels_ = 0,
              k_queue_ = 0;
  KeyForwarder forwarder_;
  std::optional<core::Watcher> watcher_;
  std::vector<std::unique_ptr<Outgoing>> channels_;
  std::set<std::string> refused_;
  Se00Encoder encoder_;
  X5f2Encoder status_encoder_;
  Status status_;
  Tally key_tally_, status_tally_;
  std::uint64_t waits_ = 0, wait_ns_ = 0, status_sent_ = 0;
};

}  // namespace

Result<void> validate(const SenderOptions& o) {
  if (o.name.empty() || o.name.size() > 48)
    return fail(Errc::invalid_argument, fmt::format("kafka send: name '{}': 1 to 48 bytes", o.name));
  if (o.brokers.empty()) return fail(Errc::invalid_argument, "kafka send: no --brokers (HOST:PORT,...)");
  if (o.topic.empty()) return fail(Errc::invalid_argument, "kafka send: no --topic");
  if (o.queue_messages <= 0)
    return fail(Errc::invalid_argument, fmt::format("kafka send: --queue {} must be > 0", o.queue_messages));
  if (o.lossless_wait_ns <= 0) return fail(Errc::invalid_argument, "kafka send: --wait-ms must be > 0");
  if (o.status_every_ns <= 0) return fail(Errc::invalid_argument, "kafka send: --status-ms must be > 0");
  return {};
}

Result<SenderReport> run_sender(const core::Arena& arena, const SenderOptions& options, const std::atomic<bool>& stop) {
  if (auto ok = validate(options); !ok) return tl::make_unexpected(ok.error());
  const std::string what = "kafka send " + options.name;
  const Properties defaults{{"bootstrap.servers", options.brokers},
                            {"client.id", "weir-" + options.name},
                            {"enable.idempotence", "true"},
                            {"acks", "all"},
                            {"linger.ms", "5"},
                            {"queue.buffering.max.messages", std::to_string(options.queue_messages)}};
  auto conf = make_conf(defaults, options.properties, what);
  if (!conf) return tl::make_unexpected(conf.error());
  rd_kafka_conf_set_dr_msg_cb(*conf, &on_delivery);
  auto client = make_client(RD_KAFKA_PRODUCER, *conf, what);
  if (!client) return tl::make_unexpected(client.error());
  const Topic topic(rd_kafka_topic_new(client->get(), options.topic.c_str(), nullptr));
  if (!topic) return fail(Errc::invalid_argument, fmt::format("{}: topic '{}': {}", what, options.topic,
                                                              rd_kafka_err2str(rd_kafka_last_error())));
  Topic status_topic;
  if (!options.status_topic.empty()) {
    status_topic.reset(rd_kafka_topic_new(client->get(), options.status_topic.c_str(), nullptr));
    if (!status_topic) return fail(Errc::invalid_argument, fmt::format("{}: status topic '{}': {}", what,
                                                                       options.status_topic,
                                                                       rd_kafka_err2str(rd_kafka_last_error())));
  }
  Sender sender(arena, options, client->get(), topic.get(), status_topic.get());
  return sender.run(stop);
}

}  // namespace weir::kafka
