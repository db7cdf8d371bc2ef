// The sender: follow channels, send blocks, count what could not go.
#include "weir/bridge/sender.hpp"

#include <fnmatch.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <utility>

#include <fmt/format.h>

#include "weir/core/counter_keys.hpp"
#include "link_monitor.hpp"
#include "weir/bridge/wire.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/clock.hpp"
#include "weir/core/label_dictionary.hpp"
#include "weir/core/signals.hpp"
#include "zmq_socket.hpp"

namespace weir::bridge {

namespace {

using core::Errc;
using core::fail;
using core::Result;

constexpr std::uint32_t kBatchBlocks = 64;            // blocks per channel per pass, so no channel starves the rest
constexpr std::size_t kFrameBytes = 64 * 1024;        // waiting blocks gathered into one message up to this (or one block)
constexpr std::int64_t kIdleWaitNs = 10'000'000;      // nothing to send: sleep on the channels' groups this long
constexpr std::int64_t kNsPerMs = 1'000'000;

struct Outgoing {
  Outgoing(std::string channel, core::ChannelReader r) : name(std::move(channel)), reader(std::move(r)) {}
  std::string name;
  core::ChannelReader reader;
  std::uint32_t id = 0;
  std::uint32_t sample_bytes = 0;
  WireHeader block{};          // the channel's fields filled in once
  WireHeader describe{};
  ChannelDescription description{};
  std::string labels;          // names, each ended by '\0'
  SenderChannelReport report;
  WireHeader gap{};            // a run of the near writer's gap blocks not sent yet (gap_blocks 0: none)
};

enum class [[nodiscard]] SendStatus : std::uint8_t { sent, dropped, failed };

std::uint64_t new_session() {
  std::random_device entropy;
  std::uint64_t id = 0;
  while (id == 0) id = (std::uint64_t{entropy()} << 32) ^ entropy() ^ static_cast<std::uint64_t>(core::realtime_ns());
  return id;
}

bool matches(const std::vector<std::string>& patterns, const std::string& name) {
  for (const std::string& p : patterns)
    if (fnmatch(p.c_str(), name.c_str(), 0) == 0) return true;
  return false;
}

class Sender {
 public:
  Sender(const core::Arena& arena, const SenderOptions& options, void* socket, LinkMonitor& monitor,
         std::uint64_t session)
      : arena_(arena), options_(options), socket_(socket), monitor_(monitor), session_(session),
        keys_(arena, "bridge." + options.name + ".") {
    k_sent_ = keys_.add("sent");
    k_dropped_ = keys_.add("dropped");
    k_lost_ = keys_.add("lost");
    k_bytes_ = keys_.add("bytes");
    k_messages_ = keys_.add("messages");
    k_peers_ = keys_.add("peers");
    k_auth_ = keys_.add("auth_failures");
    k_session_ = keys_.add("session");
    k_channels_ = keys_.add("channels");
    if (auto w = core::Watcher::create(arena); w) watcher_.emplace(std::move(*w));
  }

  ~Sender() { std::free(frame_); }
  Sender(const Sender&) = delete;
  Sender& operator=(const Sender&) = delete;

  Result<SenderReport> run(const std::atomic<bool>& stop) {
    const std::int64_t start = core::monotonic_ns();
    std::int64_t next_rescan = 0, next_mark = 0, next_describe = 0;
    std::uint64_t handshakes_seen = 0;
    while (!stop.load(std::memory_order_relaxed)) {  // a flag: nothing else is ordered by it
      const std::int64_t now = core::monotonic_ns();
      if (now >= next_rescan) {
        if (auto ok = rescan(); !ok) return tl::make_unexpected(ok.error());
        next_rescan = now + kRescanEveryNs;
      }
      (void)monitor_.poll();
      if (monitor_.handshakes() != handshakes_seen || now >= next_describe) {
        handshakes_seen = monitor_.handshakes();  // a new peer learns every channel at once
        for (auto& c : channels_) describe(*c);
        next_describe = now + kDescribeEveryNs;
      }
      std::uint64_t work = 0;
      for (auto& c : channels_) work += pump(*c, stop);
      if (now >= next_mark) {
        for (auto& c : channels_) mark(*c);
        publish_keys();
        next_mark = now + kMarkEveryNs;
      }
      if (work == 0) idle();
    }
    for (auto& c : channels_) mark(*c);  // the last word on how far it got
    publish_keys();
    SenderReport r = totals();
    r.elapsed_s = static_cast<double>(core::monotonic_ns() - start) / 1e9;
    return r;
  }

