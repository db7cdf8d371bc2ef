#pragma once
// What an alert tells: one notice per incident firing, one per resolution, and the repeats while
// it fires. As JSON for a webhook, and as a command's argv with {name}, {state}, {subject},
// {condition} and {value} substituted.
#include <cstdint>
#include <string>
#include <vector>

namespace weir::alerts {

struct Notice {
  std::string name;       // the alert's
  std::string condition;  // its `when`
  std::string state;      // "firing" or "resolved"
  bool repeat = false;    // a re-notification of an incident already firing
  std::string subject;    // channel, "channel/consumer", part, path, "run" or "clock"
  double value = 0;
  double threshold = 0;
  std::int64_t started_at_ns = 0;  // when the condition began to hold (realtime)
  std::int64_t at_ns = 0;          // when this notice was made (realtime)
  std::string arena;
  std::string host;
};

/// {"name":..,"condition":..,"state":..,"repeat":..,"subject":..,"value":..,"threshold":..,
///  "started_at":"RFC 3339","at":"RFC 3339","arena":..,"host":..}. Thread: any.
[[nodiscard]] std::string notice_json(const Notice& n);

/// `argv` with each {name}, {state}, {subject}, {condition} and {value} replaced. Thread: any.
[[nodiscard]] std::vector<std::string> notice_argv(const std::vector<std::string>& argv, const Notice& n);

}  // namespace weir::alerts
