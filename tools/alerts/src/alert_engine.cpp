#include "weir/alerts/alert_engine.hpp"

#include <algorithm>
#include <set>

namespace weir::alerts {

AlertEngine::AlertEngine(const std::vector<config::AlertDecl>& alerts, const std::vector<std::string>& default_paths,
                         std::string arena, std::string host)
    : incidents_(alerts.size()), arena_(std::move(arena)), host_(std::move(host)) {
  watches_.reserve(alerts.size());
  for (const auto& a : alerts) watches_.emplace_back(a, a.paths.empty() ? default_paths : a.paths);
}

std::vector<Notice> AlertEngine::step(double now_s, std::int64_t now_ns, const Figures& f) {
  std::vector<Notice> out;
  for (std::size_t i = 0; i < watches_.size(); ++i) {
    const config::AlertDecl& d = watches_[i].decl();
    const IncidentTiming timing{d.for_s, d.clear_s, d.every_s};
    auto& incidents = incidents_[i];
    std::set<std::string> seen;
    const auto notify = [&](Transition t, const Incident& inc, const Reading& r) {
      if (t == Transition::none) return;
      Notice n;
      n.name = d.name;
      n.condition = d.when;
      n.state = t == Transition::resolved ? "resolved" : "firing";
      n.repeat = t == Transition::renotify;
      n.subject = r.subject;
      n.value = r.value;
      n.threshold = r.threshold;
      n.started_at_ns = now_ns - static_cast<std::int64_t>((now_s - inc.holding_since_s()) * 1e9);
      n.at_ns = now_ns;
      n.arena = arena_;
      n.host = host_;
      out.push_back(std::move(n));
    };
    for (const Reading& r : watches_[i].evaluate(now_s, f)) {
      seen.insert(r.subject);
      auto it = incidents.try_emplace(r.subject, timing).first;
      notify(it->second.update(now_s, r.holds), it->second, r);  // a resolved notice keeps the incident's start
    }
    // A subject that left the figures (a channel or consumer row gone) cannot keep firing.
    for (auto it = incidents.begin(); it != incidents.end();) {
      if (seen.count(it->first) != 0) {
        ++it;
        continue;
      }
      if (it->second.firing()) notify(Transition::resolved, it->second, Reading{it->first, false, 0, 0});
      it = incidents.erase(it);
    }
  }
  return out;
}

std::vector<std::uint64_t> AlertEngine::firing() const {
  std::vector<std::uint64_t> out;
  for (const auto& incidents : incidents_)
    out.push_back(static_cast<std::uint64_t>(
        std::count_if(incidents.begin(), incidents.end(), [](const auto& kv) { return kv.second.firing(); })));
  return out;
}

std::vector<std::string> AlertEngine::paths() const {
  std::set<std::string> all;
  for (const Watch& w : watches_)
    if (w.decl().when == "disk_below" || w.decl().when == "disk_filling") all.insert(w.paths().begin(), w.paths().end());
  return {all.begin(), all.end()};
}

}  // namespace weir::alerts
