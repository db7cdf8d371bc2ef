// The receiver: blocks from the senders into channels of this arena, every missing sequence a gap.
#include "weir/bridge/receiver.hpp"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "weir/core/counter_keys.hpp"
#include "link_monitor.hpp"
#include "weir/bridge/wire.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/clock.hpp"
#include "zap_handler.hpp"
#include "zmq_socket.hpp"

namespace weir::bridge {

namespace {

using core::Errc;
using core::fail;
using core::Result;

constexpr int kPollMs = 100;                       // the loop looks at stop and the keys this often
constexpr std::uint32_t kBatchMessages = 256;      // messages per pass before the monitor and keys
constexpr std::int64_t kKeysEveryNs = 100'000'000;
constexpr std::size_t kMaxSessions = 64;           // sessions remembered; the least recent goes first

// One far channel and the stream that feeds it.
struct Incoming {
  std::string name;
  std::string sender;
  std::optional<core::ChannelWriter> writer;  // empty when refused
  std::uint64_t stream_id = 0;
  std::uint64_t offset = 0;                   // far sequence = near sequence + offset
  std::uint64_t block_bytes = 0;
  std::uint32_t sample_bytes = 0;
  ReceiverChannelReport report;
};

struct Session {
  std::uint64_t id = 0;
  std::int64_t seen_ns = 0;
  std::vector<Incoming*> by_id;  // the sender's channel ids; nullptr: not described yet
  std::vector<bool> refused;     // per id: described, but refused
};

std::string expand_prefix(const std::string& prefix, std::string_view sender) {
  std::string out;
  for (std::size_t i = 0; i < prefix.size();) {
    if (prefix.compare(i, 8, "{sender}") == 0) {
      out += sender;
      i += 8;
    } else {
      out += prefix[i++];
    }
  }
  return out;
}

// Why an existing channel cannot take a described stream; "" when it can.
std::string mismatch(const core::ChannelDesc& d, const WireHeader& h, const ChannelDescription& x) {
  if (static_cast<std::uint32_t>(d.dtype) != h.dtype)
    return fmt::format("dtype {} here, {} sent", core::dtype_name(d.dtype), core::dtype_name(static_cast<core::Dtype>(h.dtype)));
  if (d.samples_per_block != x.samples_per_block)
    return fmt::format("{} samples per block here, {} sent", d.samples_per_block, x.samples_per_block);
  if (d.rate_bits != x.rate_bits)
    return fmt::format("rate {} Hz here, {} Hz sent", std::bit_cast<double>(d.rate_bits), std::bit_cast<double>(x.rate_bits));
  if (d.frames_per_block != h.frames_per_block || d.frame_elements != h.frame_elements)
    return fmt::format("frame shape {}x{} here, {}x{} sent", d.frames_per_block, d.frame_elements, h.frames_per_block,
                       h.frame_elements);
  return "";
}

class Receiver {
 public:
  Receiver(const core::Arena& arena, const ReceiverOptions& options, void* socket, LinkMonitor& monitor,
           const ZapHandler* zap)
      : arena_(arena), options_(options), socket_(socket), monitor_(monitor), zap_(zap),
        keys_(arena, "bridge." + options.name + ".") {
    for (auto [index, field] : {std::pair{&k_received_, "received"}, {&k_bytes_, "bytes"}, {&k_gaps_, "gaps"},
                                {&k_late_, "late"}, {&k_dropped_, "dropped"}, {&k_refused_, "refused"},
                                {&k_undescribed_, "undescribed"}, {&k_malformed_, "malformed"},
                                {&k_sessions_, "sessions"}, {&k_peers_, "peers"}, {&k_auth_, "auth_failures"},
                                {&k_zap_, "zap_refused"}})
      *index = keys_.add(field);
  }

