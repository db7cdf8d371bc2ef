#include "run_status.hpp"

#include <time.h>

#include <algorithm>

#include <fmt/format.h>

#include "weir/core/clock.hpp"

namespace weir::supervisor {

RunStatus::RunStatus(const core::Arena& arena, std::set<std::string> sources)
    : arena_(&arena), sources_(std::move(sources)), last_ns_(core::monotonic_ns()) {}

RunTotals RunStatus::sample() {
  RunTotals t;
  std::uint64_t bytes = 0;
  for (const auto& c : core::list_channels(*arena_)) {
    if (sources_.count(c.name) != 0) {
      t.samples += c.samples_written;
      bytes += c.samples_written * core::dtype_bytes(c.dtype);
    }
    t.dropped += c.dropped_at_source;
    for (const auto& k : c.consumers) {
      t.lost += k.blocks_lost;
      t.errors += k.errors;
      t.disk_bytes += k.bytes_out;
      if (k.alive) t.max_lag = std::max(t.max_lag, k.lag);
    }
  }
  const std::int64_t now = core::monotonic_ns();
  const double dt = static_cast<double>(now - last_ns_) / 1e9;
  if (dt > 0 && t.samples >= last_samples_) {
    t.samples_per_s = static_cast<double>(t.samples - last_samples_) / dt;
    t.bytes_per_s = static_cast<double>(bytes - last_bytes_) / dt;
  }
  last_samples_ = t.samples;
  last_bytes_ = bytes;
  last_ns_ = now;
  return t;
}

std::string RunStatus::line(const RunTotals& t, const Supervisor& s, double elapsed_s) {
  int running = 0, restarts = 0, given_up = 0;
  for (const auto& p : s.parts()) {
    running += p->status == PartStatus::running ? 1 : 0;
    restarts += p->restarts;
    given_up += p->status == PartStatus::given_up ? 1 : 0;
  }
  const auto secs = static_cast<long>(elapsed_s);
  return fmt::format("{:02}:{:02}:{:02} | in {:.2f} MS/s {:.1f} MB/s | lost {} dropped {} lag {} | errors {} | "
                     "parts {}/{} restarts {}{} | disk {:.1f} MiB",
                     secs / 3600, secs / 60 % 60, secs % 60, t.samples_per_s / 1e6, t.bytes_per_s / 1e6, t.lost,
                     t.dropped, t.max_lag, t.errors, running, s.parts().size(), restarts,
                     given_up != 0 ? fmt::format(" GAVE UP {}", given_up) : std::string{},
                     static_cast<double>(t.disk_bytes) / 1048576.0);
}

std::string RunStatus::summary() const {
  std::string out;
  for (const auto& c : core::list_channels(*arena_)) {
    out += fmt::format("  channel {:<20} written {} blocks ({} samples), dropped at source {}\n", c.name,
                       c.blocks_written, c.samples_written, c.dropped_at_source);
    for (const auto& k : c.consumers)
      out += fmt::format("    {:<24} {:<9} read {} lost {}{}\n", k.name, core::policy_name(k.policy), k.blocks_read,
                         k.blocks_lost, k.bytes_out != 0 ? fmt::format(" wrote {:.1f} MiB", static_cast<double>(k.bytes_out) / 1048576.0) : "");
  }
  return out;
}

}  // namespace weir::supervisor
