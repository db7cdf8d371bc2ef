#include "weir/alerts/notice.hpp"

#include <ctime>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "weir/json/json.hpp"

namespace weir::alerts {

namespace {

std::string rfc3339(std::int64_t ns) {
  const std::time_t s = static_cast<std::time_t>(ns / 1'000'000'000);
  std::tm utc{};
  gmtime_r(&s, &utc);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday,
                     utc.tm_hour, utc.tm_min, utc.tm_sec, (ns / 1'000'000) % 1000);
}

}  // namespace

std::string notice_json(const Notice& n) {
  json::JsonObject o;
  o.text("name", n.name)
      .text("condition", n.condition)
      .text("state", n.state)
      .boolean("repeat", n.repeat)
      .text("subject", n.subject)
      .real("value", n.value)
      .real("threshold", n.threshold)
      .text("started_at", rfc3339(n.started_at_ns))
      .text("at", rfc3339(n.at_ns))
      .text("arena", n.arena)
      .text("host", n.host);
  return o.str();
}

std::vector<std::string> notice_argv(const std::vector<std::string>& argv, const Notice& n) {
  const std::pair<const char*, std::string> fields[] = {
      {"{name}", n.name}, {"{state}", n.state}, {"{subject}", n.subject}, {"{condition}", n.condition},
      {"{value}", fmt::format("{:g}", n.value)}};
  std::vector<std::string> out;
  out.reserve(argv.size());
  for (std::string arg : argv) {
    for (const auto& [field, value] : fields)
      for (std::size_t at = arg.find(field); at != std::string::npos; at = arg.find(field, at + value.size()))
        arg.replace(at, std::string_view(field).size(), value);
    out.push_back(std::move(arg));
  }
  return out;
}

}  // namespace weir::alerts
