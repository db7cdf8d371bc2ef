// The receive loop: recvmmsg batches into buffers allocated once, decode in place, route by stream
// id, place with the stream's assembler, count into arena keys a few times a second.
#include "weir/udp/receiver.hpp"

#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <span>

#include <fmt/format.h>

#include "time_units.hpp"
#include "udp_socket.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/clock.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/udp/raw_packet.hpp"
#include "weir/udp/vita49.hpp"

namespace weir::acq {

namespace {

constexpr std::size_t kControlBytes = 64;      // room for one SO_RXQ_OVFL control message
constexpr std::uint64_t kMaxDrainDatagrams = 1U << 20;  // a stop drains at most this many queued datagrams
constexpr int kMaxCpu = CPU_SETSIZE;

tl::unexpected<core::Error> refuse(const UdpOptions& o, const std::string& why) {
  return core::fail(core::Errc::invalid_argument, "udp part '" + o.part + "': " + why);
}
tl::unexpected<core::Error> sys_fail(const UdpOptions& o, const std::string& what, int error) {
  return core::fail(core::Errc::io_error, "udp part '" + o.part + "': " + what + ": " + errno_text(error));
}

// Writes finished blocks into a channel: claim, copy, publish; gaps with skip.
class ChannelSink final : public BlockSink {
 public:
  explicit ChannelSink(core::ChannelWriter writer) : writer_(std::move(writer)) {}
  bool publish(std::span<const std::byte> samples, std::uint32_t count, std::uint64_t realtime_ns,
               std::uint64_t monotonic_ns, std::uint32_t flags) noexcept override {
    std::span<std::byte> slot;
    switch (writer_.claim(slot)) {
      case core::ClaimStatus::ok: break;
      case core::ClaimStatus::dropped: return false;
    }
    std::memcpy(slot.data(), samples.data(), std::min(samples.size(), slot.size()));
    writer_.publish(count, realtime_ns, monotonic_ns, flags);
    return true;
  }
  void skip(std::uint64_t blocks, core::GapReason reason) noexcept override { writer_.skip(blocks, reason); }
  Claim claim(std::span<std::byte>& slot) noexcept override {
    return writer_.claim(slot) == core::ClaimStatus::ok ? Claim::ok : Claim::dropped;
  }
  void commit(std::uint32_t count, std::uint64_t realtime_ns, std::uint64_t monotonic_ns,
              std::uint32_t flags) noexcept override {
    writer_.publish(count, realtime_ns, monotonic_ns, flags);
  }
  [[nodiscard]] const core::ChannelDesc& desc() const noexcept { return writer_.desc(); }

