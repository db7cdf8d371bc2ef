// The conditions: each the figure /metrics exports and the comparison its Prometheus rule makes.
#include "weir/alerts/watch.hpp"

#include <algorithm>
#include <cmath>

namespace weir::alerts {

Watch::Watch(config::AlertDecl decl, std::vector<std::string> paths) : decl_(std::move(decl)), paths_(std::move(paths)) {}

bool Watch::wanted(const std::vector<std::string>& names, const std::string& name) const {
  return names.empty() || std::find(names.begin(), names.end(), name) != names.end();
}

double Watch::increase(const std::string& subject, double now_s, double value) {
  auto& h = history_[subject];
  h.emplace_back(now_s, value);
  // Keep one sample at or before the window's start: increase(x[w]) spans the whole window.
  while (h.size() > 2 && h[1].first <= now_s - decl_.window_s) h.pop_front();
  double up = 0;
  for (std::size_t i = 1; i < h.size(); ++i)  // a counter that went back (a restarted part) counts from 0
    up += h[i].second >= h[i - 1].second ? h[i].second - h[i - 1].second : h[i].second;
  return up;
}

double Watch::seconds_to_empty(const std::string& subject, double now_s, double value) {
  auto& h = history_[subject];
  h.emplace_back(now_s, value);
  while (!h.empty() && h.front().first < now_s - decl_.window_s) h.pop_front();
  if (h.size() < 3 || h.back().first - h.front().first < decl_.window_s / 4) return -1;  // too little to fit
  double mt = 0, mv = 0;
  for (const auto& [t, v] : h) {
    mt += t;
    mv += v;
  }
  mt /= static_cast<double>(h.size());
  mv /= static_cast<double>(h.size());
  double stt = 0, stv = 0;
  for (const auto& [t, v] : h) {
    stt += (t - mt) * (t - mt);
    stv += (t - mt) * (v - mv);
  }
  if (stt <= 0) return -1;
  const double slope = stv / stt;  // bytes per second
  if (slope >= 0) return -1;
  const double now_fit = mv + slope * (now_s - mt);
  return std::max(0.0, now_fit / -slope);
}

std::vector<Reading> Watch::evaluate(double now_s, const Figures& f) {
  const config::AlertDecl& d = decl_;
  std::vector<Reading> out;
  const std::string& when = d.when;
  if (when == "writer_stalled" || when == "rate_below" || when == "consumer_lagging" || when == "blocks_lost") {
    for (const ChannelFigures& c : f.channels) {
      if (!wanted(d.channels, c.name)) continue;
      if (when == "writer_stalled" && c.active) {
        const double period_s = c.rate_hz > 0 ? c.samples_per_block / c.rate_hz : 0;
        const double limit = d.stall_s > 0 ? d.stall_s : std::max(4 * period_s, 30.0);
        out.push_back({c.name, c.age_s > limit, c.age_s, limit});
      } else if (when == "rate_below" && c.active && c.rate_hz > 0) {
        out.push_back({c.name, c.samples_per_s < d.fraction * c.rate_hz, c.samples_per_s, d.fraction * c.rate_hz});
      } else if (when == "consumer_lagging") {
        for (const ConsumerFigures& k : c.consumers) {
          if (k.latest || !k.alive) continue;
          const double limit = d.fraction * c.ring_blocks;
          out.push_back({c.name + "/" + k.name, static_cast<double>(k.lag) > limit, static_cast<double>(k.lag), limit});
        }
      } else if (when == "blocks_lost") {
        const double dropped = increase(c.name, now_s, static_cast<double>(c.dropped_at_source));
        out.push_back({c.name, dropped > 0, dropped, 0});
        for (const ConsumerFigures& k : c.consumers) {
          const std::string subject = c.name + "/" + k.name;
          const double lost = increase(subject, now_s, static_cast<double>(k.blocks_lost));
          out.push_back({subject, lost > 0, lost, 0});
        }
      }
    }
    return out;
  }
  if (when == "gaps_growing" || when == "part_restarting" || when == "part_given_up" || when == "handoff_failing") {
    for (const auto& [name, p] : f.parts) {
      if (!wanted(d.parts, name)) continue;
      if (when == "gaps_growing") {
        const double lost = increase(name, now_s, static_cast<double>(p.lost_units));
        out.push_back({name, lost > 0, lost, 0});
      } else if (when == "part_restarting" && !p.state.empty()) {
        const double restarts = increase(name, now_s, static_cast<double>(p.restarts));
        out.push_back({name, restarts > 0, restarts, 0});
      } else if (when == "part_given_up" && !p.state.empty()) {
        const bool down = p.state == "given up" || p.state == "configuration error";
        out.push_back({name, down, down ? 1.0 : 0.0, 1});
      } else if (when == "handoff_failing" && p.handoff_failures) {
        const double failed = increase(name, now_s, static_cast<double>(*p.handoff_failures));
        out.push_back({name, failed > 0, failed, 0});
      }
    }
    return out;
  }
  if (when == "disk_below" || when == "disk_filling") {
    for (const std::string& path : paths_) {
      const auto it = f.disks.find(path);
      if (it == f.disks.end() || !it->second.known) continue;
      const DiskFigures& disk = it->second;
      if (when == "disk_below") {
        const double floor = d.floor_gib > 0 ? d.floor_gib * 1073741824.0 : d.floor_fraction * static_cast<double>(disk.size_bytes);
        out.push_back({path, static_cast<double>(disk.free_bytes) < floor, static_cast<double>(disk.free_bytes), floor});
      } else {
        const double left_s = seconds_to_empty(path, now_s, static_cast<double>(disk.free_bytes));
        out.push_back({path, left_s >= 0 && left_s < d.horizon_h * 3600, left_s >= 0 ? left_s / 3600 : -1, d.horizon_h});
      }
    }
    return out;
  }
  if (when == "run_not_balanced") {
    if (f.run_exact) out.push_back({"run", !*f.run_exact, *f.run_exact ? 1.0 : 0.0, 1});
    return out;
  }
  if (when == "clock_unsynchronised" && f.clock_synchronised)
    out.push_back({"clock", !*f.clock_synchronised, *f.clock_synchronised ? 1.0 : 0.0, 1});
  return out;
}

}  // namespace weir::alerts