 private:
  Result<void> rescan() {
    for (const core::ChannelInfo& info : core::list_channels(arena_)) {
      if (!matches(options_.patterns, info.name)) continue;
      bool known = false;
      for (auto& c : channels_) known = known || c->name == info.name;
      if (known) continue;
      auto reader = core::ChannelReader::open(arena_, info.name,
                                              options_.lossless ? core::ConsumerPolicy::lossless : core::ConsumerPolicy::lossy,
                                              "bridge " + options_.name,
                                              options_.from_newest ? core::StartAt::newest : core::StartAt::oldest);
      if (!reader) return tl::make_unexpected(core::with_context(reader.error(), "follow channel '" + info.name + "'"));
      reader->set_kind("bridge:" + options_.name);
      auto c = std::make_unique<Outgoing>(info.name, std::move(*reader));
      c->id = static_cast<std::uint32_t>(channels_.size());
      fill(*c);
      c->report.name = info.name;
      if (watcher_) (void)watcher_->subscribe_channel(info.name);
      describe(*c);
      channels_.push_back(std::move(c));
    }
    return {};
  }

  void fill(Outgoing& c) {
    const core::ChannelDesc& d = c.reader.desc();
    c.sample_bytes = d.sample_bytes;
    c.block = make_header(MessageKind::block, session_);
    c.block.channel_id = c.id;
    c.block.dtype = static_cast<std::uint32_t>(d.dtype);
    c.block.frames_per_block = d.frames_per_block;
    c.block.frame_elements = d.frame_elements;
    (void)copy_text(c.block.channel, sizeof c.block.channel, c.name);
    c.describe = c.block;
    c.describe.kind = static_cast<std::uint16_t>(MessageKind::describe);
    c.gap = c.block;
    c.gap.kind = static_cast<std::uint16_t>(MessageKind::gap);
    ChannelDescription& x = c.description;
    x.rate_bits = d.rate_bits;
    x.stream_id = d.created_ns;
    x.samples_per_block = d.samples_per_block;
    x.ring_blocks = d.ring_blocks;
    x.full_policy = static_cast<std::uint32_t>(d.full_policy);
    x.wait_timeout_ns = d.wait_timeout_ns;
    x.axis_start_bits = d.axis_start_bits;
    x.axis_step_bits = d.axis_step_bits;
    (void)copy_text(x.units, sizeof x.units, field_text(d.units, sizeof d.units));
    (void)copy_text(x.axis_name, sizeof x.axis_name, field_text(d.axis_name, sizeof d.axis_name));
    (void)copy_text(x.axis_units, sizeof x.axis_units, field_text(d.axis_units, sizeof d.axis_units));
    (void)copy_text(x.axis_values_key, sizeof x.axis_values_key, field_text(d.axis_values_key, sizeof d.axis_values_key));
    (void)copy_text(x.sender, sizeof x.sender, options_.name);
    const core::LabelDictionary dictionary(arena_);
    for (std::uint64_t bits = d.label_ids; bits != 0; bits &= bits - 1) {
      if (auto label = dictionary.at(static_cast<std::uint32_t>(std::countr_zero(bits)))) {
        c.labels.append(label->name).push_back('\0');
        ++x.label_count;
      }
    }
  }

