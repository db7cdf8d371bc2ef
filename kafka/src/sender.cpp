// The sender: channels as se00, hs01 or ev44 (sender_channel.hpp), keys as f144, a heartbeat as
// x5f2, through one idempotent producer.
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
#include "sender_channel.hpp"
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
using core::kNsPerMs;

// hs01's "weir.seq" header text, on the stack.
struct SeqText {
  std::array<char, 64> text{};
  std::size_t size = 0;
  [[nodiscard]] std::string_view view() const noexcept { return {text.data(), size}; }
};

SeqText seq_text(const Outgoing& c, std::uint64_t sequence, std::uint32_t frame, std::uint32_t frames) {
  SeqText t;
  if (c.schema == Schema::hs01)
    t.size = static_cast<std::size_t>(
        fmt::format_to_n(t.text.data(), t.text.size(), "{}:{}:{}", sequence, frame, frames).out - t.text.data());
  return t;
}

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
                                {&k_channels_, "channels"}, {&k_queue_, "in_queue"}, {&k_carriers_, "carriers"},
                                {&k_events_dropped_, "events_dropped"}, {&k_frames_cut_, "frames_cut"}})
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
      for (auto& c : channels_)  // only gaps for a while: they go alone, so a receiver learns of them now
        if (!c->pending.empty() && now - c->pending_since_ns >= options_.gap_carrier_ns) send_carrier(*c, now);
      if (work == 0) idle();
    }
    // Runs still pending at stop go in carriers, each waiting for the queue up to the flush time.
    const std::int64_t carrier_deadline = core::monotonic_ns() + options_.flush_ns;
    for (auto& c : channels_) {
      if (!c->pending.empty()) send_carrier(*c, carrier_deadline);
      if (!c->pending.empty())
        fmt::print(stderr, "weir kafka send {}: channel '{}': the gap runs {} did not go (queue full or refused)\n",
                   options_.name, c->name, format_runs(c->pending));
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
      auto schema = pick_schema(info, options_.schemas);
      if (!schema) {
        fmt::print(stderr, "weir kafka send {}: {}; not sent\n", options_.name, schema.error().what);
        refused_.insert(info.name);
        continue;
      }
      auto reader = core::ChannelReader::open(arena_, info.name,
                                              options_.lossy ? core::ConsumerPolicy::lossy : core::ConsumerPolicy::lossless,
                                              "kafka " + options_.name,
                                              options_.from_newest ? core::StartAt::newest : core::StartAt::oldest);
      if (!reader) return tl::make_unexpected(core::with_context(reader.error(), "follow channel '" + info.name + "'"));
      reader->set_kind("kafka:" + options_.name);
      auto c = std::make_unique<Outgoing>(arena_, info, *schema, std::move(*reader));
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
          c.add_gap(at, lost, core::lost_reason(view.flags));
        } else {  // lapped: the sender was too slow (lossy); to the far side the source lost them
          c.report.lost += lost;
          c.add_gap(at, lost, GapReason::source_loss);
        }
        continue;
      }
      const std::uint32_t frames = c.frames(view.samples);
      if (frames > 1) {
        send_frames(c, view, frames, stop);
        continue;
      }
      std::uint32_t events_dropped = 0;
      const std::span<const std::byte> message = c.encode(encoders_, view, view.data, 0, events_dropped);
      if (!c.reader.done(view)) {  // overwritten while copied
        ++c.report.lost;
        c.add_gap(view.sequence, 1, GapReason::source_loss);
        continue;
      }
      if (send(c, message, view.sequence, seq_text(c, view.sequence, 0, frames), events_dropped, true, stop))
        c.report.events_dropped += events_dropped;
    }
    return handled;
  }

  // A block of several frames (hs01): copied out of the ring first (the frames are encoded one at a
  // time), then sent once the queue has room for all of them, so a block goes whole or not at all.
  void send_frames(Outgoing& c, const core::BlockView& view, std::uint32_t frames, const std::atomic<bool>& stop) {
    const std::size_t bytes = std::size_t{view.samples} * c.sample_bytes;
    std::memcpy(c.scratch.data(), view.data, bytes);
    if (!c.reader.done(view)) {
      ++c.report.lost;
      c.add_gap(view.sequence, 1, GapReason::source_loss);
      return;
    }
    if (!wait_for_room(frames, stop)) {
      drop(c, view.sequence, RD_KAFKA_RESP_ERR__QUEUE_FULL);
      return;
    }
    for (std::uint32_t f = 0; f < frames; ++f) {
      std::uint32_t ignored = 0;
      const std::span<const std::byte> message = c.encode(encoders_, view, c.scratch.data(), f, ignored);
      if (!send(c, message, view.sequence, seq_text(c, view.sequence, f, frames), 0, f == 0, stop)) {
        if (f != 0) c.report.frames_cut += frames - f;  // the block's first frames went: the rest are cut
        return;
      }
    }
  }

  // Lossless: serves delivery reports until librdkafka's queue has room for `messages` more, up to
  // the per-block wait; lossy: whether it has room now.
  bool wait_for_room(std::uint32_t messages, const std::atomic<bool>& stop) {
    const std::int64_t began = core::monotonic_ns();
    bool waited = false;
    while (rd_kafka_outq_len(rk_) + static_cast<int>(messages) > options_.queue_messages) {
      if (options_.lossy || stop.load(std::memory_order_relaxed) || core::monotonic_ns() - began >= options_.lossless_wait_ns)
        return false;
      if (!waited) ++waits_;
      waited = true;
      (void)rd_kafka_poll(rk_, kFullPollMs);
    }
    if (waited) wait_ns_ += static_cast<std::uint64_t>(core::monotonic_ns() - began);
    return true;
  }

  // A block the queue could not take: a sink_overflow gap (a hard error counted as one too).
  void drop(Outgoing& c, std::uint64_t sequence, rd_kafka_resp_err_t err) {
    ++c.report.dropped;
    if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) c.reader.counters().errors.fetch_add(1, std::memory_order_relaxed);
    c.reader.counters().blocks_skipped.store(c.report.dropped, std::memory_order_relaxed);
    c.add_gap(sequence, 1, GapReason::sink_overflow);
  }

  // One message of block `sequence`; the pending runs ride on the block's first. Lossless: waits for
  // the queue up to the per-block wait. A block whose first message does not go is dropped; returns
  // whether the message went.
  bool send(Outgoing& c, std::span<const std::byte> message, std::uint64_t sequence, const SeqText& seq,
            std::uint32_t events_dropped, bool first, const std::atomic<bool>& stop) {
    const std::int64_t began = core::monotonic_ns();
    bool waited = false, went = false;
    for (;;) {
      rd_kafka_headers_t* headers =
          message_headers(first ? c.pending : no_runs_, seq.view(), events_dropped);
      const rd_kafka_resp_err_t err = produce_message(rk_, topic_, message, c.name, headers, &c.tally);
      if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        if (first) {
          c.pending.clear();
          ++c.blocks_sent;
        }
        ++c.report.sent;
        c.report.bytes += message.size();
        c.reader.counters().blocks_out.store(c.blocks_sent, std::memory_order_relaxed);
        c.reader.counters().bytes_out.store(c.report.bytes, std::memory_order_relaxed);
        went = true;
        break;
      }
      const std::int64_t now = core::monotonic_ns();
      if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL || options_.lossy || stop.load(std::memory_order_relaxed) ||
          now - began >= options_.lossless_wait_ns) {
        if (first) drop(c, sequence, err);
        break;
      }
      if (!waited) ++waits_;
      waited = true;
      (void)rd_kafka_poll(rk_, kFullPollMs);  // delivery reports make room
    }
    if (waited) wait_ns_ += static_cast<std::uint64_t>(core::monotonic_ns() - began);
    return went;
  }

  // The pending runs alone, in a message with no values whose counter is their last sequence; tries
  // until `deadline_ns` (monotonic) while the queue is full. Left pending if it does not go.
  void send_carrier(Outgoing& c, std::int64_t deadline_ns) {
    const std::span<const std::byte> message = c.encode_carrier(encoders_);
    const SeqText seq = seq_text(c, c.last_pending(), 0, 0);
    for (;;) {
      const rd_kafka_resp_err_t err =
          produce_message(rk_, topic_, message, c.name, message_headers(c.pending, seq.view(), 0), &carrier_tally_);
      if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        c.pending.clear();
        ++c.report.carriers;
        return;
      }
      if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) c.reader.counters().errors.fetch_add(1, std::memory_order_relaxed);
      if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL || core::monotonic_ns() >= deadline_ns) return;
      (void)rd_kafka_poll(rk_, kFullPollMs);
    }
  }

  rd_kafka_resp_err_t produce(rd_kafka_topic_t* topic, std::span<const std::byte> value, std::string_view key,
                              rd_kafka_headers_t* headers, Tally* tally) noexcept {
    return produce_message(rk_, topic, value, key, headers, tally);
  }

  void send_status() {
    const SenderReport r = totals();
    status_.status_json = fmt::format(
        R"({{"topic":"{}","channels":{},"sent":{},"delivered":{},"failed":{},"dropped":{},"gaps":{},"lost":{},)"
        R"("carriers":{},"events_dropped":{},"keys_sent":{},"lossless":{}}})",
        options_.topic, channels_.size(), r.sent, r.delivered, r.failed, r.dropped, r.gaps, r.lost, r.carriers,
        r.events_dropped, r.keys_sent, options_.lossy ? "false" : "true");
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
      r.carriers += c->report.carriers;
      r.events_dropped += c->report.events_dropped;
      r.frames_cut += c->report.frames_cut;
      r.channels.push_back(c->report);
    }
    r.failed += key_tally_.failed + status_tally_.failed + carrier_tally_.failed;
    r.waits = waits_;
    r.wait_ns = wait_ns_;
    r.keys_sent = forwarder_.sent();
    r.keys_skipped = forwarder_.skipped();
    r.status_sent = status_sent_;
    return r;
  }

  void publish_keys() {
    const SenderReport r = totals();
    for (auto [index, value] : {std::pair{k_sent_, r.sent}, {k_delivered_, r.delivered}, {k_failed_, r.failed},
                                {k_dropped_, r.dropped}, {k_gaps_, r.gaps}, {k_lost_, r.lost}, {k_waits_, r.waits},
                                {k_wait_ns_, r.wait_ns}, {k_bytes_, r.bytes}, {k_keys_sent_, r.keys_sent},
                                {k_keys_skipped_, r.keys_skipped}, {k_status_, r.status_sent},
                                {k_channels_, std::uint64_t{channels_.size()}}, {k_carriers_, r.carriers},
                                {k_events_dropped_, r.events_dropped}, {k_frames_cut_, r.frames_cut},
                                {k_queue_, static_cast<std::uint64_t>(std::max(0, rd_kafka_outq_len(rk_)))}})
      keys_.set(index, value);
    const std::uint64_t settled = r.delivered + r.failed - key_tally_.failed - status_tally_.failed -
                                  carrier_tally_.failed;  // the channels' messages only
    keys_.publish(r.sent == settled ? "idle" : "sending");
  }

  const core::Arena& arena_;
  const SenderOptions& options_;
  rd_kafka_t* rk_;
  rd_kafka_topic_t* topic_;
  rd_kafka_topic_t* status_topic_;
  core::CounterKeys keys_;
  std::size_t k_sent_ = 0, k_delivered_ = 0, k_failed_ = 0, k_dropped_ = 0, k_gaps_ = 0, k_lost_ = 0, k_waits_ = 0,
              k_wait_ns_ = 0, k_bytes_ = 0, k_keys_sent_ = 0, k_keys_skipped_ = 0, k_status_ = 0, k_channels_ = 0,
              k_queue_ = 0, k_carriers_ = 0, k_events_dropped_ = 0, k_frames_cut_ = 0;
  KeyForwarder forwarder_;
  std::optional<core::Watcher> watcher_;
  std::vector<std::unique_ptr<Outgoing>> channels_;
  std::set<std::string> refused_;
  Encoders encoders_;
  X5f2Encoder status_encoder_;
  Status status_;
  Tally key_tally_, status_tally_, carrier_tally_;
  const std::vector<GapRun> no_runs_;
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
  if (o.gap_carrier_ns <= 0) return fail(Errc::invalid_argument, "kafka send: --gap-carrier-ms must be > 0");
  for (const SchemaChoice& c : o.schemas) {
    Schema ignored{};
    if (c.pattern.empty() || !parse_schema(c.schema, ignored))
      return fail(Errc::invalid_argument,
                  fmt::format("kafka send: --schema '{}={}': CHANNEL_GLOB=se00|hs01|ev44", c.pattern, c.schema));
  }
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