  ReceiverReport run(const std::atomic<bool>& stop) {
    const std::int64_t start = core::monotonic_ns();
    std::int64_t next_keys = 0;
    publish_keys();
    while (!stop.load(std::memory_order_relaxed)) {  // a flag: nothing else is ordered by it
      zmq_pollitem_t items[] = {{socket_, 0, ZMQ_POLLIN, 0}, {monitor_.socket(), 0, ZMQ_POLLIN, 0}};
      (void)zmq_poll(items, 2, kPollMs);
      for (std::uint32_t i = 0; i < kBatchMessages && receive_one(); ++i) {
      }
      (void)monitor_.poll();
      if (const std::int64_t now = core::monotonic_ns(); now >= next_keys) {
        publish_keys();
        next_keys = now + kKeysEveryNs;
      }
    }
    publish_keys();
    ReceiverReport r = report_;
    r.handshakes = monitor_.handshakes();
    r.disconnects = monitor_.disconnects();
    r.auth_failures = monitor_.auth_failures();
    r.zap_refused = zap_ != nullptr ? zap_->refused() : 0;
    for (const auto& [name, c] : channels_) r.channels.push_back(c->report);
    r.elapsed_s = static_cast<double>(core::monotonic_ns() - start) / 1e9;
    return r;
  }

 private:
  // One message, if one is waiting. Returns false when none was.
  bool receive_one() {
    if (zmq_msg_recv(head_.get(), socket_, ZMQ_DONTWAIT) < 0) return false;
    if (check_header(head_.data(), head_.size()) != HeaderCheck::ok) {
      ++report_.malformed;
      (void)drain_more(socket_);
      return true;
    }
    WireHeader h;
    std::memcpy(&h, head_.data(), sizeof h);
    switch (static_cast<MessageKind>(h.kind)) {
      case MessageKind::block:
        on_blocks();
        break;
      case MessageKind::describe:
        on_describe(h);
        break;
      case MessageKind::mark:
        on_mark(h);
        break;
      case MessageKind::gap:
        on_gap(h);
        break;
    }
    (void)drain_more(socket_);  // anything past what the kind has: a newer minor addition, ignored
    return true;
  }

  Session& session(std::uint64_t id) {
    for (Session& s : sessions_)
      if (s.id == id) {
        s.seen_ns = core::monotonic_ns();
        return s;
      }
    if (sessions_.size() >= kMaxSessions)
      sessions_.erase(std::min_element(sessions_.begin(), sessions_.end(),
                                       [](const Session& a, const Session& b) { return a.seen_ns < b.seen_ns; }));
    ++report_.sessions;
    sessions_.push_back(Session{id, core::monotonic_ns(), {}, {}});
    return sessions_.back();
  }

  // The far channel a block or mark is for; nullptr (counted) when not described or refused.
  Incoming* lookup(const WireHeader& h) noexcept {
    for (Session& s : sessions_) {
      if (s.id != h.session) continue;
      if (h.channel_id < s.by_id.size()) {
        if (Incoming* c = s.by_id[h.channel_id]) return c;
        if (s.refused[h.channel_id]) {
          ++report_.refused;
          return nullptr;
        }
      }
      break;
    }
    ++report_.undescribed;  // a gap once its description comes
    return nullptr;
  }

  // Far sequence `target` is next: everything before it that did not come becomes a gap, for
  // `reason` (source_loss: to the far side the bridge is the source of what the link lost).
  void catch_up(Incoming& c, std::uint64_t target, core::GapReason reason = core::GapReason::source_loss) noexcept {
    const std::uint64_t head = c.writer->next_sequence();
    if (target <= head) return;
    c.writer->skip(target - head, reason);
    c.report.gaps += target - head;
    report_.gaps += target - head;
  }

  // The block records of one frame, in order (check_header saw that they fill it exactly).
  void on_blocks() {
    const auto* frame = static_cast<const std::byte*>(head_.data());
    const std::size_t size = head_.size();
    WireHeader h;
    for (std::size_t off = 0; off < size; off += sizeof h + h.payload_bytes) {
      std::memcpy(&h, frame + off, sizeof h);
      on_block(h, frame + off + sizeof h);
    }
  }

  void on_block(const WireHeader& h, const std::byte* payload) {
    Incoming* c = lookup(h);
    if (c == nullptr) return;
    const std::uint64_t bytes = std::uint64_t{h.samples} * c->sample_bytes;
    if (bytes > c->block_bytes || h.payload_bytes != bytes) {  // check_header: the record holds payload_bytes
      ++report_.malformed;
      return;
    }
    const std::uint64_t target = h.sequence + c->offset;
    if (target < c->writer->next_sequence()) {  // already here, or an old session's straggler
      ++c->report.late;
      ++report_.late;
      return;
    }
    catch_up(*c, target);
    std::span<std::byte> out;
    if (c->writer->claim(out) != core::ClaimStatus::ok) {  // a far lossless reader is full: counted at source
      ++c->report.dropped;
      ++report_.dropped;
      return;
    }
    if (bytes != 0) std::memcpy(out.data(), payload, bytes);
    c->writer->publish(h.samples, h.realtime_ns, h.monotonic_ns, h.flags);
    ++c->report.received;
    ++report_.received;
    report_.bytes += bytes;
  }

