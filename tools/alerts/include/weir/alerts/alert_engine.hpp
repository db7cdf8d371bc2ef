#pragma once
// The alerts of a pipeline over time: each alert's Watch gives readings per subject, each
// subject's Incident turns them into notices. No threads, no I/O: step() takes the time and the
// figures, so the rules (for_s, hysteresis, every_s) are tested with a fake clock.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "weir/alerts/incident.hpp"
#include "weir/alerts/notice.hpp"
#include "weir/alerts/watch.hpp"

namespace weir::alerts {

class AlertEngine {
 public:
  /// `default_paths`: what a disk alert without `paths` watches (the recorders' directories).
  AlertEngine(const std::vector<config::AlertDecl>& alerts, const std::vector<std::string>& default_paths,
              std::string arena, std::string host);

  /// Evaluates every alert at `now_s` (monotonic seconds; `now_ns` is the realtime clock then) and
  /// returns the notices due. A subject gone from the figures resolves a firing incident. Thread: one owner.
  [[nodiscard]] std::vector<Notice> step(double now_s, std::int64_t now_ns, const Figures& f);

  /// Subjects firing per alert, in declaration order.
  [[nodiscard]] std::vector<std::uint64_t> firing() const;
  /// Every path a disk alert watches.
  [[nodiscard]] std::vector<std::string> paths() const;
  [[nodiscard]] const std::vector<Watch>& watches() const noexcept { return watches_; }

 private:
  std::vector<Watch> watches_;
  std::vector<std::map<std::string, Incident>> incidents_;  // per alert: subject -> incident
  std::string arena_, host_;
};

}  // namespace weir::alerts
