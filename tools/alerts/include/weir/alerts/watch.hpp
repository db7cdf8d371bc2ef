#pragma once
// One alert's condition over the figures: a reading per subject (channel, consumer, part, path),
// with the history the condition needs (a counter's increase within window_s, the disk's linear
// fit). The same conditions as the Prometheus rules (examples/prometheus/weir-rules.yml).
#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "weir/alerts/figures.hpp"
#include "weir/config/pipeline.hpp"

namespace weir::alerts {

struct Reading {
  std::string subject;  // "adc0", "adc0/rec", "rec", "/data", "run", "clock"
  bool holds = false;
  double value = 0;      // what was measured (seconds, samples/s, blocks, bytes, hours)
  double threshold = 0;  // what it was compared with
};

class Watch {
 public:
  /// `paths`: the filesystems a disk condition watches (the alert's, or the recorders' directories).
  Watch(config::AlertDecl decl, std::vector<std::string> paths);

  /// Readings of every subject present in `f` at `now_s` (monotonic seconds). Thread: one owner.
  [[nodiscard]] std::vector<Reading> evaluate(double now_s, const Figures& f);

  [[nodiscard]] const config::AlertDecl& decl() const noexcept { return decl_; }
  [[nodiscard]] const std::vector<std::string>& paths() const noexcept { return paths_; }

 private:
  bool wanted(const std::vector<std::string>& names, const std::string& name) const;
  /// The counter's increase over the last window_s (resets count from 0).
  double increase(const std::string& subject, double now_s, double value);
  /// Seconds until the fitted line reaches 0, or a negative number when it does not fall (or too little history).
  double seconds_to_empty(const std::string& subject, double now_s, double value);

  config::AlertDecl decl_;
  std::vector<std::string> paths_;
  std::map<std::string, std::deque<std::pair<double, double>>> history_;  // subject -> (now_s, value)
};

}  // namespace weir::alerts