  void on_mark(const WireHeader& h) {
    Incoming* c = lookup(h);
    if (c == nullptr) return;
    catch_up(*c, h.sequence + c->offset);
  }

  // A run the near writer published as a gap: the same gap here, for its reason (what did not
  // arrive before it stays source_loss).
  void on_gap(const WireHeader& h) {
    Incoming* c = lookup(h);
    if (c == nullptr) return;
    const std::uint64_t target = h.sequence + c->offset;
    catch_up(*c, target);
    const auto reason = static_cast<std::size_t>(core::lost_reason(h.flags));
    catch_up(*c, target + h.gap_blocks,
             (h.flags & core::kBlockGapFlag) != 0 && reason < core::kGapReasonCount ? static_cast<core::GapReason>(reason)
                                                                                    : core::GapReason::source_loss);
  }

  void on_describe(const WireHeader& h) {
    ZmqMessage desc, labels;
    if (zmq_msg_recv(desc.get(), socket_, ZMQ_DONTWAIT) < 0 || desc.size() != sizeof(ChannelDescription) ||
        zmq_msg_recv(labels.get(), socket_, ZMQ_DONTWAIT) < 0) {
      ++report_.malformed;
      return;
    }
    ChannelDescription x;
    std::memcpy(&x, desc.data(), sizeof x);
    Session& s = session(h.session);
    if (h.channel_id < s.by_id.size() && (s.by_id[h.channel_id] != nullptr || s.refused[h.channel_id])) return;
    if (h.channel_id >= s.by_id.size()) {
      s.by_id.resize(h.channel_id + 1, nullptr);
      s.refused.resize(h.channel_id + 1, false);
    }
    const std::string sender(field_text(x.sender, sizeof x.sender));
    const std::string near(field_text(h.channel, sizeof h.channel));
    const std::string far = expand_prefix(options_.prefix, sender) + near;
    std::vector<std::string> label_names;
    for (std::string_view rest(static_cast<const char*>(labels.data()), labels.size()); !rest.empty();) {
      const std::size_t end = rest.find('\0');
      label_names.emplace_back(rest.substr(0, end));
      rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    }
    Incoming* c = attach(far, sender, h, x, label_names);
    if (c == nullptr) {
      s.refused[h.channel_id] = true;
      return;
    }
    if (c->stream_id != x.stream_id) {  // the near channel was made anew: its sequences start again
      c->stream_id = x.stream_id;
      c->offset = c->writer->next_sequence();
      save_origin(*c);
      fmt::print(stderr, "weir bridge recv {}: channel '{}' from '{}' is a new stream; continuing at block {}\n",
                 options_.name, far, sender, c->offset);
    }
    s.by_id[h.channel_id] = c;
  }

