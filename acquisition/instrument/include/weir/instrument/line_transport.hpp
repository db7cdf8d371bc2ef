#pragma once
// Line-based I/O with an instrument: a TCP connection or a serial line carrying commands and
// replies that end in a terminator ("\n", "\r\n", ...). Every wait has a timeout (poll()), and a
// reply that never ends is an error once it passes max_reply_bytes: the buffer never grows.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "weir/core/error.hpp"

namespace weir::acq {

inline constexpr std::uint32_t kDefaultMaxReplyBytes = 1024;  // a reply longer than this is an error
inline constexpr std::uint32_t kMaxMaxReplyBytes = 1U << 20;  // refuse a larger reply limit
inline constexpr std::uint32_t kMaxTerminatorBytes = 8;       // refuse longer terminators

/// How commands and replies are framed on the line.
struct LineFraming {
  std::string out_terminator = "\n";  // appended to every command
  std::string in_terminator = "\n";   // ends every reply; not part of the reply
  std::uint32_t max_reply_bytes = kDefaultMaxReplyBytes;
};

/// Checks the terminators (1 to kMaxTerminatorBytes bytes) and the reply limit. Thread: any.
[[nodiscard]] core::Result<void> validate(const LineFraming& framing);

/// "\r\n" for people: control characters escaped, for messages that name a terminator or a reply.
[[nodiscard]] std::string escape_text(std::string_view text, std::size_t max_bytes = 64);

enum class [[nodiscard]] LineStatus : std::uint8_t {
  line = 0,      // a whole line is ready (terminator removed)
  partial = 1,   // bytes without a terminator yet; wait for more
  empty = 2,     // nothing buffered
  too_long = 3,  // max_reply_bytes passed without a terminator: the reply never ended
};

/// Splits a byte stream into lines. Its buffer is allocated once, at construction, and never grows.
/// Thread: one at a time.
class LineBuffer {
 public:
  explicit LineBuffer(const LineFraming& framing);

  /// Where the next bytes go: the free room at the end of the buffer (may be empty when full).
  [[nodiscard]] char* room() noexcept { return buf_.data() + end_; }
  [[nodiscard]] std::size_t room_bytes() const noexcept { return buf_.size() - end_; }
  /// Counts n bytes written into room(). Requires: n <= room_bytes().
  void commit(std::size_t n) noexcept;
  /// Copies bytes in (as much as fits) and returns how many; for tests and the fuzz target.
  std::size_t append(std::string_view bytes) noexcept;

  /// The next complete line, valid until the next call on this buffer. too_long when the bytes
  /// buffered hold no terminator within max_reply_bytes.
  LineStatus next(std::string_view& line) noexcept;
  /// Forgets every buffered byte.
  void clear() noexcept { begin_ = end_ = 0; }
  [[nodiscard]] std::size_t buffered() const noexcept { return end_ - begin_; }

 private:
  void compact() noexcept;
  std::vector<char> buf_;
  std::string terminator_;
  std::size_t max_line_ = 0;
  std::size_t begin_ = 0, end_ = 0;  // unread bytes are [begin_, end_)
};

enum class [[nodiscard]] IoStatus : std::uint8_t {
  ok = 0,
  timeout = 1,   // nothing (or not all of it) came or went within the timeout
  closed = 2,    // the peer closed, reset, or the device vanished: reconnect
  too_long = 3,  // a reply ran past max_reply_bytes without its terminator
  failed = 4,    // another system error (errno in last_errno())
};

/// "ok", "timeout", ... for messages.
[[nodiscard]] const char* io_status_name(IoStatus status) noexcept;

/// A line transport over one file descriptor; TcpTransport and SerialTransport open it.
/// Thread: one at a time.
class LineTransport {
 public:
  explicit LineTransport(const LineFraming& framing);
  virtual ~LineTransport();
  LineTransport(const LineTransport&) = delete;
  LineTransport& operator=(const LineTransport&) = delete;

