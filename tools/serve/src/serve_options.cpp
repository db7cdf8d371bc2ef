// The checks `weir serve` makes before it opens anything: where it listens and who may ask.
#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include <boost/asio/ip/address.hpp>
#include <fmt/format.h>

#include "weir/serve/serve.hpp"

namespace weir::serve {

bool is_loopback(std::string_view address) {
  boost::system::error_code ec;
  const auto parsed = boost::asio::ip::make_address(std::string(address), ec);
  return !ec && parsed.is_loopback();
}

namespace {

// The host of a Host header, without its port: "[::1]:8080" -> "::1", "lab:80" -> "lab".
std::string_view host_name(std::string_view host) {
  if (!host.empty() && host.front() == '[') {
    const auto close = host.find(']');
    return close == std::string_view::npos ? std::string_view() : host.substr(1, close - 1);
  }
  const auto colon = host.find(':');
  return colon == std::string_view::npos ? host : host.substr(0, colon);
}

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

bool host_allowed(std::string_view host, const ServeOptions& o) {
  if (host.empty()) return true;
  const std::string_view name = host_name(host);
  if (name.empty()) return false;
  if (same_name(name, "localhost")) return true;
  for (const std::string& allowed : o.allow_hosts)
    if (same_name(name, allowed)) return true;
  boost::system::error_code ec;
  const auto address = boost::asio::ip::make_address(std::string(name), ec);
  if (ec) return false;  // a name nobody allowed: what a rebound DNS entry sends
  const auto bound = boost::asio::ip::make_address(o.bind, ec);
  if (ec) return false;
  if (bound.is_unspecified() || address == bound) return true;
  return bound.is_loopback() && address.is_loopback();
}

core::Result<void> check_options(const ServeOptions& o) {
  boost::system::error_code ec;
  (void)boost::asio::ip::make_address(o.bind, ec);
  if (ec)
    return core::fail(core::Errc::invalid_argument,
                      fmt::format("serve: --bind '{}' is not an IPv4 or IPv6 address", o.bind));
  if (!is_loopback(o.bind) && o.token.empty())
    return core::fail(core::Errc::invalid_argument,
                      fmt::format("serve: refusing to listen on {} without a token: anyone who reaches it could read "
                                  "the arena; give --token T or --token-file F (or bind 127.0.0.1)",
                                  o.bind));
  if (o.allow_control && o.token.empty())
    return core::fail(core::Errc::invalid_argument,
                      "serve: refusing --allow-control without a token: anyone who reaches the server could start "
                      "and stop runs; give --token T or --token-file F with it");
  if (!(o.frames_per_s > 0 && o.frames_per_s <= 1000))
    return core::fail(core::Errc::invalid_argument,
                      fmt::format("serve: frames per second {} is outside (0, 1000]", o.frames_per_s));
  if (!(o.stale_after_s >= 0))
    return core::fail(core::Errc::invalid_argument,
                      fmt::format("serve: --stale-after {} is not a number of seconds >= 0", o.stale_after_s));
  return {};
}

core::Result<std::string> read_token_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return core::fail(core::Errc::io_error, fmt::format("serve: cannot read the token file '{}'", path));
  std::string line;
  std::getline(in, line);
  const auto first = line.find_first_not_of(" \t\r\n");
  const auto last = line.find_last_not_of(" \t\r\n");
  if (first == std::string::npos)
    return core::fail(core::Errc::invalid_argument, fmt::format("serve: the token file '{}' holds no token", path));
  return line.substr(first, last - first + 1);
}

}  // namespace weir::serve
