#pragma once
// What the receiver and the generator share about sockets: numeric addresses of either family and
// an owning file descriptor.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <utility>

#include "weir/core/error.hpp"
#include "weir/core/unique_fd.hpp"

namespace weir::acq {

/// A closed-on-destruction file descriptor.
using Fd = core::UniqueFd;

/// A numeric IPv4 or IPv6 address with a port.
struct SockAddr {
  sockaddr_storage storage{};
  socklen_t length = 0;
  [[nodiscard]] int family() const noexcept { return storage.ss_family; }
  [[nodiscard]] const sockaddr* get() const noexcept { return reinterpret_cast<const sockaddr*>(&storage); }
  [[nodiscard]] bool multicast() const noexcept;
};

/// Parses "192.0.2.1", "::1" or "[::1]" (no host names: nothing is looked up) with `port`.
/// Fails saying what `what` (e.g. "bind address") was. Thread: any.
[[nodiscard]] core::Result<SockAddr> parse_address(const std::string& text, std::uint16_t port, const std::string& what);
/// The wildcard address of a family.
[[nodiscard]] SockAddr any_address(int family, std::uint16_t port) noexcept;
/// "192.0.2.1:5000", "[::1]:5000".
[[nodiscard]] std::string describe(const SockAddr& address);
/// errno as text: "Address already in use".
[[nodiscard]] std::string errno_text(int error);

}  // namespace weir::acq
