// PART.retention_* keys of a recorder with `keep` (recorders/stream retention) -> weir_retention_*
// families. A part is such a recorder when it keeps PART.retention_deleted_files.
#include "retention_metrics.hpp"

#include <array>
#include <map>
#include <string_view>

#include <fmt/format.h>

#include "metric_family.hpp"
#include "weir/serve/metrics.hpp"

namespace weir::serve {

namespace {

constexpr std::string_view kRetentionMarker = ".retention_deleted_files";

struct RetentionSeries {
  std::string_view family, field, type, help;
};

constexpr std::array kRetentionExported{
    RetentionSeries{"weir_retention_deleted_files_total", "retention_deleted_files", "counter",
                    "Closed files of finished runs that retention deleted (each recorded in its run record), by this recorder process."},
    RetentionSeries{"weir_retention_deleted_bytes_total", "retention_deleted_bytes", "counter", "Bytes of the files retention deleted."},
    RetentionSeries{"weir_retention_failures_total", "retention_failures", "counter",
                    "Deletions that failed (the file, or its record); the file stays."},
    RetentionSeries{"weir_retention_kept_back", "retention_kept_back", "gauge",
                    "Files over a keep limit that may not go yet (the open run, or not handed over)."},
    RetentionSeries{"weir_retention_blocked", "retention_blocked", "gauge",
                    "1 while free space is below keep.free_gib and nothing more may be deleted: the recorder stops at its floor next."},
};

}  // namespace

void append_retention_metrics(std::string& out, const core::KvStore& kv) {
  std::map<std::string, std::map<std::string, std::uint64_t, std::less<>>> parts;  // part -> field -> value
  kv.for_each_key([&](std::string_view key, const core::ValueInfo& info) {
    if (info.type == core::ValueType::u64 && key.ends_with(kRetentionMarker))
      parts.try_emplace(std::string(key.substr(0, key.size() - kRetentionMarker.size())));
  });
  if (parts.empty()) return;
  for (auto& [part, fields] : parts)
    for (const RetentionSeries& e : kRetentionExported) {
      std::uint64_t bits = 0;
      core::ValueType type = core::ValueType::none;
      if (kv.get_scalar(part + "." + std::string(e.field), bits, type) == core::KvStatus::ok && type == core::ValueType::u64)
        fields[std::string(e.field)] = bits;
    }
  for (const RetentionSeries& e : kRetentionExported) {
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
