// driver "tango", a device's thread: pings the device, subscribes to its attributes' change events
// (or polls those without), and subscribes afresh when the device comes back. A device that cannot
// be reached is tried again a little over 1 s later.
#include <algorithm>

#include <fmt/format.h>

#include "attr_values.hpp"
#include "driver_impl.hpp"

namespace weir::tango::detail {

namespace {

constexpr auto kReconnectEvery = std::chrono::milliseconds(1100);  // past Tango's 1 s reconnection throttle

}  // namespace

void Driver::device_loop(Device& d) {
  const auto ping_every = std::chrono::microseconds(static_cast<std::int64_t>(options_.ping_ms * 1000));
  auto next_ping = Clock::now();
  while (!stopping()) {
    auto now = Clock::now();
    if (now >= next_ping) {
      next_ping = now + ping_every;
      bool ok = false;
      std::string problem;
      try {
        if (!d.proxy) {
          d.proxy = std::make_unique<::Tango::DeviceProxy>(d.trl);
          d.proxy->set_timeout_millis(static_cast<int>(options_.timeout_ms));
        }
        d.proxy->ping();
        ok = true;
      } catch (const ::Tango::DevFailed& e) {
        problem = reason_of(e);
      }
      // Tango refuses a reconnection within 1 s of the last try ("The connection request was delayed"),
      // and counts that refusal as a try: an unreachable device is tried again a little over 1 s later.
      if (!ok) next_ping = std::max(next_ping, now + kReconnectEvery);
      if (!ok && d.reachable) {
        d.reachable = false;
        const std::lock_guard lock(mu_);
        for (Attr* a : d.attrs) disconnect(*a);
      }
      if (!ok && problem != d.last_problem) {
        fmt::print(stderr, "driver \"{}\": device {}: {}\n", options_.part, d.trl, problem);
        d.last_problem = problem;
      }
      if (ok) {
        // Back after a failed ping, or an error event while the device answered: subscribe afresh (the
        // subscription's first read is the value now), rather than wait for Tango's keep-alive thread.
        for (Attr* a : d.attrs)
          if (a->mode == Mode::events && (!d.reachable || a->resubscribe.exchange(false))) {
            try {
              d.proxy->unsubscribe_event(a->event_id);
            } catch (const ::Tango::DevFailed&) {
            }
            a->event_id = -1;
            a->mode = Mode::pending;
          }
        d.reachable = true;
        d.last_problem.clear();
        for (Attr* a : d.attrs)
          if (a->mode == Mode::pending && !stopping()) set_up(d, *a);
      }
    }
    if (d.reachable)
      for (Attr* a : d.attrs)
        if (a->mode == Mode::polled && Clock::now() >= a->next_poll && !stopping()) poll(d, *a);
    auto until = next_ping;
    for (Attr* a : d.attrs)
      if (a->mode == Mode::polled && d.reachable) until = std::min(until, a->next_poll);
    std::unique_lock lock(wake_mu_);
    wake_.wait_until(lock, until, [this] { return stopping(); });
  }
}

// Learns what the attribute is, then subscribes to its change events or, where it has a poll_ms or
// the device pushes no events for it, polls it.
void Driver::set_up(Device& d, Attr& a) {
  ::Tango::AttributeInfoEx info;
  try {
    info = d.proxy->attribute_query(a.spec.attribute);
  } catch (const ::Tango::DevFailed& e) {
    if (const std::string p = reason_of(e); p != a.last_problem) {
      fmt::print(stderr, "driver \"{}\": attribute {}: {}\n", options_.part, a.spec.name, p);
      a.last_problem = p;
    }
    return;
  }
  const bool spectrum = info.data_format == ::Tango::SPECTRUM;
  std::string refusal;
  if (info.data_format == ::Tango::IMAGE) refusal = "is an image; the driver takes scalars and spectra";
  else if (spectrum && a.spec.channel.empty()) refusal = "is a spectrum: give it a channel (channel = \"...\", elements = N)";
  else if (!spectrum && !a.spec.channel.empty()) refusal = "is a scalar: give it a key, not a channel";
  else if (pv_type_of(info.data_type) == core::PvType::unknown ||
           (spectrum && pv_type_of(info.data_type) != core::PvType::f64 && pv_type_of(info.data_type) != core::PvType::i64))
    refusal = fmt::format("has the Tango data type {}, which the driver does not carry", info.data_type);
  if (!refusal.empty()) {
    fmt::print(stderr, "driver \"{}\": attribute {} {}; left out\n", options_.part, a.spec.name, refusal);
    a.mode = Mode::refused;
    return;
  }
  {
    const std::lock_guard lock(mu_);
    describe(info, a.meta);
  }
  double poll_ms = a.spec.poll_ms;
  if (poll_ms <= 0) {
    try {
      a.event_id = d.proxy->subscribe_event(a.spec.attribute, ::Tango::CHANGE_EVENT, a.sink.get(), false);
      a.mode = Mode::events;
      return;
    } catch (const ::Tango::DevFailed& e) {
      if (unreachable(e)) return;  // the next ping tries again
      fmt::print(stderr, "driver \"{}\": attribute {}: no change events ({}); read every {} ms\n", options_.part,
                 a.spec.name, reason_of(e), options_.fallback_poll_ms);
      poll_ms = options_.fallback_poll_ms;
    }
  }
  a.poll_every = std::chrono::microseconds(static_cast<std::int64_t>(poll_ms * 1000));
  a.next_poll = Clock::now();
  a.mode = Mode::polled;
  counts_.polled.fetch_add(1, std::memory_order_relaxed);  // relaxed: a statistic
}

void Driver::poll(Device& d, Attr& a) {
  a.next_poll += a.poll_every;
  if (const auto now = Clock::now(); a.next_poll < now) a.next_poll = now + a.poll_every;  // late: no burst
  try {
    ::Tango::DeviceAttribute da = d.proxy->read_attribute(a.spec.attribute);
    on_value(a, da);
  } catch (const ::Tango::DevFailed& e) {
    const std::lock_guard lock(mu_);
    disconnect(a);
  }
}

}  // namespace weir::tango::detail