 private:
  core::ChannelWriter writer_;
};

// The names of a stream's counter keys, in the order counter_values() gives them.
constexpr std::array<const char*, 23> kStreamKeys{
    "packets",     "bytes",          "samples",       "lost",          "discarded",      "reordered",
    "late",        "duplicates",     "gap_blocks",    "blocks",        "dropped",        "resyncs",
    "recorded",    "missing",        "source_loss",   "kernel_drop",   "malformed",      "bad_timestamp",
    "width_mismatch", "dtype_mismatch", "oversized",  "overflow",      "malformed_missing"};
std::array<std::uint64_t, kStreamKeys.size()> counter_values(const StreamCounters& c) {
  return {c.packets,        c.bytes,          c.samples,     c.lost_samples,     c.discarded_samples, c.reordered,
          c.late,           c.duplicates,     c.gap_blocks,  c.blocks_published, c.blocks_dropped,    c.resyncs,
          c.recorded,       c.missing_packets, c.source_loss, c.kernel_drop,     c.bad(),             c.bad_timestamp,
          c.width_mismatch, c.dtype_mismatch, c.oversized,   c.overflow,         c.malformed_missing};
}

// The ledger's terms, in the order ledger_values() gives them: keys <part>.accounting.<term>.
constexpr std::array<const char*, 6> kLedgerKeys{"recorded", "source_loss", "kernel_drop",
                                                 "malformed", "duplicate",  "late"};
std::array<std::uint64_t, kLedgerKeys.size()> ledger_values(const UdpLedger& l) {
  return {l.recorded, l.source_loss, l.kernel_drop, l.malformed, l.duplicate, l.late};
}

// The socket's drop counter now (SK_MEMINFO_DROPS): drops a later datagram has not reported yet,
// the last ones of a burst among them. 0 when the kernel does not say.
std::uint64_t socket_drops(int fd) noexcept {
  std::array<std::uint32_t, SK_MEMINFO_VARS> info{};
  socklen_t length = sizeof info;
  if (getsockopt(fd, SOL_SOCKET, SO_MEMINFO, info.data(), &length) != 0 || length <= SK_MEMINFO_DROPS * sizeof(std::uint32_t))
    return 0;
  return info[SK_MEMINFO_DROPS];
}

struct Lane {
  std::uint32_t id = 0;
  std::string channel;
  std::optional<ChannelSink> sink;
  std::optional<StreamAssembler> assembler;
  std::array<core::KeyHandle, kStreamKeys.size()> keys{};
  std::string clock_key;
  std::string clock_written;
};

// One u64 key by handle; a failed write is retried on the next refresh.
void put(core::KvStore& kv, core::KeyHandle handle, std::uint64_t value) noexcept {
  std::array<std::byte, sizeof value> bytes{};
  std::memcpy(bytes.data(), &value, sizeof value);
  (void)kv.set(handle, std::span<const std::byte>(bytes), core::ValueType::u64);
}

core::Result<core::KeyHandle> make_key(core::KvStore& kv, const UdpOptions& o, const std::string& key) {
  core::KeyHandle handle;
  if (const core::KvStatus s = kv.resolve(key, handle, true); s != core::KvStatus::ok)
    return refuse(o, "cannot make counter key '" + key + "': " + core::kv_status_text(s));
  put(kv, handle, 0);
  return handle;
}

core::Result<void> pin_to(const UdpOptions& o) {
  if (o.cpu < 0) return {};
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(static_cast<std::size_t>(o.cpu), &set);
  if (const int e = pthread_setaffinity_np(pthread_self(), sizeof set, &set); e != 0)
    return sys_fail(o, fmt::format("pin the receiving thread to CPU {}", o.cpu), e);
  return {};
}

// The socket: bound, group joined, buffer sized, drop counter and receive timeout on.
struct Socket {
  Fd fd;
  std::uint16_t port = 0;
  std::int64_t rcvbuf = 0;
  bool joined = false;
};

core::Result<Socket> open_socket(const UdpOptions& o) {
  std::optional<SockAddr> group;
  if (!o.group.empty()) {
    auto g = parse_address(o.group, o.port, "multicast group");
    if (!g) return refuse(o, g.error().what);
    if (!g->multicast()) return refuse(o, "multicast group '" + o.group + "' is not a multicast address");
    group = *g;
  }
  SockAddr local;
  if (!o.bind.empty()) {
    auto b = parse_address(o.bind, o.port, "bind address");
    if (!b) return refuse(o, b.error().what);
    local = *b;
  } else {
    local = any_address(group ? group->family() : AF_INET, o.port);
  }
  if (group && group->family() != local.family())
    return refuse(o, "multicast group '" + o.group + "' and bind address '" + o.bind + "' are of different families");

  Socket s;
  s.fd = Fd(::socket(local.family(), SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (s.fd.get() < 0) return sys_fail(o, "socket", errno);
  const int one = 1;
  if (group) (void)setsockopt(s.fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);  // several listeners per group
  // Ask for the buffer (FORCE passes rmem_max with CAP_NET_ADMIN), then report what was granted.
  const int want = static_cast<int>(std::min<std::int64_t>(o.rcvbuf_bytes, INT32_MAX / 2));
  if (setsockopt(s.fd.get(), SOL_SOCKET, SO_RCVBUFFORCE, &want, sizeof want) != 0)
    (void)setsockopt(s.fd.get(), SOL_SOCKET, SO_RCVBUF, &want, sizeof want);
  int granted = 0;
  socklen_t len = sizeof granted;
  if (getsockopt(s.fd.get(), SOL_SOCKET, SO_RCVBUF, &granted, &len) != 0) return sys_fail(o, "getsockopt SO_RCVBUF", errno);
  s.rcvbuf = granted;
  if (setsockopt(s.fd.get(), SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof one) != 0)
    return sys_fail(o, "setsockopt SO_RXQ_OVFL", errno);
  timeval timeout{};
  timeout.tv_sec = kUdpReceiveTimeoutNs / core::kNsPerSecond;
  timeout.tv_usec = (kUdpReceiveTimeoutNs % core::kNsPerSecond) / 1000;
  if (setsockopt(s.fd.get(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout) != 0)
    return sys_fail(o, "setsockopt SO_RCVTIMEO", errno);
  if (::bind(s.fd.get(), local.get(), local.length) != 0)
    return sys_fail(o, "bind " + describe(local) + (errno == EADDRINUSE ? " (is another receiver on this port?)" : ""),
                    errno);
  if (group) {
    int rc = 0;
    if (group->family() == AF_INET) {
      ip_mreq m{};
      m.imr_multiaddr = reinterpret_cast<const sockaddr_in*>(&group->storage)->sin_addr;
      m.imr_interface.s_addr = local.family() == AF_INET && !o.bind.empty()
                                   ? reinterpret_cast<const sockaddr_in*>(&local.storage)->sin_addr.s_addr
                                   : htonl(INADDR_ANY);
      rc = setsockopt(s.fd.get(), IPPROTO_IP, IP_ADD_MEMBERSHIP, &m, sizeof m);
    } else {
      ipv6_mreq m{};
      m.ipv6mr_multiaddr = reinterpret_cast<const sockaddr_in6*>(&group->storage)->sin6_addr;
      m.ipv6mr_interface = 0;
      rc = setsockopt(s.fd.get(), IPPROTO_IPV6, IPV6_JOIN_GROUP, &m, sizeof m);
    }
    if (rc != 0) return sys_fail(o, "join multicast group '" + o.group + "'", errno);
    s.joined = true;
  }
  sockaddr_storage bound{};
  socklen_t bound_len = sizeof bound;
  if (getsockname(s.fd.get(), reinterpret_cast<sockaddr*>(&bound), &bound_len) != 0)
    return sys_fail(o, "getsockname", errno);
  s.port = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<const sockaddr_in6*>(&bound)->sin6_port
                                             : reinterpret_cast<const sockaddr_in*>(&bound)->sin_port);
  return s;
}

// The batch buffers: datagrams, their iovecs and headers, control messages. Allocated once.
struct Batch {
  std::vector<std::byte> data;
  std::vector<iovec> iov;
  std::vector<mmsghdr> msgs;
  std::vector<std::byte> control;
  explicit Batch(std::uint32_t n)
      : data(std::size_t{n} * kUdpMaxDatagramBytes), iov(n), msgs(n), control(std::size_t{n} * kControlBytes) {}
  void rearm(std::uint32_t n) noexcept {
    for (std::uint32_t i = 0; i < n; ++i) {
      iov[i].iov_base = data.data() + std::size_t{i} * kUdpMaxDatagramBytes;
      iov[i].iov_len = kUdpMaxDatagramBytes;
      msgs[i].msg_hdr = msghdr{};
      msgs[i].msg_hdr.msg_iov = &iov[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
      msgs[i].msg_hdr.msg_control = control.data() + std::size_t{i} * kControlBytes;
      msgs[i].msg_hdr.msg_controllen = kControlBytes;
      msgs[i].msg_len = 0;
    }
  }
};

}  // namespace

core::Result<PacketFormat> parse_packet_format(std::string_view text) {
  if (text == "vita49") return PacketFormat::vita49;
  if (text == "raw") return PacketFormat::raw;
  return core::fail(core::Errc::invalid_argument,
                    "unknown packet format '" + std::string(text) + "' (vita49 or raw)");
}

const char* packet_format_name(PacketFormat format) noexcept {
  switch (format) {
    case PacketFormat::vita49: return "vita49";
    case PacketFormat::raw: return "raw";
  }
  return "?";
}

core::Result<void> validate(const UdpOptions& o) {
  if (o.part.empty()) return core::fail(core::Errc::invalid_argument, "udp: the part needs a name");
  if (o.streams.empty()) return refuse(o, "map at least one stream id to a channel");
  for (std::size_t i = 0; i < o.streams.size(); ++i) {
    const UdpStream& s = o.streams[i];
    if (s.channel.empty() || s.channel.size() > core::kMaxNameBytes)
      return refuse(o, fmt::format("stream {}: channel name '{}' must be 1 to {} bytes", s.id, s.channel,
                                   core::kMaxNameBytes));
    for (std::size_t j = 0; j < i; ++j) {
      if (o.streams[j].id == s.id) return refuse(o, fmt::format("stream id {} is mapped twice", s.id));
      if (o.streams[j].channel == s.channel)
        return refuse(o, fmt::format("channel '{}' is fed by streams {} and {}; one stream per channel",
                                     s.channel, o.streams[j].id, s.id));
    }
  }
  if (o.batch == 0 || o.batch > kUdpMaxBatch)
    return refuse(o, fmt::format("batch must be 1 to {} datagrams, not {}", kUdpMaxBatch, o.batch));
  if (o.reorder_blocks > kUdpMaxReorderBlocks)
    return refuse(o, fmt::format("reorder window must be 0 to {} blocks, not {}", kUdpMaxReorderBlocks,
                                 o.reorder_blocks));
  if (o.horizon_blocks <= o.reorder_blocks || o.horizon_blocks > kUdpMaxHorizonBlocks)
    return refuse(o, fmt::format("timestamp horizon must be more blocks than the reorder window ({}) and at most {}, "
                                 "not {}", o.reorder_blocks, kUdpMaxHorizonBlocks, o.horizon_blocks));
  if (o.rcvbuf_bytes <= 0) return refuse(o, fmt::format("rcvbuf must be a positive size, not {}", o.rcvbuf_bytes));
  if (o.cpu >= kMaxCpu) return refuse(o, fmt::format("cpu {} is past the last CPU this build can name", o.cpu));
  if (!std::isfinite(o.duration_s) || o.duration_s < 0)
    return refuse(o, fmt::format("duration must be >= 0 seconds, not {}", o.duration_s));
  if (!o.bind.empty())
    if (auto b = parse_address(o.bind, o.port, "bind address"); !b) return refuse(o, b.error().what);
  if (!o.group.empty()) {
    auto g = parse_address(o.group, o.port, "multicast group");
    if (!g) return refuse(o, g.error().what);
    if (!g->multicast()) return refuse(o, "multicast group '" + o.group + "' is not a multicast address");
  }
  if (o.create_missing) {
    if (!std::isfinite(o.rate_hz) || o.rate_hz <= 0)
      return refuse(o, fmt::format("rate must be a positive number of Hz, not {}", o.rate_hz));
    if (o.block_samples == 0 || o.block_samples > core::kMaxSamplesPerBlock)
      return refuse(o, fmt::format("block must be 1 to {} samples, not {}", core::kMaxSamplesPerBlock, o.block_samples));
  }
  return {};
}

core::Result<UdpReport> run_udp(const core::Arena& arena, const UdpOptions& o, const std::atomic<bool>& stop) {
  if (auto ok = validate(o); !ok) return tl::make_unexpected(ok.error());
  const std::string where = arena.location().describe();

  // Channels: create the missing ones (standalone) or refuse them (a pipeline declares them).
  for (const UdpStream& s : o.streams) {
    if (core::find_channel(arena, s.channel)) continue;
    if (!o.create_missing)
      return refuse(o, fmt::format("stream {}: channel '{}' does not exist in {} (declare it in the pipeline, or "
                                   "give --dtype, --rate and --block to create it)", s.id, s.channel, where));
    core::ChannelSpec spec;
    spec.name = s.channel;
    spec.dtype = o.dtype;
    spec.rate_hz = o.rate_hz;
    spec.units = "counts";
    spec.labels = {"udp"};
    spec.samples_per_block = o.block_samples;
    spec.ring_blocks = o.ring_blocks;
    spec.full_policy = o.full_policy;
    spec.wait_timeout_ns = o.wait_timeout_ns;
    if (auto created = core::create_channel(arena, spec); !created && !core::find_channel(arena, s.channel))
      return tl::make_unexpected(core::with_context(created.error(), "udp part '" + o.part + "'"));
  }

  PortDrops port;  // before the lanes: their assemblers point at it
  std::vector<std::unique_ptr<Lane>> lanes;
  core::KvStore kv(arena);
  for (const UdpStream& s : o.streams) {
    auto lane = std::make_unique<Lane>();
    lane->id = s.id;
    lane->channel = s.channel;
    auto writer = core::ChannelWriter::open(arena, s.channel);
    if (!writer) return tl::make_unexpected(core::with_context(writer.error(), "udp part '" + o.part + "'"));
    lane->sink.emplace(std::move(*writer));
    const core::ChannelDesc& d = lane->sink->desc();
    if (o.create_missing && (d.dtype != o.dtype || d.samples_per_block != o.block_samples))
      return refuse(o, fmt::format("channel '{}' in {} exists with dtype {} and blocks of {} samples, not {} and {}",
                                   s.channel, where, core::dtype_name(d.dtype), d.samples_per_block,
                                   core::dtype_name(o.dtype), o.block_samples));
    StreamConfig config;
    config.dtype = d.dtype;
    config.samples_per_block = d.samples_per_block;
    config.rate_hz = std::bit_cast<double>(d.rate_bits);
    config.reorder_blocks = o.reorder_blocks;
    config.max_packet_samples = kUdpMaxDatagramBytes / std::max<std::uint32_t>(1, sample_bytes(d.dtype));
    config.horizon_blocks = o.horizon_blocks;
    auto assembler = StreamAssembler::create(config, *lane->sink, &port);
    if (!assembler) return refuse(o, "channel '" + s.channel + "': " + assembler.error().what);
    lane->assembler.emplace(std::move(*assembler));
    for (std::size_t k = 0; k < kStreamKeys.size(); ++k) {
      auto key = make_key(kv, o, o.part + "." + s.channel + "." + kStreamKeys[k]);
      if (!key) return tl::make_unexpected(key.error());
      lane->keys[k] = *key;
    }
    lane->clock_key = o.part + "." + s.channel + ".clock";
    lanes.push_back(std::move(lane));
  }
  const std::string prefix = o.part + ".";
  auto port_key = make_key(kv, o, prefix + "port");
  auto rcvbuf_key = make_key(kv, o, prefix + "rcvbuf_bytes");
  auto packets_key = make_key(kv, o, prefix + "packets");
  auto bytes_key = make_key(kv, o, prefix + "bytes");
  auto unknown_key = make_key(kv, o, prefix + "unknown_stream");
  for (auto* k : {&port_key, &rcvbuf_key, &packets_key, &bytes_key, &unknown_key})
    if (!*k) return tl::make_unexpected(k->error());
  std::array<core::KeyHandle, kPacketStatusCount> malformed_keys{};
  for (std::size_t r = 1; r < kPacketStatusCount; ++r) {
    auto key = make_key(kv, o, prefix + "malformed." + std::string(packet_status_name(static_cast<PacketStatus>(r))));
    if (!key) return tl::make_unexpected(key.error());
    malformed_keys[r] = *key;
  }

  std::array<core::KeyHandle, kLedgerKeys.size()> ledger_keys{};
  for (std::size_t t = 0; t < kLedgerKeys.size(); ++t) {
    auto key = make_key(kv, o, prefix + "accounting." + kLedgerKeys[t]);
    if (!key) return tl::make_unexpected(key.error());
    ledger_keys[t] = *key;
  }

  auto socket = open_socket(o);
  if (!socket) return tl::make_unexpected(socket.error());
  if (auto pinned = pin_to(o); !pinned) return tl::make_unexpected(pinned.error());

  UdpReport report;
  report.part = o.part;
  report.port = socket->port;
  report.rcvbuf_requested = o.rcvbuf_bytes;
  report.rcvbuf_granted = socket->rcvbuf;
  report.joined_group = socket->joined;

  // The ledger from the streams' counters and the port's: every datagram received is recorded,
  // duplicate, late or malformed; every one missing is source_loss, kernel_drop or (its place taken by
  // a refused one) malformed.
  const auto ledger = [&] {
    UdpLedger l;
    l.kernel_drop = std::max(port.kernel, report.kernel_drops);
    l.malformed = port.refused;
    for (const auto& lane : lanes) {
      const StreamCounters& c = lane->assembler->counters();
      l.recorded += c.recorded;
      l.source_loss += c.source_loss;
      l.malformed += c.bad();
      l.duplicate += c.duplicates;
      l.late += c.late;
    }
    l.source_loss -= std::min(l.source_loss, port.refused_moved);
    return l;
  };
  const auto publish_counters = [&] {
    report.kernel_drops = std::max(report.kernel_drops, socket_drops(socket->fd.get()));
    for (auto& lane : lanes) {
      const auto values = counter_values(lane->assembler->counters());
      for (std::size_t k = 0; k < values.size(); ++k) put(kv, lane->keys[k], values[k]);
      if (lane->assembler->clock_source() != ClockSource::unknown) {
        std::string text = lane->assembler->clock_text();
        if (text != lane->clock_written && kv.set_text(lane->clock_key, text) == core::KvStatus::ok)
          lane->clock_written = std::move(text);  // rewritten only when it changes: no allocation per refresh otherwise
      }
    }
    const auto terms = ledger_values(ledger());
    for (std::size_t t = 0; t < terms.size(); ++t) put(kv, ledger_keys[t], terms[t]);
    put(kv, *packets_key, report.datagrams);
    put(kv, *bytes_key, report.bytes);
    put(kv, *unknown_key, report.unknown_stream);
    for (std::size_t r = 1; r < kPacketStatusCount; ++r) put(kv, malformed_keys[r], report.malformed[r]);
  };
  put(kv, *rcvbuf_key, static_cast<std::uint64_t>(socket->rcvbuf));
  put(kv, *port_key, socket->port);  // last: tests and tools wait for it to know the socket is bound

  Batch batch(o.batch);
  std::size_t last_lane = 0;
  const auto handle = [&](const std::byte* bytes, std::size_t length, const msghdr& hdr, std::uint64_t rx_real,
                          std::uint64_t rx_mono) noexcept {
    ++report.datagrams;
    report.bytes += length;
    for (cmsghdr* c = CMSG_FIRSTHDR(&hdr); c != nullptr; c = CMSG_NXTHDR(const_cast<msghdr*>(&hdr), c)) {
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL) {
        std::uint32_t drops = 0;
        std::memcpy(&drops, CMSG_DATA(c), sizeof drops);
        port.kernel = std::max<std::uint64_t>(port.kernel, drops);  // the socket's total before this datagram
      }
    }
    if ((hdr.msg_flags & MSG_TRUNC) != 0) {
      ++report.malformed[static_cast<std::size_t>(PacketStatus::truncated)];
      ++port.refused;
      return;
    }
    const std::span<const std::byte> datagram(bytes, length);
    PacketView view;
    // VITA 49 samples are the channel's dtype; the stream id comes first, so decode as the first
    // lane's dtype and redo when the stream's differs (several dtypes on one port are rare).
    PacketStatus status = o.format == PacketFormat::raw
                              ? decode_raw(datagram, view)
                              : decode_vita49(datagram, lanes[last_lane]->sink->desc().dtype, view);
    if (status != PacketStatus::ok) {
      ++report.malformed[static_cast<std::size_t>(status)];
      ++port.refused;
      return;
    }
    std::size_t at = last_lane;
    if (lanes[at]->id != view.stream_id) {
      at = lanes.size();
      for (std::size_t i = 0; i < lanes.size(); ++i)
        if (lanes[i]->id == view.stream_id) at = i;
    }
    if (at == lanes.size()) {
      ++report.unknown_stream;
      ++port.refused;
      return;
    }
    last_lane = at;
    if (o.format == PacketFormat::vita49 && view.dtype != lanes[at]->sink->desc().dtype) {
      status = decode_vita49(datagram, lanes[at]->sink->desc().dtype, view);
      if (status != PacketStatus::ok) {
        ++report.malformed[static_cast<std::size_t>(status)];
        ++port.refused;
        return;
      }
    }
    (void)lanes[at]->assembler->accept(view, rx_real, rx_mono);
  };

  const std::int64_t start_ns = core::monotonic_ns();
  const auto duration_ns = static_cast<std::int64_t>(o.duration_s * kNsPerS);
  std::int64_t next_counters_ns = start_ns + kUdpCounterPeriodNs;
  std::int64_t end_ns = start_ns;
  const auto receive = [&](int flags) -> int {
    batch.rearm(o.batch);
    const int n = recvmmsg(socket->fd.get(), batch.msgs.data(), o.batch, flags, nullptr);
    if (n <= 0) return n;
    const auto rx_real = static_cast<std::uint64_t>(core::realtime_ns());
    const auto rx_mono = static_cast<std::uint64_t>(core::monotonic_ns());
    ++report.batches;
    for (int i = 0; i < n; ++i) {
      const auto k = static_cast<std::size_t>(i);
      handle(batch.data.data() + k * kUdpMaxDatagramBytes, batch.msgs[k].msg_len, batch.msgs[k].msg_hdr, rx_real,
             rx_mono);
    }
    return n;
  };

  for (;;) {
    if (stop.load(std::memory_order_relaxed)) {  // a flag: nothing is ordered on it
      report.stopped = true;
      // What the socket already holds was sent before the stop: take it.
      std::uint64_t drained = 0;
      while (drained < kMaxDrainDatagrams) {
        const int n = receive(MSG_DONTWAIT);
        if (n <= 0) break;
        drained += static_cast<std::uint64_t>(n);
      }
      break;
    }
    if (o.max_packets != 0 && report.datagrams >= o.max_packets) break;
    const std::int64_t now = core::monotonic_ns();
    if (duration_ns > 0 && now - start_ns >= duration_ns) break;
    if (now >= next_counters_ns) {
      publish_counters();
      next_counters_ns = now + kUdpCounterPeriodNs;
    }
    const int n = receive(MSG_WAITFORONE);
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
      return sys_fail(o, "recvmmsg on port " + std::to_string(socket->port), errno);
    if (n > 0) end_ns = core::monotonic_ns();
  }
  end_ns = std::max(end_ns, core::monotonic_ns());

  // Drops no later datagram reported (a burst that ended in them) are in the socket's counter now.
  port.kernel = std::max(port.kernel, socket_drops(socket->fd.get()));
  for (auto& lane : lanes) lane->assembler->finish();
  publish_counters();
  report.ledger = ledger();
  report.kernel_drops = report.ledger.kernel_drop;
  report.elapsed_s = static_cast<double>(end_ns - start_ns) / kNsPerS;
  if (report.elapsed_s > 0) {
    report.packets_per_s = static_cast<double>(report.datagrams) / report.elapsed_s;
    report.bytes_per_s = static_cast<double>(report.bytes) / report.elapsed_s;
  }
  for (std::size_t r = 1; r < kPacketStatusCount; ++r) report.malformed_total += report.malformed[r];
  for (auto& lane : lanes)
    report.streams.push_back(UdpStreamReport{lane->id, lane->channel, lane->assembler->counters(),
                                             lane->assembler->clock_text()});
  return report;
}

}  // namespace weir::acq
