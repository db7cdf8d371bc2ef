// driver "udp" settings -> UdpOptions, through config::Fields so every error names the key.
#include "weir/udp/udp_config.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "weir/config/fields.hpp"
#include "weir/core/limits.hpp"

namespace weir::acq {

namespace {
constexpr std::array<const char*, 9> kKeys{"port", "format", "streams", "bind", "group",
                                           "rcvbuf", "batch", "reorder", "horizon"};
constexpr std::array<const char*, 2> kStreamKeys{"id", "channel"};
constexpr long long kMaxPort = 65535;
constexpr long long kMaxRcvbuf = 1LL << 31;
}  // namespace

core::Result<UdpOptions> udp_options(const config::DriverDecl& decl) {
  config::Fields f = config::driver_fields(decl);
  UdpOptions o;
  o.part = decl.name;
  auto port = f.integer("port", 0, kMaxPort);
  if (!port) return tl::make_unexpected(port.error());
  o.port = static_cast<std::uint16_t>(*port);
  auto format = f.text("format", std::string("vita49"));
  if (!format) return tl::make_unexpected(format.error());
  auto parsed = parse_packet_format(*format);
  if (!parsed) return tl::make_unexpected(f.error("format: " + parsed.error().what));
  o.format = *parsed;
  auto bind = f.text("bind", std::string());
  if (!bind) return tl::make_unexpected(bind.error());
  o.bind = *bind;
  auto group = f.text("group", std::string());
  if (!group) return tl::make_unexpected(group.error());
  o.group = *group;
  auto rcvbuf = f.integer("rcvbuf", 1, kMaxRcvbuf, kUdpDefaultRcvbufBytes);
  if (!rcvbuf) return tl::make_unexpected(rcvbuf.error());
  o.rcvbuf_bytes = *rcvbuf;
  auto batch = f.integer("batch", 1, kUdpMaxBatch, kUdpDefaultBatch);
  if (!batch) return tl::make_unexpected(batch.error());
  o.batch = static_cast<std::uint32_t>(*batch);
  o.cpu = decl.cpu;  // `cpu = N` is a part setting (config reads it): the receiving thread is pinned there too
  auto reorder = f.integer("reorder", 0, kUdpMaxReorderBlocks, kUdpDefaultReorderBlocks);
  if (!reorder) return tl::make_unexpected(reorder.error());
  o.reorder_blocks = static_cast<std::uint32_t>(*reorder);
  auto horizon = f.integer("horizon", 1, kUdpMaxHorizonBlocks, kUdpDefaultHorizonBlocks);
  if (!horizon) return tl::make_unexpected(horizon.error());
  o.horizon_blocks = static_cast<std::uint32_t>(*horizon);
  auto streams = f.items("streams", true);
  if (!streams) return tl::make_unexpected(streams.error());
  for (config::Fields& s : *streams) {
    auto id = s.integer("id", 0, UINT32_MAX);
    if (!id) return tl::make_unexpected(id.error());
    auto channel = s.text("channel");
    if (!channel) return tl::make_unexpected(channel.error());
    if (std::find(decl.channels.begin(), decl.channels.end(), *channel) == decl.channels.end())
      return tl::make_unexpected(s.error(fmt::format("channel '{}' is not one of this driver's channels ({})",
                                                     *channel, fmt::join(decl.channels, ", "))));
    if (auto ok = s.no_other_keys(kStreamKeys); !ok) return tl::make_unexpected(ok.error());
    o.streams.push_back(UdpStream{static_cast<std::uint32_t>(*id), *channel});
  }
  if (auto ok = f.no_other_keys(kKeys); !ok) return tl::make_unexpected(ok.error());
  if (auto ok = validate(o); !ok) return tl::make_unexpected(f.error(ok.error().what));
  return o;
}

core::Result<void> check_udp_driver(const config::Pipeline& /*pipeline*/, const config::DriverDecl& decl) {
  auto options = udp_options(decl);
  if (!options) return tl::make_unexpected(options.error());
  return {};
}

}  // namespace weir::acq
