// udpgen: packets built into one batch buffer allocated up front, faults injected from a seeded
// generator, sent with sendmmsg on absolute deadlines.
#include "weir/udp/generator.hpp"

#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <optional>
#include <random>

#include <fmt/format.h>

#include "time_units.hpp"
#include "udp_socket.hpp"
#include "weir/acq/signal_generator.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/clock.hpp"
#include "weir/udp/raw_packet.hpp"
#include "weir/udp/vita49.hpp"

namespace weir::acq {

namespace {

constexpr std::int64_t kRampPeriod = 30'000;        // udpgen_sample wraps here: inside i16 and u16
constexpr std::int64_t kRampStreamStep = 1'000;     // stream s starts its ramp s * this along
constexpr std::uint32_t kMaxStreams = 4096;
constexpr std::uint32_t kMalformedKinds = 3;

tl::unexpected<core::Error> bad_option(const std::string& why) {
  return core::fail(core::Errc::invalid_argument, "udpgen: " + why);
}

template <class T>
void fill_as(std::byte* out, std::uint32_t id, std::uint64_t first, std::uint32_t count) {
  for (std::uint32_t i = 0; i < count; ++i) {
    const auto v = static_cast<T>(udpgen_sample(id, first + i));
    std::memcpy(out + std::size_t{i} * sizeof(T), &v, sizeof v);
  }
}

void fill(core::Dtype dtype, std::byte* out, std::uint32_t id, std::uint64_t first, std::uint32_t count) {
  switch (dtype) {
    case core::Dtype::i8: fill_as<std::int8_t>(out, id, first, count); break;
    case core::Dtype::u8: fill_as<std::uint8_t>(out, id, first, count); break;
    case core::Dtype::i16: fill_as<std::int16_t>(out, id, first, count); break;
    case core::Dtype::u16: fill_as<std::uint16_t>(out, id, first, count); break;
    case core::Dtype::i32: fill_as<std::int32_t>(out, id, first, count); break;
    case core::Dtype::u32: fill_as<std::uint32_t>(out, id, first, count); break;
    case core::Dtype::i64: fill_as<std::int64_t>(out, id, first, count); break;
    case core::Dtype::f32: fill_as<float>(out, id, first, count); break;
    case core::Dtype::f64: fill_as<double>(out, id, first, count); break;
    case core::Dtype::c64: fill_as<std::uint64_t>(out, id, first, count); break;  // any bits will do
  }
}

// The pulses of stream `id`: the simulator's detector pulses at 1 V height scale, with a baseline
// noise of noise_lsb codes of the dtype (one LSB is full scale / 2^(bits - 1) volts).
core::Result<SignalGenerator> pulses_generator(const UdpGenOptions& o, std::uint32_t id) {
  SignalConfig signal;
  signal.kind = SignalKind::pulses;
  signal.sample_rate_hz = o.rate_hz;
  signal.seed = o.seed + id;
  signal.pulses.count_rate_hz = o.count_rate_hz;
  const double lsb_v = kUdpGenFullScaleV / std::ldexp(1.0, static_cast<int>(8 * sample_bytes(o.dtype)) - 1);
  signal.pulses.baseline_noise = o.noise_lsb * lsb_v / signal.amplitude;
  return SignalGenerator::create(signal, o.packet_samples);
}

struct StreamState {
  UdpGenStreamReport report;
  std::optional<SignalGenerator> pulses;  // the pulses signal's generator
  bool holding = false;         // a packet held back for reordering
  std::vector<std::byte> held;  // its bytes (sized once)
  std::size_t held_bytes = 0;
};

// The outgoing batch: datagrams back to back, sent when full.
class Sender {
 public:
  Sender(int fd, const SockAddr& dest, std::uint32_t batch, std::size_t max_bytes)
      : fd_(fd), dest_(dest), max_bytes_(max_bytes), data_(batch * max_bytes), iov_(batch), msgs_(batch) {}

  std::byte* slot() noexcept { return data_.data() + count_ * max_bytes_; }
  void commit(std::size_t bytes, UdpGenReport& report) noexcept {
    iov_[count_].iov_base = slot();
    iov_[count_].iov_len = bytes;
    ++count_;
    if (count_ == iov_.size()) flush(report);
  }
  void flush(UdpGenReport& report) noexcept {
    for (std::size_t i = 0; i < count_; ++i) {
      msgs_[i] = mmsghdr{};
      msgs_[i].msg_hdr.msg_name = const_cast<sockaddr*>(dest_.get());
      msgs_[i].msg_hdr.msg_namelen = dest_.length;
      msgs_[i].msg_hdr.msg_iov = &iov_[i];
      msgs_[i].msg_hdr.msg_iovlen = 1;
    }
    std::size_t done = 0;
    while (done < count_) {
      const int n = sendmmsg(fd_, msgs_.data() + done, static_cast<unsigned>(count_ - done), 0);
      if (n < 0) {
        if (errno == EINTR) continue;
        ++report.send_errors;  // this datagram is lost to the receiver: skip it, send the rest
        ++done;
        continue;
      }
      for (std::size_t i = done; i < done + static_cast<std::size_t>(n); ++i) report.bytes += iov_[i].iov_len;
      report.datagrams += static_cast<std::uint64_t>(n);
      done += static_cast<std::size_t>(n);
    }
    count_ = 0;
  }

