// `bridge "send"` and `driver "bridge"` settings -> SenderOptions and ReceiverOptions, through
// config::Fields so every error names the declaration and the key.
#include "weir/bridge/pipeline_settings.hpp"

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "weir/bridge/curve_keys.hpp"
#include "weir/config/fields.hpp"

namespace weir::bridge {

namespace {

constexpr std::array<const char*, 9> kSendKeys{"to", "bind", "key", "server_key", "plain", "lossless", "wait_ms", "hwm",
                                               "newest"};
constexpr std::array<const char*, 7> kRecvKeys{"bind", "from", "key", "allow", "plain", "prefix", "hwm"};
constexpr long long kMaxHwm = 1'000'000;
constexpr double kMaxWaitMs = 3.6e6;
constexpr double kNsPerMs = 1e6;

template <typename T>
core::Result<T> fail_at(const config::Fields& f, const std::string& message) {
  return tl::make_unexpected(f.error(message));
}

// A path as written, relative to the pipeline file's folder.
std::string beside(const config::Origin& origin, const std::string& path) {
  std::filesystem::path p(path);
  if (p.is_relative()) p = std::filesystem::path(origin.file).parent_path() / p;
  return p.lexically_normal().string();
}

// Exactly one of two endpoint keys; `second` true when it was the second.
core::Result<std::string> one_endpoint(config::Fields& f, const char* first, const char* second, bool& is_second) {
  if (f.has(first) == f.has(second))
    return fail_at<std::string>(f, fmt::format("give exactly one of '{}' and '{}' (a ZeroMQ endpoint, tcp://HOST:PORT)",
                                               first, second));
  is_second = f.has(second);
  const char* key = is_second ? second : first;
  auto endpoint = f.text(key);
  if (!endpoint) return endpoint;
  if (endpoint->find("://") == std::string::npos)
    return fail_at<std::string>(f, fmt::format("'{}' = \"{}\" is no ZeroMQ endpoint; write tcp://HOST:PORT", key, *endpoint));
  return endpoint;
}

// A key file setting, checked: readable, a CURVE key, a secret one mode 0600.
core::Result<std::string> key_file(config::Fields& f, const char* key, bool secret) {
  auto path = f.text(key);
  if (!path) return path;
  const std::string full = beside(f.origin(), *path);
  if (auto ok = read_key(full, secret); !ok) return fail_at<std::string>(f, fmt::format("'{}': {}", key, ok.error().what));
  return full;
}

// plain = true, or the keys a CURVE end needs (`peer_key`: server_key for a sender, allow for a
// receiver), checked on disk.
core::Result<Security> security_of(config::Fields& f, bool sender) {
  Security s;
  auto plain = f.boolean("plain", false);
  if (!plain) return tl::make_unexpected(plain.error());
  s.plain = *plain;
  const char* peer = sender ? "server_key" : "allow";
  if (s.plain) {
    if (f.has("key") || f.has(peer))
      return fail_at<Security>(f, fmt::format("plain = true sends in clear: drop 'key' and '{}', or drop plain", peer));
    return s;
  }
  if (!f.has("key") || !f.has(peer))
    return fail_at<Security>(
        f, fmt::format("CURVE needs 'key' (this end's .key) and '{}' ({}); make keys with `weir bridge keygen`, or set "
                       "plain = true for unencrypted TCP",
                       peer, sender ? "the receiver's .pub" : "a folder of the senders' .pub files"));
  auto secret = key_file(f, "key", true);
  if (!secret) return tl::make_unexpected(secret.error());
  s.secret_key_file = *secret;
  if (sender) {
    auto server = key_file(f, "server_key", false);
    if (!server) return tl::make_unexpected(server.error());
    s.server_key_file = *server;
  } else {
    auto allow = f.text("allow");
    if (!allow) return tl::make_unexpected(allow.error());
    s.allow_folder = beside(f.origin(), *allow);
    if (auto keys = read_allowed_keys(s.allow_folder); !keys)
      return fail_at<Security>(f, fmt::format("'allow': {}", keys.error().what));
  }
  return s;
}

}  // namespace

core::Result<SenderOptions> sender_options(const config::BridgeDecl& decl) {
  config::Fields f(fmt::format("bridge \"{}\"", decl.name), decl.origin, decl.settings);
  SenderOptions o;
  o.name = decl.name;
  o.patterns = decl.channels;
  bool bind = false;
  auto endpoint = one_endpoint(f, "to", "bind", bind);
  if (!endpoint) return tl::make_unexpected(endpoint.error());
  o.endpoint = *endpoint;
  o.bind = bind;
  auto security = security_of(f, true);
  if (!security) return tl::make_unexpected(security.error());
  o.security = *security;
  auto lossless = f.boolean("lossless", false);
  if (!lossless) return tl::make_unexpected(lossless.error());
  o.lossless = *lossless;
  auto wait_ms = f.number("wait_ms", static_cast<double>(kDefaultLosslessWaitNs) / kNsPerMs);
  if (!wait_ms) return tl::make_unexpected(wait_ms.error());
  if (!(*wait_ms > 0 && *wait_ms <= kMaxWaitMs)) return fail_at<SenderOptions>(f, "'wait_ms' must be above 0 and at most 3600000");
  o.lossless_wait_ns = static_cast<std::int64_t>(*wait_ms * kNsPerMs);
  auto hwm = f.integer("hwm", 1, kMaxHwm, kDefaultSendHwm);
  if (!hwm) return tl::make_unexpected(hwm.error());
  o.send_hwm = static_cast<int>(*hwm);
  auto newest = f.boolean("newest", false);
  if (!newest) return tl::make_unexpected(newest.error());
  o.from_newest = *newest;
  if (auto ok = f.no_other_keys(kSendKeys); !ok) return tl::make_unexpected(ok.error());
  if (auto ok = validate(o); !ok) return fail_at<SenderOptions>(f, ok.error().what);
  return o;
}

core::Result<ReceiverOptions> receiver_options(const config::DriverDecl& decl) {
  config::Fields f = config::driver_fields(decl);
  ReceiverOptions o;
  o.name = decl.name;
  bool from = false;
  auto endpoint = one_endpoint(f, "bind", "from", from);
  if (!endpoint) return tl::make_unexpected(endpoint.error());
  o.endpoint = *endpoint;
  o.bind = !from;
  auto security = security_of(f, false);
  if (!security) return tl::make_unexpected(security.error());
  o.security = *security;
  auto prefix = f.text("prefix", std::string());
  if (!prefix) return tl::make_unexpected(prefix.error());
  o.prefix = *prefix;
  auto hwm = f.integer("hwm", 1, kMaxHwm, kDefaultRecvHwm);
  if (!hwm) return tl::make_unexpected(hwm.error());
  o.recv_hwm = static_cast<int>(*hwm);
  if (auto ok = f.no_other_keys(kRecvKeys); !ok) return tl::make_unexpected(ok.error());
  if (auto ok = validate(o); !ok) return fail_at<ReceiverOptions>(f, ok.error().what);
  return o;
}

core::Result<void> check_bridges(const config::Pipeline& pipeline) {
  for (const auto& b : pipeline.bridges)
    if (auto o = sender_options(b); !o) return tl::make_unexpected(o.error());
  return {};
}

core::Result<void> check_receiver_driver(const config::Pipeline& /*pipeline*/, const config::DriverDecl& decl) {
  auto o = receiver_options(decl);
  if (!o) return tl::make_unexpected(o.error());
  return {};
}

}  // namespace weir::bridge
