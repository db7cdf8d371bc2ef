// The transports over real descriptors: a loopback TCP listener of the test's own, and a socat
// pty pair for the serial line.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>

#include "scratch_dir.hpp"
#include "socat_pair.hpp"
#include "weir/instrument/line_transport.hpp"

using weir::acq::IoStatus;
using weir::acq::LineFraming;

namespace {

constexpr std::int64_t kSecond = 1'000'000'000;
constexpr std::int64_t kShort = 50'000'000;  // a wait that is meant to time out

// A listening socket on a free loopback port (IPv4 or IPv6), closed at the end.
struct Listener {
  explicit Listener(int family = AF_INET) {
    fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd >= 0);
    if (family == AF_INET) {
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
      socklen_t len = sizeof a;
      ok = ok && ::listen(fd, 4) == 0 && ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0;
      port = ntohs(a.sin_port);
    } else {
      sockaddr_in6 a{};
      a.sin6_family = AF_INET6;
      a.sin6_addr = in6addr_loopback;
      ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
      socklen_t len = sizeof a;
      ok = ok && ::listen(fd, 4) == 0 && ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0;
      port = ntohs(a.sin6_port);
    }
  }
  ~Listener() {
    if (fd >= 0) ::close(fd);
  }
  int accept() const { return ::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC); }
  int fd = -1;
  bool ok = false;
  std::uint16_t port = 0;
};

std::string read_some(int fd) {
  char buf[256];
  const ssize_t n = ::read(fd, buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

void send_all(int fd, const std::string& text) { REQUIRE(::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size())); }

}  // namespace