  /// Connects or opens the device, closing what was open first. Fails naming the input and why.
  [[nodiscard]] virtual core::Result<void> open(std::int64_t timeout_ns) = 0;
  /// "tcp host:port" or "serial /dev/ttyUSB0", for messages.
  [[nodiscard]] virtual std::string describe() const = 0;

  void close() noexcept;
  [[nodiscard]] bool is_open() const noexcept { return fd_ >= 0; }

  /// Sends text and the out terminator, waiting at most timeout_ns for the line to take it all.
  IoStatus write_line(std::string_view text, std::int64_t timeout_ns) noexcept;
  /// Waits up to reply_timeout_ns for a reply to begin, then up to read_timeout_ns between bytes
  /// until its terminator. `line` stays valid until the next call. On too_long the buffered bytes
  /// are dropped.
  IoStatus read_line(std::string_view& line, std::int64_t reply_timeout_ns, std::int64_t read_timeout_ns) noexcept;
  /// Drops whatever arrived unasked (a late reply to an earlier query), without waiting. Returns
  /// closed when the peer has gone meanwhile.
  IoStatus discard_input() noexcept;
  /// errno of the last failed or closed call.
  [[nodiscard]] int last_errno() const noexcept { return errno_; }
  [[nodiscard]] const LineFraming& framing() const noexcept { return framing_; }

 protected:
  /// Takes over an opened descriptor (non-blocking). `socket`: use send() with MSG_NOSIGNAL.
  void adopt(int fd, bool socket) noexcept;

 private:
  IoStatus fill(std::int64_t timeout_ns) noexcept;  // one poll() and read()
  LineFraming framing_;
  LineBuffer input_;
  std::string output_;  // command + terminator; grows to the longest command once
  int fd_ = -1;
  bool socket_ = false;
  int errno_ = 0;
};

/// A TCP client: host name or address (IPv4 or IPv6), port; connect() is non-blocking with a
/// timeout, trying each address the name resolves to.
class TcpTransport final : public LineTransport {
 public:
  TcpTransport(std::string host, std::uint16_t port, const LineFraming& framing);
  [[nodiscard]] core::Result<void> open(std::int64_t timeout_ns) override;
  [[nodiscard]] std::string describe() const override;

 private:
  std::string host_;
  std::uint16_t port_ = 0;
};

enum class Parity : std::uint8_t { none, even, odd };
enum class FlowControl : std::uint8_t { none, rtscts, xonxoff };

/// termios settings of a serial line; always raw mode (no echo, no line editing, no translation).
struct SerialSettings {
  std::uint32_t baud = 9600;
  std::uint32_t data_bits = 8;  // 5 to 8
  Parity parity = Parity::none;
  std::uint32_t stop_bits = 1;  // 1 or 2
  FlowControl flow = FlowControl::none;
};

/// Checks baud (a rate termios knows), data bits and stop bits. Thread: any.
[[nodiscard]] core::Result<void> validate(const SerialSettings& settings);
/// "none" | "even" | "odd". Thread: any.
[[nodiscard]] core::Result<Parity> parse_parity(std::string_view text);
/// "none" | "rtscts" | "xonxoff". Thread: any.
[[nodiscard]] core::Result<FlowControl> parse_flow_control(std::string_view text);
[[nodiscard]] const char* parity_name(Parity parity) noexcept;
[[nodiscard]] const char* flow_control_name(FlowControl flow) noexcept;

/// A serial device (a tty path: /dev/ttyUSB0, a pty), opened non-blocking in raw mode.
class SerialTransport final : public LineTransport {
 public:
  SerialTransport(std::string device, const SerialSettings& settings, const LineFraming& framing);
  [[nodiscard]] core::Result<void> open(std::int64_t timeout_ns) override;
  [[nodiscard]] std::string describe() const override;

 private:
  std::string device_;
  SerialSettings settings_;
};

}  // namespace weir::acq