 private:
  int fd_;
  SockAddr dest_;
  std::size_t max_bytes_;
  std::vector<std::byte> data_;
  std::vector<iovec> iov_;
  std::vector<mmsghdr> msgs_;
  std::size_t count_ = 0;
};

}  // namespace

std::int64_t udpgen_sample(std::uint32_t stream_id, std::uint64_t index) noexcept {
  return static_cast<std::int64_t>((index + std::uint64_t{stream_id} * kRampStreamStep) %
                                   static_cast<std::uint64_t>(kRampPeriod));
}

core::Result<VitaTime> parse_vita_time(std::string_view text) {
  if (text == "count") return VitaTime::count;
  if (text == "ps") return VitaTime::ps;
  if (text == "none") return VitaTime::none;
  return bad_option("unknown VITA 49 time '" + std::string(text) + "' (count, ps or none)");
}

core::Result<UdpGenSignal> parse_udpgen_signal(std::string_view text) {
  if (text == "ramp") return UdpGenSignal::ramp;
  if (text == "pulses") return UdpGenSignal::pulses;
  return bad_option("unknown signal '" + std::string(text) + "' (ramp or pulses)");
}

core::Result<std::vector<std::byte>> udpgen_pulses(const UdpGenOptions& o, std::uint32_t stream_id, std::uint64_t count) {
  if (auto ok = validate(o); !ok) return tl::make_unexpected(ok.error());
  if (o.signal != UdpGenSignal::pulses) return bad_option("udpgen_pulses: the options' signal is not pulses");
  auto generator = pulses_generator(o, stream_id);
  if (!generator) return bad_option("pulses: " + generator.error().what);
  const std::uint32_t one = sample_bytes(o.dtype);
  std::vector<std::byte> out(count * one);
  for (std::uint64_t at = 0; at < count; at += o.packet_samples) {  // packet by packet, as udpgen fills them
    const auto n = static_cast<std::uint32_t>(std::min<std::uint64_t>(o.packet_samples, count - at));
    (void)generator->fill(o.dtype, std::span<std::byte>(out.data() + at * one, std::size_t{n} * one), n, kUdpGenFullScaleV);
  }
  return out;
}

core::Result<void> validate(const UdpGenOptions& o) {
  if (o.port == 0) return bad_option("name the destination port");
  if (auto a = parse_address(o.dest, o.port, "destination"); !a) return bad_option(a.error().what);
  if (o.streams == 0 || o.streams > kMaxStreams) return bad_option(fmt::format("streams must be 1 to {}", kMaxStreams));
  if (sample_bytes(o.dtype) == 0) return bad_option("unknown dtype");
  if (!std::isfinite(o.rate_hz) || o.rate_hz <= 0) return bad_option(fmt::format("rate must be a positive number of Hz, not {}", o.rate_hz));
  if (o.packet_samples == 0) return bad_option("packets must hold at least one sample");
  const std::size_t payload = std::size_t{o.packet_samples} * sample_bytes(o.dtype);
  const std::size_t limit = kUdpMaxDatagramBytes - 64;  // room for either header within one UDP datagram
  if (payload > limit)
    return bad_option(fmt::format("{} samples of {} bytes exceed a datagram ({} bytes of payload at most)", o.packet_samples,
                              sample_bytes(o.dtype), limit));
  if (o.format == PacketFormat::vita49 && payload % kVitaWordBytes != 0)
    return bad_option(fmt::format("VITA 49 payloads are whole 32-bit words: {} samples of {} bytes are not", o.packet_samples,
                              sample_bytes(o.dtype)));
  if (o.format == PacketFormat::vita49 && o.vita_time != VitaTime::none && std::floor(o.rate_hz) != o.rate_hz)
    return bad_option("VITA 49 timestamps need a whole number of samples per second; use --vita-time none");
  if ((o.duration_s > 0) == (o.packets > 0)) return bad_option("give either a duration or a packet count");
  if (!std::isfinite(o.duration_s) || o.duration_s < 0) return bad_option("duration must be >= 0 seconds");
  if (o.burst == 0) return bad_option("burst must be at least 1 packet");
  if (o.batch == 0 || o.batch > kUdpMaxBatch) return bad_option(fmt::format("batch must be 1 to {}", kUdpMaxBatch));
  if (o.signal == UdpGenSignal::pulses) {
    if (!core::dtype_is_integer(o.dtype)) return bad_option("the pulses signal is ADC codes: it needs an integer dtype (i8 ... i64)");
    if (!std::isfinite(o.noise_lsb) || o.noise_lsb < 0)
      return bad_option(fmt::format("noise must be a number of LSB >= 0, not {}", o.noise_lsb));
    if (auto g = pulses_generator(o, o.first_stream_id); !g) return bad_option("pulses: " + g.error().what);
  }
  for (const auto& [name, p] : {std::pair{"loss", o.loss}, std::pair{"reorder", o.reorder},
                                std::pair{"duplicate", o.duplicate}, std::pair{"malformed", o.malformed}})
    if (!(p >= 0 && p <= 1)) return bad_option(fmt::format("{} must be a probability from 0 to 1, not {}", name, p));
  return {};
}

core::Result<UdpGenReport> run_udpgen(const UdpGenOptions& o, const std::atomic<bool>& stop) {
  if (auto ok = validate(o); !ok) return tl::make_unexpected(ok.error());
  const SockAddr dest = *parse_address(o.dest, o.port, "destination");
  Fd fd(::socket(dest.family(), SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return bad_option("socket: " + errno_text(errno));
  if (dest.multicast()) {
    const int ttl = o.multicast_ttl;
    if (dest.family() == AF_INET)
      (void)setsockopt(fd.get(), IPPROTO_IP, IP_MULTICAST_TTL, &ttl, sizeof ttl);
    else
      (void)setsockopt(fd.get(), IPPROTO_IPV6, IPV6_MULTICAST_HOPS, &ttl, sizeof ttl);
  }

  const std::uint32_t one = sample_bytes(o.dtype);
  const std::size_t payload_bytes = std::size_t{o.packet_samples} * one;
  const std::size_t max_bytes = payload_bytes + 64;
  const std::uint64_t packets = o.packets > 0 ? o.packets
                                              : static_cast<std::uint64_t>(std::floor(o.duration_s * o.rate_hz /
                                                                                      o.packet_samples));
  const auto rate_int = static_cast<std::uint64_t>(std::llround(o.rate_hz));

  Sender sender(fd.get(), dest, o.batch, max_bytes);
  std::vector<std::byte> samples(payload_bytes);
  std::vector<std::byte> packet(max_bytes);
  std::vector<StreamState> streams(o.streams);
  for (std::uint32_t s = 0; s < o.streams; ++s) {
    streams[s].report.id = o.first_stream_id + s;
    streams[s].held.resize(max_bytes);
    if (o.signal == UdpGenSignal::pulses) {
      auto generator = pulses_generator(o, streams[s].report.id);
      if (!generator) return bad_option("pulses: " + generator.error().what);
      streams[s].pulses.emplace(std::move(*generator));
    }
  }
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  const auto chance = [&](double p) { return p > 0 && uniform(rng) < p; };

  UdpGenReport report;
  report.dest = describe(dest);
  const std::int64_t start_ns = core::monotonic_ns();
  const std::int64_t start_s = core::realtime_ns() / core::kNsPerSecond + 1;  // stream time 0: a whole second
  const double tick_ns = static_cast<double>(o.burst) * o.packet_samples * kNsPerS / o.rate_hz;

  // Builds packet k of a stream into out; returns its bytes.
  const auto build = [&](StreamState& st, std::uint64_t k, std::byte* out) -> std::size_t {
    const std::uint64_t first = k * o.packet_samples;
    if (st.pulses)
      (void)st.pulses->fill(o.dtype, samples, o.packet_samples, kUdpGenFullScaleV);  // built in order: packet k next
    else
      fill(o.dtype, samples.data(), st.report.id, first, o.packet_samples);
    const std::span<const std::byte> body(samples);
    const std::span<std::byte> dst(out, max_bytes);
    if (o.format == PacketFormat::raw) {
      RawFields f;
      f.stream_id = st.report.id;
      f.sequence = k;
      f.first_sample = first;
      if (o.raw_timestamps)
        f.timestamp_ns = static_cast<std::uint64_t>(start_s) * 1'000'000'000ULL +
                         static_cast<std::uint64_t>(std::llround(static_cast<double>(first) * kNsPerS / o.rate_hz));
      return encode_raw(f, o.dtype, body, dst);
    }
    Vita49Fields f;
    f.stream_id = st.report.id;
    f.count = static_cast<std::uint8_t>(k & 0xF);
    if (o.vita_time != VitaTime::none) {
      f.tsi = Tsi::utc;
      f.integer_ts = static_cast<std::uint32_t>(static_cast<std::uint64_t>(start_s) + first / rate_int);
      const std::uint64_t within = first % rate_int;
      if (o.vita_time == VitaTime::count) {
        f.tsf = Tsf::sample_count;
        f.fractional_ts = within;
      } else {
        f.tsf = Tsf::real_time_ps;
        f.fractional_ts = static_cast<std::uint64_t>(
            std::llround(static_cast<double>(within) * kPsPerS / o.rate_hz));
      }
    }
    return encode_vita49(f, o.dtype, body, dst);
  };
  const auto send_copy = [&](const std::byte* bytes, std::size_t n) {
    std::memcpy(sender.slot(), bytes, n);
    sender.commit(n, report);
  };
  const auto send_malformed = [&](StreamState& st, const std::byte* good, std::size_t n) {
    std::byte* out = sender.slot();
    std::memcpy(out, good, n);
    std::size_t bytes = n;
    switch (rng() % kMalformedKinds) {
      case 0: bytes = std::min<std::size_t>(n, 3); break;  // too short for any header
      case 1: bytes = n - one; break;                       // a sample short of its size field
      default: out[0] = std::byte{0x7F}; out[3] = std::byte{0x7F}; break;  // bad magic / bad type
    }
    sender.commit(bytes, report);
    ++st.report.malformed;
  };

  std::uint64_t k = 0;  // next packet of every stream
  for (std::uint64_t tick = 0; k < packets; ++tick) {
    if (stop.load(std::memory_order_relaxed)) {  // a flag: nothing is ordered on it
      report.stopped = true;
      break;
    }
    if (!o.fast) {
      const std::int64_t deadline = start_ns + std::llround(static_cast<double>(tick) * tick_ns);
      if (core::sleep_until(deadline, &stop) == core::SleepStatus::stopped) {
        report.stopped = true;
        break;
      }
      report.max_lateness_ns = std::max(report.max_lateness_ns, core::monotonic_ns() - deadline);
    }
    const std::uint64_t until = std::min(packets, k + o.burst);
    for (; k < until; ++k) {
      for (StreamState& st : streams) {
        UdpGenStreamReport& r = st.report;
        ++r.packets;
        const bool edge = k == 0 || k + 1 == packets;
        const bool dropped = !edge && ((o.drop_every != 0 && (k + 1) % o.drop_every == 0) || chance(o.loss));
        if (dropped) {
          if (st.pulses) st.pulses->skip(o.packet_samples);  // later packets keep their samples
          ++r.packets_dropped;
          r.samples_dropped += o.packet_samples;
          if (st.holding) {  // held behind a packet that never went: it goes now, in order after all
            send_copy(st.held.data(), st.held_bytes);
            st.holding = false;
          }
          continue;
        }
        const std::size_t n = build(st, k, packet.data());
        ++r.packets_sent;
        r.samples_sent += o.packet_samples;
        const bool hold = chance(o.reorder) && k != 0 && k + 1 != packets && !st.holding;
        const bool dup = chance(o.duplicate) && !hold;  // a held packet is not also duplicated
        const bool bad = chance(o.malformed);
        if (hold) {  // it goes out after the stream's next packet
          std::memcpy(st.held.data(), packet.data(), n);
          st.held_bytes = n;
          st.holding = true;
        } else {
          send_copy(packet.data(), n);
          if (st.holding) {  // the held packet goes after this later one: reordered
            send_copy(st.held.data(), st.held_bytes);
            st.holding = false;
            ++r.reordered;
          }
        }
        if (dup) {
          ++r.duplicates;
          send_copy(packet.data(), n);
        }
        if (bad) send_malformed(st, packet.data(), n);
      }
    }
    sender.flush(report);
  }
  for (StreamState& st : streams)
    if (st.holding) send_copy(st.held.data(), st.held_bytes);
  sender.flush(report);

  report.elapsed_s = static_cast<double>(core::monotonic_ns() - start_ns) / kNsPerS;
  if (report.elapsed_s > 0) report.packets_per_s = static_cast<double>(report.datagrams) / report.elapsed_s;
  for (StreamState& st : streams) {
    const UdpGenStreamReport& r = st.report;
    report.packets_dropped += r.packets_dropped;
    report.samples_dropped += r.samples_dropped;
    report.samples_sent += r.samples_sent;
    report.duplicates += r.duplicates;
    report.reordered += r.reordered;
    report.malformed += r.malformed;
    report.streams.push_back(r);
  }
  return report;
}

}  // namespace weir::acq
