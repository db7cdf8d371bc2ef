// Numeric socket addresses of either family.
#include "udp_socket.hpp"

#include <arpa/inet.h>

#include <array>
#include <cstring>

namespace weir::acq {

bool SockAddr::multicast() const noexcept {
  if (family() == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&storage);
    return IN_MULTICAST(ntohl(a->sin_addr.s_addr));
  }
  if (family() == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&storage);
    return IN6_IS_ADDR_MULTICAST(&a->sin6_addr);
  }
  return false;
}

core::Result<SockAddr> parse_address(const std::string& text, std::uint16_t port, const std::string& what) {
  std::string host = text;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  SockAddr out;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&out.storage);
  if (inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    out.length = sizeof(sockaddr_in);
    return out;
  }
  out = SockAddr{};
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&out.storage);
  if (inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    out.length = sizeof(sockaddr_in6);
    return out;
  }
  return core::fail(core::Errc::invalid_argument,
                    what + " '" + text + "' is not a numeric IPv4 or IPv6 address");
}

SockAddr any_address(int family, std::uint16_t port) noexcept {
  SockAddr out;
  if (family == AF_INET6) {
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&out.storage);
    v6->sin6_family = AF_INET6;
    v6->sin6_addr = in6addr_any;
    v6->sin6_port = htons(port);
    out.length = sizeof(sockaddr_in6);
  } else {
    auto* v4 = reinterpret_cast<sockaddr_in*>(&out.storage);
    v4->sin_family = AF_INET;
    v4->sin_addr.s_addr = htonl(INADDR_ANY);
    v4->sin_port = htons(port);
    out.length = sizeof(sockaddr_in);
  }
  return out;
}

std::string describe(const SockAddr& address) {
  std::array<char, INET6_ADDRSTRLEN> text{};
  if (address.family() == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&address.storage);
    inet_ntop(AF_INET6, &v6->sin6_addr, text.data(), text.size());
    return "[" + std::string(text.data()) + "]:" + std::to_string(ntohs(v6->sin6_port));
  }
  const auto* v4 = reinterpret_cast<const sockaddr_in*>(&address.storage);
  inet_ntop(AF_INET, &v4->sin_addr, text.data(), text.size());
  return std::string(text.data()) + ":" + std::to_string(ntohs(v4->sin_port));
}

std::string errno_text(int error) {
  std::array<char, 128> text{};
  return strerror_r(error, text.data(), text.size());  // GNU strerror_r returns the text
}

}  // namespace weir::acq