  // The far channel for a description: known, attached or created; nullptr (said once) if refused.
  Incoming* attach(const std::string& far, const std::string& sender, const WireHeader& h, const ChannelDescription& x,
                   const std::vector<std::string>& labels) {
    if (auto it = channels_.find(far); it != channels_.end()) {
      Incoming& c = *it->second;
      if (!c.writer) return nullptr;
      if (c.sender != sender) {
        refuse(far, fmt::format("it is fed by sender '{}', not '{}' (give the receiver --prefix '{{sender}}.')", c.sender, sender));
        return nullptr;
      }
      return &c;
    }
    auto c = std::make_unique<Incoming>();
    c->name = far;
    c->sender = sender;
    c->report.name = far;
    c->report.sender = sender;
    Incoming& ref = *c;
    channels_.emplace(far, std::move(c));
    if (far.size() >= kWireNameBytes) {
      refuse(far, "the name with the prefix is too long");
      return nullptr;
    }
    if (auto index = core::find_channel(arena_, far); !index) {
      core::ChannelSpec spec;
      spec.name = far;
      spec.dtype = static_cast<core::Dtype>(h.dtype);
      spec.rate_hz = std::bit_cast<double>(x.rate_bits);
      spec.units = field_text(x.units, sizeof x.units);
      spec.labels = labels;
      spec.samples_per_block = x.samples_per_block;
      spec.ring_blocks = x.ring_blocks;
      spec.full_policy = static_cast<core::FullPolicy>(x.full_policy);
      spec.wait_timeout_ns = x.wait_timeout_ns;
      if (h.frames_per_block != 0) {
        spec.frame.frames_per_block = h.frames_per_block;
        spec.frame.frame_elements = h.frame_elements;
        spec.frame.axis.name = field_text(x.axis_name, sizeof x.axis_name);
        spec.frame.axis.units = field_text(x.axis_units, sizeof x.axis_units);
        spec.frame.axis.start = std::bit_cast<double>(x.axis_start_bits);
        spec.frame.axis.step = std::bit_cast<double>(x.axis_step_bits);
        spec.frame.axis.values_key = field_text(x.axis_values_key, sizeof x.axis_values_key);
      }
      if (auto made = core::create_channel(arena_, spec); !made && core::find_channel(arena_, far)) {
        // made by someone else meanwhile: attach below
      } else if (!made) {
        refuse(far, made.error().what);
        return nullptr;
      } else {
        ref.report.created = true;
      }
    }
    auto writer = core::ChannelWriter::open(arena_, far);
    if (!writer) {
      refuse(far, writer.error().what);
      return nullptr;
    }
    if (const std::string why = mismatch(writer->desc(), h, x); !why.empty()) {
      refuse(far, why);
      return nullptr;
    }
    ref.sample_bytes = writer->desc().sample_bytes;
    ref.block_bytes = std::uint64_t{writer->desc().samples_per_block} * ref.sample_bytes;
    ref.writer.emplace(std::move(*writer));
    load_origin(ref, x.stream_id);
    return &ref;
  }

  void refuse(const std::string& far, const std::string& why) {
    fmt::print(stderr, "weir bridge recv {}: refusing channel '{}': {}\n", options_.name, far, why);
  }

  std::string origin_key(const Incoming& c) const { return keys_.prefix() + "origin." + c.name; }

  // Where this stream's sequences sit in the far channel: as saved by an earlier run for the same
  // stream; else right after what the channel holds (0 for a new channel).
  void load_origin(Incoming& c, std::uint64_t stream_id) {
    std::array<std::uint64_t, 2> saved{};
    core::ValueInfo info;
    const auto status = keys_.kv().get(origin_key(c), std::as_writable_bytes(std::span(saved)), info);
    c.stream_id = stream_id;
    if (status == core::KvStatus::ok && info.length == sizeof saved && saved[0] == stream_id) {
      c.offset = saved[1];
    } else {
      c.offset = c.writer->next_sequence();
      if (c.offset != 0)
        fmt::print(stderr, "weir bridge recv {}: channel '{}' holds {} blocks of another stream; continuing after them\n",
                   options_.name, c.name, c.offset);
    }
    save_origin(c);
  }

  void save_origin(const Incoming& c) {
    const std::array<std::uint64_t, 2> value{c.stream_id, c.offset};
    if (keys_.kv().set_wait(origin_key(c), std::as_bytes(std::span(value))) != core::KvStatus::ok)
      fmt::print(stderr, "weir bridge recv {}: cannot keep '{}' (key too long or arena full): a restarted receiver "
                         "will treat its stream as new\n", options_.name, origin_key(c));
  }

  void publish_keys() noexcept {
    keys_.set(k_received_, report_.received);
    keys_.set(k_bytes_, report_.bytes);
    keys_.set(k_gaps_, report_.gaps);
    keys_.set(k_late_, report_.late);
    keys_.set(k_dropped_, report_.dropped);
    keys_.set(k_refused_, report_.refused);
    keys_.set(k_undescribed_, report_.undescribed);
    keys_.set(k_malformed_, report_.malformed);
    keys_.set(k_sessions_, report_.sessions);
    keys_.set(k_peers_, monitor_.connections());
    keys_.set(k_auth_, monitor_.auth_failures());
    keys_.set(k_zap_, zap_ != nullptr ? zap_->refused() : 0);
    keys_.publish(monitor_.connections() > 0 ? "up" : "down");
  }