TEST_SUITE("acquisition.instrument.transport") {

TEST_CASE("tcp: a command goes out with its terminator and a reply comes back without it") {
  Listener server;
  REQUIRE(server.ok);
  LineFraming f;
  f.out_terminator = "\r\n";
  f.max_reply_bytes = 64;
  weir::acq::TcpTransport t("127.0.0.1", server.port, f);
  REQUIRE(t.open(kSecond));
  CHECK(t.describe() == "tcp 127.0.0.1:" + std::to_string(server.port));
  const int peer = server.accept();
  REQUIRE(peer >= 0);
  CHECK(t.write_line("MEAS:VOLT?", kSecond) == IoStatus::ok);
  CHECK(read_some(peer) == "MEAS:VOLT?\r\n");
  std::string_view line;
  send_all(peer, "1.5\n");
  REQUIRE(t.read_line(line, kSecond, kSecond) == IoStatus::ok);
  CHECK(line == "1.5");

  SUBCASE("no reply is a timeout") { CHECK(t.read_line(line, kShort, kShort) == IoStatus::timeout); }
  SUBCASE("a reply that stops half way is a timeout") {
    send_all(peer, "1.2");
    CHECK(t.read_line(line, kSecond, kShort) == IoStatus::timeout);
  }
  SUBCASE("a reply that never ends is too_long, not a growing buffer") {
    send_all(peer, std::string(200, 'x'));
    CHECK(t.read_line(line, kSecond, kSecond) == IoStatus::too_long);
  }
  SUBCASE("a stale reply is discarded before the next query") {
    send_all(peer, "old\n");
    usleep(20'000);
    CHECK(t.discard_input() == IoStatus::ok);
    CHECK(t.read_line(line, kShort, kShort) == IoStatus::timeout);
  }
  SUBCASE("the peer closing is closed, on read and then on write") {
    ::close(peer);
    CHECK(t.read_line(line, kSecond, kSecond) == IoStatus::closed);
    t.close();
    CHECK(t.write_line("X", kSecond) == IoStatus::closed);
  }
  ::close(peer);
}

TEST_CASE("tcp: host names and IPv6 loopback connect") {
  Listener v6(AF_INET6);
  if (!v6.ok) {
    MESSAGE("skipped: no IPv6 loopback here");
    return;
  }
  weir::acq::TcpTransport by_address("::1", v6.port, LineFraming{});
  REQUIRE(by_address.open(kSecond));
  CHECK(by_address.describe() == "tcp [::1]:" + std::to_string(v6.port));
  Listener v4;
  REQUIRE(v4.ok);
  weir::acq::TcpTransport by_name("localhost", v4.port, LineFraming{});
  auto named = by_name.open(kSecond);
  CHECK_MESSAGE(named, (named ? "" : named.error().what));
}

TEST_CASE("tcp: a refused connection and an unknown host are errors naming the input") {
  std::uint16_t closed_port = 0;
  {
    Listener gone;
    REQUIRE(gone.ok);
    closed_port = gone.port;
  }
  weir::acq::TcpTransport refused("127.0.0.1", closed_port, LineFraming{});
  auto r = refused.open(kSecond);
  REQUIRE_FALSE(r);
  CHECK(r.error().what == "tcp 127.0.0.1:" + std::to_string(closed_port) + ": connect: Connection refused");
  weir::acq::TcpTransport unknown("no-such-host.invalid", 5025, LineFraming{});
  auto u = unknown.open(kSecond);
  REQUIRE_FALSE(u);
  CHECK(weir::test::contains(u.error().what, "cannot resolve 'no-such-host.invalid'"));
}

TEST_CASE("serial: a pty pair carries lines both ways, and an unplugged device is closed") {
  weir::test::ScratchDir dir("serial");
  weir::test::SocatPair pair(dir);
  if (!pair.available()) {
    MESSAGE("SKIPPED: " << pair.why());
    return;
  }
  weir::acq::SerialSettings s;
  s.baud = 115200;
  s.parity = weir::acq::Parity::even;
  s.stop_bits = 2;
  s.data_bits = 7;
  s.flow = weir::acq::FlowControl::xonxoff;
  LineFraming f;
  f.in_terminator = "\r\n";
  weir::acq::SerialTransport t(pair.a(), s, f);
  auto opened = t.open(kSecond);
  REQUIRE_MESSAGE(opened, (opened ? "" : opened.error().what));
  const int other = ::open(pair.b().c_str(), O_RDWR | O_NOCTTY | O_CLOEXEC);
  REQUIRE(other >= 0);
  CHECK(t.write_line("*IDN?", kSecond) == IoStatus::ok);
  CHECK(read_some(other) == "*IDN?\n");
  send_all(other, "WEIR,FAKE\r\n");
  std::string_view line;
  REQUIRE(t.read_line(line, kSecond, kSecond) == IoStatus::ok);
  CHECK(line == "WEIR,FAKE");
  ::close(other);
  pair.unplug();
  IoStatus after = t.read_line(line, kSecond, kSecond);
  CHECK(after == IoStatus::closed);
}

TEST_CASE("serial: a missing device, a file that is no tty and bad settings are refused by name") {
  weir::acq::SerialTransport missing("/dev/weir-no-such-tty", weir::acq::SerialSettings{}, LineFraming{});
  auto m = missing.open(kSecond);
  REQUIRE_FALSE(m);
  CHECK(m.error().what == "serial /dev/weir-no-such-tty: open: No such file or directory");
  weir::acq::SerialTransport not_tty("/dev/null", weir::acq::SerialSettings{}, LineFraming{});
  auto n = not_tty.open(kSecond);
  REQUIRE_FALSE(n);
  CHECK(weir::test::contains(n.error().what, "not a serial device"));
  weir::acq::SerialSettings s;
  s.baud = 12345;
  auto b = weir::acq::validate(s);
  REQUIRE_FALSE(b);
  CHECK(weir::test::contains(b.error().what, "baud 12345"));
  s.baud = 9600;
  s.stop_bits = 3;
  CHECK_FALSE(weir::acq::validate(s));
  CHECK_FALSE(weir::acq::parse_parity("mark"));
  CHECK(*weir::acq::parse_flow_control("rtscts") == weir::acq::FlowControl::rtscts);
}

}  // TEST_SUITE