  // Never blocks: a description that does not fit now goes with the next one.
  void describe(Outgoing& c) noexcept {
    if (zmq_send(socket_, &c.describe, sizeof c.describe, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) return;
    (void)zmq_send(socket_, &c.description, sizeof c.description, ZMQ_SNDMORE | ZMQ_DONTWAIT);
    (void)zmq_send(socket_, c.labels.data(), c.labels.size(), ZMQ_DONTWAIT);
  }

  void mark(Outgoing& c) noexcept {
    send_gap(c);
    WireHeader h = c.block;
    h.kind = static_cast<std::uint16_t>(MessageKind::mark);
    h.sequence = c.reader.cursor();
    h.sent_ns = static_cast<std::uint64_t>(core::realtime_ns());
    (void)zmq_send(socket_, &h, sizeof h, ZMQ_DONTWAIT);
  }

  // Sends up to kBatchBlocks blocks of one channel, those already waiting gathered into frames of up
  // to kFrameBytes; returns how many blocks it handled. Never waits to fill a frame.
  std::uint64_t pump(Outgoing& c, const std::atomic<bool>& stop) noexcept {
    std::uint64_t handled = 0;
    for (std::uint32_t i = 0; i < kBatchBlocks && !stop.load(std::memory_order_relaxed); ++i) {
      core::BlockView view;
      std::uint64_t lost = 0;
      const std::uint64_t at = c.reader.cursor();
      const core::NextStatus next = c.reader.next(view, lost);
      if (next == core::NextStatus::empty) break;
      ++handled;
      if (next == core::NextStatus::lost) {
        c.report.lost += lost;
        if ((view.flags & core::kBlockGapFlag) != 0) {  // else lapped: the far side's source_loss
          flush(c);                                     // the blocks before the gap go first
          add_gap(c, at, lost, view.flags);
        }
        continue;
      }
      send_gap(c);
      append(c, view);
    }
    flush(c);
    send_gap(c);
    return handled;
  }

  // The near writer's gap blocks go over as runs: one gap message per contiguous run of one reason.
  void add_gap(Outgoing& c, std::uint64_t at, std::uint64_t blocks, std::uint32_t flags) noexcept {
    if (c.gap.gap_blocks != 0 && (c.gap.flags != flags || c.gap.sequence + c.gap.gap_blocks != at)) send_gap(c);
    if (c.gap.gap_blocks == 0) {
      c.gap.sequence = at;
      c.gap.flags = flags;
    }
    c.gap.gap_blocks += blocks;
  }

  // Sends the pending run, if any, as blocks are sent; one that cannot go is left to the far side's
  // catch-up (source_loss there, as for any block that did not arrive).
  void send_gap(Outgoing& c) noexcept {
    if (c.gap.gap_blocks == 0) return;
    c.gap.sent_ns = static_cast<std::uint64_t>(core::realtime_ns());
    (void)zmq_send(socket_, &c.gap, sizeof c.gap, options_.lossless ? 0 : ZMQ_DONTWAIT);
    c.gap.gap_blocks = 0;
  }

  // Copies a block into the frame being gathered (sending that one first when it is full). The copy
  // is what the seqlock validates: a block overwritten while copied is counted lost, not sent.
  void append(Outgoing& c, const core::BlockView& view) noexcept {
    const std::size_t bytes = std::size_t{view.samples} * c.sample_bytes;
    const std::size_t record = sizeof(WireHeader) + bytes;
    if (frame_ != nullptr && frame_used_ + record > frame_capacity_) flush(c);
    if (frame_ != nullptr && frame_used_ + record > frame_capacity_) {  // still ours, empty, and too small
      std::free(frame_);
      frame_ = nullptr;
    }
    if (frame_ == nullptr) {
      frame_capacity_ = std::max(kFrameBytes, record);
      frame_ = static_cast<std::byte*>(std::malloc(frame_capacity_));
      if (frame_ == nullptr) {
        (void)c.reader.done(view);
        ++c.report.dropped;
        c.reader.counters().blocks_skipped.store(c.report.dropped, std::memory_order_relaxed);
        c.reader.counters().errors.fetch_add(1, std::memory_order_relaxed);
        return;
      }
    }
    std::byte* at = frame_ + frame_used_;
    if (bytes != 0) std::memcpy(at + sizeof(WireHeader), view.data, bytes);
    if (!c.reader.done(view)) {  // overwritten while copied: the consumer row counts it
      ++c.report.lost;
      return;
    }
    WireHeader h = c.block;
    h.sequence = view.sequence;
    h.first_sample = view.first_sample;
    h.realtime_ns = view.realtime_ns;
    h.monotonic_ns = view.monotonic_ns;
    h.samples = view.samples;
    h.flags = view.flags;
    h.payload_bytes = bytes;
    h.sent_ns = static_cast<std::uint64_t>(core::realtime_ns());
    std::memcpy(at, &h, sizeof h);
    frame_used_ += record;
    ++frame_blocks_;
    frame_payload_ += bytes;
  }

  // Sends the gathered frame, if any: its blocks are all sent or all dropped, and counted so.
  void flush(Outgoing& c) noexcept {
    if (frame_blocks_ == 0) return;
    const std::uint32_t blocks = std::exchange(frame_blocks_, 0);
    const std::uint64_t bytes = std::exchange(frame_payload_, 0);
    SendStatus status = SendStatus::failed;
    zmq_msg_t msg;
    if (zmq_msg_init_data(&msg, frame_, std::exchange(frame_used_, 0), free_frame, nullptr) == 0) {
      frame_ = nullptr;  // libzmq's now: it frees the frame once written (or when the message closes)
      const int wait = options_.lossless ? 0 : ZMQ_DONTWAIT;  // lossless: bounded by ZMQ_SNDTIMEO
      if (zmq_msg_send(&msg, socket_, wait) >= 0)
        status = SendStatus::sent;
      else if (zmq_errno() == EAGAIN || zmq_errno() == EINTR)
        status = SendStatus::dropped;
      (void)zmq_msg_close(&msg);
    }
    switch (status) {
      case SendStatus::sent:
        ++c.report.messages;
        c.report.sent += blocks;
        c.report.bytes += bytes;
        c.reader.counters().blocks_out.store(c.report.sent, std::memory_order_relaxed);  // a counter for `weir ls`
        c.reader.counters().bytes_out.store(c.report.bytes, std::memory_order_relaxed);
        break;
      case SendStatus::dropped:
        c.report.dropped += blocks;
        c.reader.counters().blocks_skipped.store(c.report.dropped, std::memory_order_relaxed);
        break;
      case SendStatus::failed:
        c.report.dropped += blocks;
        c.reader.counters().blocks_skipped.store(c.report.dropped, std::memory_order_relaxed);
        c.reader.counters().errors.fetch_add(1, std::memory_order_relaxed);
        break;
    }
  }

  static void free_frame(void* data, void* /*hint*/) noexcept { std::free(data); }

  void idle() noexcept {
    if (watcher_) {
      (void)watcher_->wait(kIdleWaitNs);
      (void)watcher_->drain([](const core::Change&) {});
    } else {
      ::usleep(static_cast<useconds_t>(kIdleWaitNs / 10'000));  // a tenth of it, in microseconds
    }
  }

  SenderReport totals() const {
    SenderReport r;
    r.session = session_;
    for (const auto& c : channels_) {
      r.sent += c->report.sent;
      r.dropped += c->report.dropped;
      r.lost += c->report.lost;
      r.bytes += c->report.bytes;
      r.messages += c->report.messages;
      r.channels.push_back(c->report);
    }
    r.handshakes = monitor_.handshakes();
    r.disconnects = monitor_.disconnects();
    r.auth_failures = monitor_.auth_failures();
    return r;
  }

  void publish_keys() noexcept {
    std::uint64_t sent = 0, dropped = 0, lost = 0, bytes = 0, messages = 0;
    for (const auto& c : channels_) {
      sent += c->report.sent;
      dropped += c->report.dropped;
      lost += c->report.lost;
      bytes += c->report.bytes;
      messages += c->report.messages;
    }
    keys_.set(k_sent_, sent);
    keys_.set(k_dropped_, dropped);
    keys_.set(k_lost_, lost);
    keys_.set(k_bytes_, bytes);
    keys_.set(k_messages_, messages);
    keys_.set(k_peers_, monitor_.connections());
    keys_.set(k_auth_, monitor_.auth_failures());
    keys_.set(k_session_, session_);
    keys_.set(k_channels_, channels_.size());
    keys_.publish(monitor_.connections() > 0 ? "up" : "down");
  }

  const core::Arena& arena_;
  const SenderOptions& options_;
  void* socket_;
  LinkMonitor& monitor_;
  std::uint64_t session_;
  core::CounterKeys keys_;
  std::size_t k_sent_ = 0, k_dropped_ = 0, k_lost_ = 0, k_bytes_ = 0, k_messages_ = 0, k_peers_ = 0, k_auth_ = 0, k_session_ = 0,
              k_channels_ = 0;
  std::optional<core::Watcher> watcher_;
  std::vector<std::unique_ptr<Outgoing>> channels_;
  std::byte* frame_ = nullptr;  // block records gathered for the next message (malloc'd; libzmq frees it)
  std::size_t frame_capacity_ = 0, frame_used_ = 0;
  std::uint32_t frame_blocks_ = 0;
  std::uint64_t frame_payload_ = 0;
};

Result<void> secure_client(void* socket, const Security& security) {
  if (security.plain) return {};
  auto secret = read_key(security.secret_key_file, true);
  if (!secret) return tl::make_unexpected(secret.error());
  auto server = read_key(security.server_key_file, false);
  if (!server) return tl::make_unexpected(server.error());
  auto pub = public_of(*secret);
  if (!pub) return tl::make_unexpected(pub.error());
  if (auto ok = set_bytes(socket, ZMQ_CURVE_SERVERKEY, server->data(), server->size(), "ZMQ_CURVE_SERVERKEY"); !ok) return ok;
  if (auto ok = set_bytes(socket, ZMQ_CURVE_PUBLICKEY, pub->data(), pub->size(), "ZMQ_CURVE_PUBLICKEY"); !ok) return ok;
  return set_bytes(socket, ZMQ_CURVE_SECRETKEY, secret->data(), secret->size(), "ZMQ_CURVE_SECRETKEY");
}

}  // namespace

Result<void> validate(const SenderOptions& o) {
  if (o.name.empty() || o.name.size() >= kWireNameBytes)
    return fail(Errc::invalid_argument, fmt::format("bridge name '{}': 1 to {} bytes", o.name, kWireNameBytes - 1));
  if (o.patterns.empty()) return fail(Errc::invalid_argument, "bridge send: no --channels to send");
  if (o.endpoint.empty()) return fail(Errc::invalid_argument, "bridge send: no endpoint (--to or --bind)");
  if (o.send_hwm <= 0) return fail(Errc::invalid_argument, fmt::format("bridge send: --hwm {} must be > 0", o.send_hwm));
  if (o.lossless_wait_ns <= 0) return fail(Errc::invalid_argument, "bridge send: --wait-ms must be > 0");
  if (!o.security.plain) {
    if (o.security.secret_key_file.empty() || o.security.server_key_file.empty())
      return fail(Errc::invalid_argument,
                  "bridge send: CURVE needs --curve-key (this sender's .key) and --curve-server-key (the "
                  "receiver's .pub); make them with `weir bridge keygen`, or pass --plain for unencrypted TCP");
    if (zmq_has("curve") == 0) return fail(Errc::invalid_argument, "bridge send: this libzmq has no CURVE; --plain only");
  }
  return {};
}

Result<SenderReport> run_sender(const core::Arena& arena, const SenderOptions& options, const std::atomic<bool>& stop) {
  if (auto ok = validate(options); !ok) return tl::make_unexpected(ok.error());
  auto context = make_context();
  if (!context) return tl::make_unexpected(context.error());
  ZmqSocket socket;
  {
    auto s = make_socket(context->get(), ZMQ_PUSH, "bridge sender");
    if (!s) return tl::make_unexpected(s.error());
    socket = std::move(*s);
  }
  const auto wait_ms = static_cast<int>(std::min<std::int64_t>(options.lossless_wait_ns / kNsPerMs, INT32_MAX));
  for (auto r : {set_int(socket.get(), ZMQ_SNDHWM, options.send_hwm, "ZMQ_SNDHWM"),
                 // Lossy: queue only to a link that is up, so a cut link drops fresh blocks at once
                 // rather than sending stale ones after it; lossless: queue for the reconnect.
                 set_int(socket.get(), ZMQ_IMMEDIATE, options.lossless ? 0 : 1, "ZMQ_IMMEDIATE"),
                 set_int(socket.get(), ZMQ_SNDTIMEO, options.lossless ? wait_ms : 0, "ZMQ_SNDTIMEO"),
                 secure_client(socket.get(), options.security)})
    if (!r) return tl::make_unexpected(core::with_context(r.error(), "bridge send " + options.name));
  const std::uint64_t session = new_session();
  auto monitor = LinkMonitor::start(context->get(), socket.get(), fmt::format("send-{:x}", session));
  if (!monitor) return tl::make_unexpected(monitor.error());
  if (auto ok = attach_endpoint(socket.get(), options.endpoint, options.bind); !ok)
    return tl::make_unexpected(core::with_context(ok.error(), "bridge send " + options.name));
  Sender sender(arena, options, socket.get(), *monitor, session);
  auto report = sender.run(stop);
  // Closing the monitored socket first, then the monitor, lets the context end within the linger.
  (void)zmq_socket_monitor(socket.get(), nullptr, 0);
  return report;
}

}  // namespace weir::bridge
