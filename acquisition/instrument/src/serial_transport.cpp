// SerialTransport: open a tty non-blocking, put it in raw mode with the asked termios settings.
#include <fcntl.h>
#include <termios.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "weir/instrument/line_transport.hpp"

namespace weir::acq {

namespace {

struct BaudRate {
  std::uint32_t baud;
  speed_t code;
};

constexpr std::array kBaudRates{
    BaudRate{50, B50},         BaudRate{75, B75},         BaudRate{110, B110},       BaudRate{134, B134},
    BaudRate{150, B150},       BaudRate{200, B200},       BaudRate{300, B300},       BaudRate{600, B600},
    BaudRate{1200, B1200},     BaudRate{1800, B1800},     BaudRate{2400, B2400},     BaudRate{4800, B4800},
    BaudRate{9600, B9600},     BaudRate{19200, B19200},   BaudRate{38400, B38400},   BaudRate{57600, B57600},
    BaudRate{115200, B115200}, BaudRate{230400, B230400}, BaudRate{460800, B460800}, BaudRate{500000, B500000},
    BaudRate{576000, B576000}, BaudRate{921600, B921600}, BaudRate{1000000, B1000000}, BaudRate{1152000, B1152000},
    BaudRate{1500000, B1500000}, BaudRate{2000000, B2000000}, BaudRate{2500000, B2500000},
    BaudRate{3000000, B3000000}, BaudRate{3500000, B3500000}, BaudRate{4000000, B4000000},
};

bool baud_code(std::uint32_t baud, speed_t& code) noexcept {
  for (const BaudRate& b : kBaudRates) {
    if (b.baud == baud) {
      code = b.code;
      return true;
    }
  }
  return false;
}

tcflag_t data_bits_flag(std::uint32_t bits) noexcept {
  switch (bits) {
    case 5: return CS5;
    case 6: return CS6;
    case 7: return CS7;
    default: return CS8;
  }
}

}  // namespace

const char* parity_name(Parity parity) noexcept {
  switch (parity) {
    case Parity::none: return "none";
    case Parity::even: return "even";
    case Parity::odd: return "odd";
  }
  return "?";
}

const char* flow_control_name(FlowControl flow) noexcept {
  switch (flow) {
    case FlowControl::none: return "none";
    case FlowControl::rtscts: return "rtscts";
    case FlowControl::xonxoff: return "xonxoff";
  }
  return "?";
}

core::Result<Parity> parse_parity(std::string_view text) {
  for (const Parity p : {Parity::none, Parity::even, Parity::odd})
    if (text == parity_name(p)) return p;
  return core::fail(core::Errc::invalid_argument, "parity must be none, even or odd, not '" + std::string(text) + "'");
}

core::Result<FlowControl> parse_flow_control(std::string_view text) {
  for (const FlowControl f : {FlowControl::none, FlowControl::rtscts, FlowControl::xonxoff})
    if (text == flow_control_name(f)) return f;
  return core::fail(core::Errc::invalid_argument,
                    "flow control must be none, rtscts or xonxoff, not '" + std::string(text) + "'");
}

core::Result<void> validate(const SerialSettings& settings) {
  speed_t code = 0;
  if (!baud_code(settings.baud, code)) {
    std::string known;
    for (const BaudRate& b : kBaudRates) known += (known.empty() ? "" : " ") + std::to_string(b.baud);
    return core::fail(core::Errc::invalid_argument,
                      "baud " + std::to_string(settings.baud) + " is not a rate the line knows (" + known + ")");
  }
  if (settings.data_bits < 5 || settings.data_bits > 8)
    return core::fail(core::Errc::invalid_argument,
                      "data bits must be 5 to 8, not " + std::to_string(settings.data_bits));
  if (settings.stop_bits != 1 && settings.stop_bits != 2)
    return core::fail(core::Errc::invalid_argument,
                      "stop bits must be 1 or 2, not " + std::to_string(settings.stop_bits));
  return {};
}

SerialTransport::SerialTransport(std::string device, const SerialSettings& settings, const LineFraming& framing)
    : LineTransport(framing), device_(std::move(device)), settings_(settings) {}

std::string SerialTransport::describe() const { return "serial " + device_; }

core::Result<void> SerialTransport::open(std::int64_t /*timeout_ns: open() of a tty does not wait with O_NONBLOCK*/) {
  close();
  if (auto ok = validate(settings_); !ok) return core::fail(ok.error().code, describe() + ": " + ok.error().what);
  const int fd = ::open(device_.c_str(), O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    return core::fail(err == ENOENT ? core::Errc::not_found
                      : err == EACCES ? core::Errc::permission_denied
                                      : core::Errc::io_error,
                      describe() + ": open: " + std::strerror(err));
  }
  const auto refuse = [&](const char* call) {
    const int err = errno;
    ::close(fd);
    return core::fail(core::Errc::io_error, describe() + ": " + call + ": " + std::strerror(err) +
                                                (err == ENOTTY ? " (not a serial device)" : ""));
  };
  termios t{};
  if (::tcgetattr(fd, &t) != 0) return refuse("tcgetattr");
  ::cfmakeraw(&t);
  speed_t code = B9600;
  (void)baud_code(settings_.baud, code);
  if (::cfsetispeed(&t, code) != 0 || ::cfsetospeed(&t, code) != 0) return refuse("cfsetspeed");
  t.c_cflag &= ~static_cast<tcflag_t>(CSIZE | PARENB | PARODD | CSTOPB | CRTSCTS);
  t.c_cflag |= data_bits_flag(settings_.data_bits) | CLOCAL | CREAD;
  if (settings_.parity != Parity::none) t.c_cflag |= PARENB;
  if (settings_.parity == Parity::odd) t.c_cflag |= PARODD;
  if (settings_.stop_bits == 2) t.c_cflag |= CSTOPB;
  t.c_iflag &= ~static_cast<tcflag_t>(IXON | IXOFF | IXANY);
  if (settings_.flow == FlowControl::rtscts) t.c_cflag |= CRTSCTS;
  if (settings_.flow == FlowControl::xonxoff) t.c_iflag |= IXON | IXOFF;
  t.c_cc[VMIN] = 0;  // non-blocking reads; poll() does the waiting
  t.c_cc[VTIME] = 0;
  if (::tcsetattr(fd, TCSANOW, &t) != 0) return refuse("tcsetattr");
  (void)::tcflush(fd, TCIOFLUSH);  // nothing from before we opened it
  adopt(fd, false);
  return {};
}

}  // namespace weir::acq
