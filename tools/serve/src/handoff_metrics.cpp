// PART.FIELD keys of a recorder with an on_close hand-off (recorders/stream closed_files) ->
// weir_handoff_* and weir_*hash* families. A part is such a recorder when it keeps PART.handoff_ok.
#include "handoff_metrics.hpp"

#include <array>
#include <map>
#include <string_view>

#include <fmt/format.h>

#include "metric_family.hpp"
#include "weir/serve/metrics.hpp"

namespace weir::serve {

namespace {

constexpr std::string_view kHandoffMarker = ".handoff_ok";

struct HandoffSeries {
  std::string_view family, field, type, help;
};

constexpr std::array kHandoffExported{
    HandoffSeries{"weir_handoff_ok_total", "handoff_ok", "counter",
             "Closed files whose on_close hand-off succeeded and was recorded (FILE.handed), by this recorder process."},
    HandoffSeries{"weir_handoff_failures_total", "handoff_failures", "counter",
             "Hand-off attempts that failed (non-zero exit, a signal, a timeout); each is retried with back-off."},
    HandoffSeries{"weir_handoff_timeouts_total", "handoff_timeouts", "counter", "Hand-off commands killed at their timeout."},
    HandoffSeries{"weir_handoff_pending", "handoff_pending", "gauge", "Closed files waiting for their (next) hand-off attempt."},
    HandoffSeries{"weir_files_hashed_total", "files_hashed", "counter", "Closed files hashed into their SHA-256 manifest."},
    HandoffSeries{"weir_hashed_bytes_total", "bytes_hashed", "counter", "Bytes of closed files hashed."},
    HandoffSeries{"weir_hash_failures_total", "hash_failures", "counter", "Closed files left without a manifest (read or write failed)."},
};

}  // namespace

void append_handoff_metrics(std::string& out, const core::KvStore& kv) {
  std::map<std::string, std::map<std::string, std::uint64_t, std::less<>>> parts;  // part -> field -> value
  kv.for_each_key([&](std::string_view key, const core::ValueInfo& info) {
    if (info.type == core::ValueType::u64 && key.ends_with(kHandoffMarker))
      parts.try_emplace(std::string(key.substr(0, key.size() - kHandoffMarker.size())));
  });
  if (parts.empty()) return;
  for (auto& [part, fields] : parts)
    for (const HandoffSeries& e : kHandoffExported) {
      std::uint64_t bits = 0;
      core::ValueType type = core::ValueType::none;
      if (kv.get_scalar(part + "." + std::string(e.field), bits, type) == core::KvStatus::ok && type == core::ValueType::u64)
        fields[std::string(e.field)] = bits;
    }
  for (const HandoffSeries& e : kHandoffExported) {
    std::string samples;
    for (const auto& [part, fields] : parts)
      if (const auto it = fields.find(e.field); it != fields.end())
        samples += fmt::format("{}{{part=\"{}\"}} {}\n", e.family, escape_label(part), it->second);
    if (samples.empty()) continue;
    Family(out, e.family, e.type, e.help);
    out += samples;
  }
}

}  // namespace weir::serve
