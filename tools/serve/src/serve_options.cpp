// The checks `weir serve` makes before it opens anything: where it listens and who may ask.
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
  if (!(o.frames_per_s > 0 && o.frames_per_s <= 1000))
    return core::fail(core::Errc::invalid_argument,
                      fmt::format("serve: frames per second {} is outside (0, 1000]", o.frames_per_s));
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
