#pragma once
// The arena as Prometheus metrics (text exposition format 0.0.4), from the counters the arena
// already holds: channel descriptors, consumer rows (read, lost, lag, and the part-level counters
// shard hosts and recorders keep there), the header's geometry and its run control.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "weir/core/arena.hpp"

namespace weir::serve {

/// Counters of the server itself, shown beside the arena's.
struct ServerCounters {
  std::uint64_t http_requests = 0;
  std::uint64_t ws_clients = 0;       // connected now
  std::uint64_t frames_encoded = 0;   // once per view per tick, shared by every session on it
  std::uint64_t frames_sent = 0;      // per session
  std::uint64_t frames_replaced = 0;  // a slow session's unsent frame replaced by a newer one
};

/// The whole exposition: every metric family with HELP and TYPE lines. `disk_paths` adds
/// weir_disk_free_bytes / weir_disk_size_bytes per directory (skipped when statvfs fails).
/// Thread: any.
[[nodiscard]] std::string prometheus_text(const core::Arena& arena, const std::vector<std::string>& disk_paths,
                                          const ServerCounters* server = nullptr);

/// `value` escaped as a Prometheus label value (backslash, double quote, newline). Pure.
[[nodiscard]] std::string escape_label(std::string_view value);

}  // namespace weir::serve
