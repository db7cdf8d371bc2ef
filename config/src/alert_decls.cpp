// alert "NAME" { when = "...", ... }: the condition, the settings it takes, and where a notice goes.
// Evaluated by `weir run` (tools/alerts); the names of channels and parts are checked in resolve().
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "entry_decls.hpp"

namespace weir::config {

core::Result<HttpUrl> parse_http_url(const std::string& url) {
  const auto bad = [&](const std::string& why) {
    return core::fail(core::Errc::invalid_argument, "'" + url + "' " + why);
  };
  if (url.rfind("https://", 0) == 0)
    return bad("is https: weir posts plain HTTP only (no TLS); post to a relay on this host, e.g. http://127.0.0.1:PORT/");
  if (url.rfind("http://", 0) != 0) return bad("is no URL weir can post to: write http://HOST[:PORT]/PATH");
  const std::string rest = url.substr(7);
  const std::size_t slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  HttpUrl u;
  if (slash != std::string::npos) u.target = rest.substr(slash);
  if (authority.find('@') != std::string::npos) return bad("carries user info; put a token in the path instead");
  if (u.target.find_first_of(" \t\r\n") != std::string::npos) return bad("has white space in its path");
  // "[v6]:port" or "host:port"; the port is optional.
  const std::size_t close = authority.size() > 0 && authority.front() == '[' ? authority.find(']') : std::string::npos;
  const std::size_t colon = authority.rfind(':');
  if (colon != std::string::npos && (close == std::string::npos ? authority.front() != '[' : colon > close)) {
    u.port = authority.substr(colon + 1);
    authority.resize(colon);
    char* end = nullptr;
    const long port = std::strtol(u.port.c_str(), &end, 10);
    if (u.port.empty() || *end != '\0' || port < 1 || port > 65535) return bad("has no port 1 to 65535 after ':'");
  }
  if (authority.size() >= 2 && authority.front() == '[' && authority.back() == ']')
    authority = authority.substr(1, authority.size() - 2);
  if (authority.empty()) return bad("names no host");
  u.host = authority;
  return u;
}

namespace detail {

namespace {

constexpr std::array kCommonKeys{"when", "webhook", "command", "for_s", "clear_s", "every_s", "timeout_s", "retries"};

// Per condition: the subject list it takes ("channels", "parts", "paths" or none) and its own settings.
struct ConditionKeys {
  std::string_view when;
  const char* subjects;
  std::array<const char*, 3> own;
  double window_s;  // the default window (counters: increase within it; disk_filling: the fit's history)
};
constexpr std::array<ConditionKeys, 12> kConditionKeys{{
    {"writer_stalled", "channels", {"stall_s"}, 0},
    {"rate_below", "channels", {"fraction"}, 0},
    {"blocks_lost", "channels", {"window_s"}, 300},
    {"gaps_growing", "parts", {"window_s"}, 300},
    {"consumer_lagging", "channels", {"fraction"}, 0},
    {"disk_filling", "paths", {"horizon_h", "window_s"}, 7200},
    {"disk_below", "paths", {"floor_gib", "floor_fraction"}, 0},
    {"part_restarting", "parts", {"window_s"}, 900},
    {"part_given_up", "parts", {}, 0},
    {"run_not_balanced", nullptr, {}, 0},
    {"handoff_failing", "parts", {"window_s"}, 900},
    {"clock_unsynchronised", nullptr, {}, 0},
}};
static_assert(kConditionKeys.size() == kAlertConditions.size());

template <class T>
core::Result<void> take(core::Result<T> r, T& into) {
  if (!r) return tl::make_unexpected(r.error());
  into = std::move(*r);
  return {};
}

core::Result<void> positive(const Fields& f, const char* key, double v, bool zero_ok, double hi) {
  if (std::isfinite(v) && (zero_ok ? v >= 0 : v > 0) && v <= hi) return {};
  return tl::make_unexpected(f.error(fmt::format("'{}' = {} must be {} and at most {}", key, v,
                                                 zero_ok ? "0 or more" : "more than 0", hi)));
}

}  // namespace

core::Result<void> load_alert(const std::string& name, Fields f, AlertDecl& a) {
  a.origin = f.origin();
  a.name = name;
  if (name.empty() || name.find_first_of(" \t\n./") != std::string::npos)
    return tl::make_unexpected(f.error("an alert needs a name without blanks, dots or slashes: alert \"disk\" { ... }"));
  if (auto ok = take(f.text("when"), a.when); !ok) return ok;
  const auto cond = std::find_if(kConditionKeys.begin(), kConditionKeys.end(),
                                 [&](const ConditionKeys& c) { return c.when == a.when; });
  if (cond == kConditionKeys.end()) {
    std::vector<const char*> names;
    std::string list;
    for (const auto& c : kConditionKeys) {
      names.push_back(c.when.data());
      list += (list.empty() ? "" : ", ") + std::string(c.when);
    }
    return tl::make_unexpected(
        f.error("unknown condition 'when' = \"" + a.when + "\"" + did_you_mean(a.when, names) + "; there are: " + list));
  }
  std::vector<const char*> known(kCommonKeys.begin(), kCommonKeys.end());
  if (cond->subjects != nullptr) known.push_back(cond->subjects);
  for (const char* k : cond->own)
    if (k != nullptr) known.push_back(k);

  const std::string_view subjects = cond->subjects != nullptr ? cond->subjects : "";
  if (subjects == "channels") {
    if (auto ok = take(f.list("channels", false), a.channels); !ok) return ok;
  } else if (subjects == "parts") {
    if (auto ok = take(f.list("parts", false), a.parts); !ok) return ok;
  } else if (subjects == "paths") {
    if (auto ok = take(f.list("paths", false), a.paths); !ok) return ok;
  }
  a.fraction = a.when == "rate_below" ? 0.95 : 0.5;
  a.window_s = cond->window_s;
  struct Number {
    const char* key;
    double* into;
    bool zero_ok;
    double hi;
  };
  for (const Number& n : {Number{"stall_s", &a.stall_s, true, 86400}, Number{"fraction", &a.fraction, false, 1},
                          Number{"floor_gib", &a.floor_gib, true, 1e9}, Number{"floor_fraction", &a.floor_fraction, false, 1},
                          Number{"horizon_h", &a.horizon_h, false, 24 * 366}, Number{"window_s", &a.window_s, false, 86400 * 31},
                          Number{"for_s", &a.for_s, true, 86400}, Number{"clear_s", &a.clear_s, true, 86400},
                          Number{"every_s", &a.every_s, true, 86400 * 31}, Number{"timeout_s", &a.timeout_s, false, 600}}) {
    if (std::find_if(known.begin(), known.end(), [&](const char* k) { return std::string_view(k) == n.key; }) ==
        known.end())
      continue;  // not this condition's: no_other_keys() below refuses it
    if (auto ok = take(f.number(n.key, *n.into), *n.into); !ok) return ok;
    if (auto ok = positive(f, n.key, *n.into, n.zero_ok, n.hi); !ok) return ok;
  }
  long long retries = a.retries;
  if (auto ok = take(f.integer("retries", 0, 1000, retries), retries); !ok) return ok;
  a.retries = static_cast<int>(retries);
  if (auto ok = take(f.text("webhook", ""), a.webhook); !ok) return ok;
  if (auto ok = take(f.list("command", false), a.command); !ok) return ok;
  if (auto ok = f.no_other_keys(known); !ok) {
    const std::string& what = ok.error().what;
    return tl::make_unexpected(core::Error{ok.error().code, what + " (alert \"" + a.when + "\" takes: " +
                                                                fmt::format("{}", fmt::join(known, ", ")) + ")"});
  }
  if (a.webhook.empty() && a.command.empty())
    return tl::make_unexpected(f.error("no target: give 'webhook' = \"http://HOST:PORT/PATH\" and/or 'command' = "
                                       "{\"/path/to/program\", \"{name}\", \"{state}\"}"));
  if (!a.webhook.empty())
    if (auto url = parse_http_url(a.webhook); !url) return tl::make_unexpected(f.error("'webhook' = " + url.error().what));
  if (!a.command.empty() && a.command.front().empty())
    return tl::make_unexpected(f.error("'command' names no program: its first item is empty"));
  return {};
}

}  // namespace detail
}  // namespace weir::config
