// PART.FIELD keys -> families labelled by part (part_series.hpp).
#include "part_series.hpp"

#include <map>

#include <fmt/format.h>

#include "metric_family.hpp"
#include "weir/serve/metrics.hpp"

namespace weir::serve {

void append_part_series(std::string& out, const core::KvStore& kv, std::string_view marker,
                        std::span<const PartSeries> series) {
  std::map<std::string, std::map<std::string, std::uint64_t, std::less<>>> parts;  // part -> field -> value
  kv.for_each_key([&](std::string_view key, const core::ValueInfo& info) {
    if (info.type == core::ValueType::u64 && key.ends_with(marker))
      parts.try_emplace(std::string(key.substr(0, key.size() - marker.size())));
  });
  if (parts.empty()) return;
  for (auto& [part, fields] : parts)
    for (const PartSeries& e : series) {
      std::uint64_t bits = 0;
      core::ValueType type = core::ValueType::none;
      if (kv.get_scalar(part + "." + std::string(e.field), bits, type) == core::KvStatus::ok && type == core::ValueType::u64)
        fields[std::string(e.field)] = bits;
    }
  for (const PartSeries& e : series) {
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
