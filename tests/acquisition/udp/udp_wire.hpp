#pragma once
// What a digitizer puts on the wire, written here from the format descriptions alone (VITA 49 words
// big-endian, the raw header little-endian; acquisition/udp/README.md), independently of weir's own
// encoders and generator, so the tests catch a receiver that agrees with weir's sender but not with
// the formats. Also: a loopback sender (sendmmsg) and the receiving socket's queue and drop counter
// as the kernel shows them in /proc/net/udp.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace weir::test::wire {

/// The value a sender puts at sample `index` of stream `stream`: distinct for 65,536 samples in a row.
inline std::int16_t sample_value(std::uint32_t stream, std::uint64_t index) {
  return static_cast<std::int16_t>(static_cast<std::uint16_t>(index * 7U + stream * 4099U + 11U));
}

inline void put_be32(std::vector<std::byte>& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<std::byte>((v >> shift) & 0xFFU));
}
inline void put_le(std::vector<std::byte>& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xFFU));
}

/// One VITA 49 signal-data packet as a digitizer sends it.
struct VitaPacket {
  std::uint32_t stream_id = 1;
  bool with_stream_id = true;   // packet type 1 (0: no stream id word)
  bool with_class_id = false;
  bool with_trailer = false;
  unsigned tsi = 0;             // 0 none, 1 utc, 2 gps, 3 other
  unsigned tsf = 0;             // 0 none, 1 sample count, 2 picoseconds, 3 free running
  std::uint32_t integer_ts = 0;
  std::uint64_t fractional_ts = 0;
  std::uint32_t count = 0;      // only the low 4 bits go out
  unsigned type = 0;            // 0: 1 when with_stream_id, else 0; anything else is sent as given
  std::vector<std::int32_t> samples;
  unsigned sample_bytes = 2;    // 2: i16 samples; 4: i32 (a width the channel does not have)
  int size_error = 0;           // added to the size field: a header that lies about its length
};

/// The datagram: big-endian words; the payload padded to whole words with zero samples never happens
/// here (callers send whole words), the size field counts every word.
inline std::vector<std::byte> encode(const VitaPacket& p) {
  std::vector<std::byte> payload;
  for (std::int32_t s : p.samples) {
    const auto u = static_cast<std::uint32_t>(s);
    for (int shift = 8 * static_cast<int>(p.sample_bytes) - 8; shift >= 0; shift -= 8)
      payload.push_back(static_cast<std::byte>((u >> shift) & 0xFFU));
  }
  REQUIRE(payload.size() % 4 == 0);
  const std::uint32_t words = 1 + (p.with_stream_id ? 1 : 0) + (p.with_class_id ? 2 : 0) + (p.tsi != 0 ? 1 : 0) +
                              (p.tsf != 0 ? 2 : 0) + static_cast<std::uint32_t>(payload.size() / 4) +
                              (p.with_trailer ? 1 : 0);
  const unsigned type = p.type != 0 ? p.type : (p.with_stream_id ? 1U : 0U);
  const std::uint32_t header = type << 28 | (p.with_class_id ? 1U << 27 : 0U) | (p.with_trailer ? 1U << 26 : 0U) |
                               (p.tsi & 3U) << 22 | (p.tsf & 3U) << 20 | (p.count & 0xFU) << 16 |
                               ((words + static_cast<std::uint32_t>(p.size_error)) & 0xFFFFU);
  std::vector<std::byte> out;
  put_be32(out, header);
  if (p.with_stream_id) put_be32(out, p.stream_id);
  if (p.with_class_id) {
    put_be32(out, 0x00123456U);  // OUI
    put_be32(out, 0x00010002U);  // information class, packet class
  }
  if (p.tsi != 0) put_be32(out, p.integer_ts);
  if (p.tsf != 0) {
    put_be32(out, static_cast<std::uint32_t>(p.fractional_ts >> 32));
    put_be32(out, static_cast<std::uint32_t>(p.fractional_ts));
  }
  out.insert(out.end(), payload.begin(), payload.end());
  if (p.with_trailer) put_be32(out, 0x40000000U);
  return out;
}

