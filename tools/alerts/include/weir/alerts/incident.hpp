#pragma once
// One incident's life for one alert and one subject (a channel, consumer, part, path): the
// condition must hold `for_s` before it fires, and be false `clear_s` before it resolves
// (hysteresis: a flapping condition makes one incident, not many); while firing it is notified
// again at most every `every_s`. Pure: the caller passes the time, so tests use a fake clock.
#include <cstdint>

namespace weir::alerts {

struct IncidentTiming {
  double for_s = 60;     // holds this long before firing
  double clear_s = 10;   // false this long before resolving
  double every_s = 3600; // while firing, notify again at most this often (0: never)
};

enum class Transition : std::uint8_t {
  none,      // nothing to tell
  firing,    // the incident began: one notice
  renotify,  // still firing, every_s passed since the last notice
  resolved,  // the incident ended: one notice
};

class Incident {
 public:
  explicit Incident(IncidentTiming timing) noexcept : timing_(timing) {}

  /// The condition's value at `now_s` (any monotonic seconds, never decreasing). Thread: one owner.
  [[nodiscard]] Transition update(double now_s, bool holds) noexcept;

  [[nodiscard]] bool firing() const noexcept { return firing_; }
  /// When the condition began to hold for this incident (valid while pending or firing).
  [[nodiscard]] double holding_since_s() const noexcept { return holding_since_s_; }

 private:
  IncidentTiming timing_;
  bool firing_ = false;
  bool holding_ = false;        // the condition holds (or held, while clearing)
  double holding_since_s_ = 0;  // when it began to hold
  bool clearing_ = false;       // firing, and false since clear_since_s_
  double clear_since_s_ = 0;
  double last_notice_s_ = 0;
};

}  // namespace weir::alerts
