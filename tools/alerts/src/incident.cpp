#include "weir/alerts/incident.hpp"

namespace weir::alerts {

Transition Incident::update(double now_s, bool holds) noexcept {
  if (holds) {
    clearing_ = false;
    if (!holding_) {
      holding_ = true;
      holding_since_s_ = now_s;
    }
    if (!firing_) {
      if (now_s - holding_since_s_ < timing_.for_s) return Transition::none;
      firing_ = true;
      last_notice_s_ = now_s;
      return Transition::firing;
    }
    if (timing_.every_s > 0 && now_s - last_notice_s_ >= timing_.every_s) {
      last_notice_s_ = now_s;
      return Transition::renotify;
    }
    return Transition::none;
  }
  if (!firing_) {  // pending, not yet for_s: forgotten, the next incident starts its own count
    holding_ = false;
    return Transition::none;
  }
  if (!clearing_) {
    clearing_ = true;
    clear_since_s_ = now_s;
  }
  if (now_s - clear_since_s_ < timing_.clear_s) return Transition::none;
  firing_ = holding_ = clearing_ = false;
  return Transition::resolved;
}

}  // namespace weir::alerts