/// One raw packet (40-byte little-endian header, then little-endian samples).
struct RawPacket {
  std::uint32_t stream_id = 1;
  std::uint64_t sequence = 0;
  std::uint64_t first_sample = 0;
  std::uint64_t timestamp_ns = 0;
  std::vector<std::int32_t> samples;
  std::uint8_t dtype = 3;       // 3: i16; 5: i32 (a width the channel does not have)
  std::uint32_t magic = 0x57415257U;
  std::uint8_t version = 1;
  int count_error = 0;          // added to the sample count: a header that lies about its length
};

inline std::vector<std::byte> encode(const RawPacket& p) {
  std::vector<std::byte> out;
  put_le(out, p.magic, 4);
  put_le(out, p.version, 1);
  put_le(out, p.dtype, 1);
  put_le(out, 0, 2);
  put_le(out, p.stream_id, 4);
  put_le(out, static_cast<std::uint32_t>(static_cast<std::int64_t>(p.samples.size()) + p.count_error), 4);
  put_le(out, p.sequence, 8);
  put_le(out, p.first_sample, 8);
  put_le(out, p.timestamp_ns, 8);
  const int width = p.dtype == 5 ? 4 : 2;
  for (std::int32_t s : p.samples) put_le(out, static_cast<std::uint32_t>(s), width);
  return out;
}

/// A UDP socket connected to 127.0.0.1:port that sends datagrams in sendmmsg batches.
class Sender {
 public:
  explicit Sender(std::uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd_ >= 0);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(port);
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd_, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0);
  }
  ~Sender() { ::close(fd_); }
  Sender(const Sender&) = delete;
  Sender& operator=(const Sender&) = delete;

  /// Sends every datagram, in order, as fast as sendmmsg goes. Fails the test on a send error.
  void send(const std::vector<const std::vector<std::byte>*>& datagrams) {
    constexpr std::size_t kBatch = 256;
    std::vector<iovec> iov(kBatch);
    std::vector<mmsghdr> msgs(kBatch);
    for (std::size_t at = 0; at < datagrams.size();) {
      const std::size_t n = std::min(kBatch, datagrams.size() - at);
      for (std::size_t i = 0; i < n; ++i) {
        iov[i].iov_base = const_cast<std::byte*>(datagrams[at + i]->data());
        iov[i].iov_len = datagrams[at + i]->size();
        msgs[i] = mmsghdr{};
        msgs[i].msg_hdr.msg_iov = &iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
      }
      const int sent = ::sendmmsg(fd_, msgs.data(), static_cast<unsigned>(n), 0);
      REQUIRE_MESSAGE(sent > 0, "sendmmsg to the receiver failed: errno ", errno);
      at += static_cast<std::size_t>(sent);
    }
  }
  void send_one(const std::vector<std::byte>& datagram) { send({&datagram}); }

 private:
  int fd_ = -1;
};

/// The receiving socket as the kernel shows it: bytes queued, datagrams dropped (sk_drops).
struct SocketQueue {
  bool found = false;
  std::uint64_t queued_bytes = 0;
  std::uint64_t drops = 0;
};

inline SocketQueue socket_queue(std::uint16_t port) {
  SocketQueue q;
  for (const char* table : {"/proc/net/udp", "/proc/net/udp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // the column names
    while (std::getline(in, line)) {
      std::istringstream words(line);
      std::vector<std::string> w;
      for (std::string word; words >> word;) w.push_back(word);
      if (w.size() < 13) continue;
      const auto colon = w[1].rfind(':');
      const auto queues = w[4].find(':');
      if (colon == std::string::npos || queues == std::string::npos) continue;
      if (std::stoul(w[1].substr(colon + 1), nullptr, 16) != port) continue;
      q.found = true;
      q.queued_bytes += std::stoull(w[4].substr(queues + 1), nullptr, 16);
      q.drops += std::stoull(w.back());
    }
  }
  return q;
}

/// Waits until the receiver has taken every queued datagram off its socket (at most `timeout`).
inline bool drained(std::uint16_t port, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const SocketQueue q = socket_queue(port);
    if (q.found && q.queued_bytes == 0) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

}  // namespace weir::test::wire