  const core::Arena& arena_;
  const ReceiverOptions& options_;
  void* socket_;
  LinkMonitor& monitor_;
  const ZapHandler* zap_;
  core::CounterKeys keys_;
  std::size_t k_received_ = 0, k_bytes_ = 0, k_gaps_ = 0, k_late_ = 0, k_dropped_ = 0, k_refused_ = 0,
              k_undescribed_ = 0, k_malformed_ = 0, k_sessions_ = 0, k_peers_ = 0, k_auth_ = 0, k_zap_ = 0;
  std::map<std::string, std::unique_ptr<Incoming>> channels_;
  std::vector<Session> sessions_;
  ReceiverReport report_;
  ZmqMessage head_;
};

Result<std::unique_ptr<ZapHandler>> secure_server(void* context, void* socket, const Security& security) {
  if (security.plain) return std::unique_ptr<ZapHandler>();
  auto secret = read_key(security.secret_key_file, true);
  if (!secret) return tl::make_unexpected(secret.error());
  auto allowed = read_allowed_keys(security.allow_folder);
  if (!allowed) return tl::make_unexpected(allowed.error());
  auto zap = ZapHandler::start(context, std::move(*allowed));
  if (!zap) return tl::make_unexpected(zap.error());
  const int one = 1;
  if (auto ok = set_int(socket, ZMQ_CURVE_SERVER, one, "ZMQ_CURVE_SERVER"); !ok) return tl::make_unexpected(ok.error());
  if (auto ok = set_bytes(socket, ZMQ_CURVE_SECRETKEY, secret->data(), secret->size(), "ZMQ_CURVE_SECRETKEY"); !ok)
    return tl::make_unexpected(ok.error());
  if (auto ok = set_bytes(socket, ZMQ_ZAP_DOMAIN, "weir", 4, "ZMQ_ZAP_DOMAIN"); !ok) return tl::make_unexpected(ok.error());
  return std::move(*zap);
}

}  // namespace

Result<void> validate(const ReceiverOptions& o) {
  if (o.name.empty() || o.name.size() >= kWireNameBytes)
    return fail(Errc::invalid_argument, fmt::format("bridge name '{}': 1 to {} bytes", o.name, kWireNameBytes - 1));
  if (o.endpoint.empty()) return fail(Errc::invalid_argument, "bridge recv: no endpoint (--bind or --from)");
  if (o.recv_hwm <= 0) return fail(Errc::invalid_argument, fmt::format("bridge recv: --hwm {} must be > 0", o.recv_hwm));
  if (!o.security.plain) {
    if (o.security.secret_key_file.empty() || o.security.allow_folder.empty())
      return fail(Errc::invalid_argument,
                  "bridge recv: CURVE needs --curve-key (this receiver's .key) and --allow (a folder of the senders' "
                  ".pub files); make them with `weir bridge keygen`, or pass --plain for unencrypted TCP");
    if (zmq_has("curve") == 0) return fail(Errc::invalid_argument, "bridge recv: this libzmq has no CURVE; --plain only");
  }
  return {};
}

Result<ReceiverReport> run_receiver(const core::Arena& arena, const ReceiverOptions& options,
                                    const std::atomic<bool>& stop) {
  if (auto ok = validate(options); !ok) return tl::make_unexpected(ok.error());
  auto context = make_context();
  if (!context) return tl::make_unexpected(context.error());
  auto socket = make_socket(context->get(), ZMQ_PULL, "bridge receiver");
  if (!socket) return tl::make_unexpected(socket.error());
  if (auto ok = set_int(socket->get(), ZMQ_RCVHWM, options.recv_hwm, "ZMQ_RCVHWM"); !ok)
    return tl::make_unexpected(ok.error());
  auto zap = secure_server(context->get(), socket->get(), options.security);  // before bind: no unchecked peer
  if (!zap) return tl::make_unexpected(core::with_context(zap.error(), "bridge recv " + options.name));
  auto monitor = LinkMonitor::start(context->get(), socket->get(), "recv-" + options.name + "-" + std::to_string(::getpid()));
  if (!monitor) return tl::make_unexpected(monitor.error());
  if (auto ok = attach_endpoint(socket->get(), options.endpoint, options.bind); !ok)
    return tl::make_unexpected(core::with_context(ok.error(), "bridge recv " + options.name));
  ReceiverReport report;
  {
    Receiver receiver(arena, options, socket->get(), *monitor, zap->get());
    report = receiver.run(stop);
  }
  (void)zmq_socket_monitor(socket->get(), nullptr, 0);
  (void)set_int(socket->get(), ZMQ_LINGER, 0, "ZMQ_LINGER");  // nothing to flush on a PULL
  return report;
}

}  // namespace weir::bridge
