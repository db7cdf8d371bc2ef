// driver "tango": attributes of other Tango devices into keys, the attribute log channel (the PV log
// layout of core/pv_log.hpp) and spectrum channels. Here: the driver made and closed, its thread's
// flush and counters (the loop is controls::run_driver_loop), and its report. The device threads
// are device_thread.cpp's, the updates attr_updates.cpp's (threads: driver_impl.hpp).
#include "weir/tango/tango_driver.hpp"

#include <fmt/format.h>

#include "driver_impl.hpp"
#include "weir/controls/frame_writer.hpp"
#include "weir/json/json.hpp"

namespace weir::tango {

using core::Result;

namespace detail {

core::Result<void> Driver::open() {
  auto log = controls::open_driver_channels(arena_, options_, options_.attributes, "spectrum", "attribute log");
  if (!log) return tl::make_unexpected(log.error());
  log_.emplace(std::move(*log));
  for (std::size_t i = 0; i < options_.attributes.size(); ++i) {
    auto a = std::make_unique<Attr>();
    a->spec = options_.attributes[i];
    a->index = static_cast<std::uint32_t>(i);
    a->sink = std::make_unique<EventSink>(*this, *a);
    a->meta.pv = a->spec.device + "/" + a->spec.attribute;
    a->meta.key = a->spec.key;
    if (const auto at = a->spec.trl.find("://"); at != std::string::npos)
      a->meta.host = a->spec.trl.substr(at + 3, a->spec.trl.find('/', at + 3) - at - 3);
    const std::string what = "attribute " + a->spec.name;
    if (!a->spec.channel.empty()) {
      auto w = controls::open_writer(arena_, options_.part, what, a->spec.channel);
      if (!w) return tl::make_unexpected(w.error());
      a->writer = std::move(*w);
    } else {
      auto keys = controls::open_item_keys(kv_, options_, a->index, a->spec.key, what, meta_json(a->meta));
      if (!keys) return tl::make_unexpected(keys.error());
      a->keys = std::move(*keys);
    }
    Device* device = nullptr;
    for (auto& d : devices_)
      if (d->trl == a->spec.trl) device = d.get();
    if (device == nullptr) {
      devices_.push_back(std::make_unique<Device>());
      device = devices_.back().get();
      device->trl = a->spec.trl;
    }
    a->device = device;
    device->attrs.push_back(a.get());
    attrs_.push_back(std::move(a));
  }
  for (auto& d : devices_) d->thread = std::thread([this, dev = d.get()] { device_loop(*dev); });
  return {};
}

void Driver::flush(bool all) { log_->flush(queue_, all); }

void Driver::publish_counters() {
  counter_keys_.publish(attrs_.size(), counts_, queue_.dropped() + log_->lost(), log_->blocks());
}

std::size_t Driver::not_connected(std::string& names, std::size_t max) {
  std::size_t count = 0;
  const std::lock_guard lock(mu_);
  for (const auto& a : attrs_)
    if (!a->connected && ++count <= max) names += (names.empty() ? "" : ", ") + a->spec.name;
  return count;
}

void Driver::close() {
  stopping_.store(true);
  {
    const std::lock_guard lock(wake_mu_);
    wake_.notify_all();
  }
  for (auto& d : devices_)
    if (d->thread.joinable()) d->thread.join();
  for (auto& d : devices_) {
    for (Attr* a : d->attrs)
      if (a->event_id >= 0 && d->proxy) try {
          d->proxy->unsubscribe_event(a->event_id);  // no callback after this
        } catch (const ::Tango::DevFailed&) {
        }
    d->proxy.reset();
  }
  if (!log_) return;  // open() failed before anything was written
  flush(true);
  publish_counters();
}

}  // namespace detail

std::string DriverReport::text() const {
  return fmt::format("tango driver: {:.3f} s{}: {} attributes ({} connected, {} polled), {} updates, {} connects, "
                     "{} disconnects, {} dropped, {} truncated, {} log blocks",
                     elapsed_s, stopped ? ", stopped by a signal" : "", attributes, connected, polled, updates, connects,
                     disconnects, dropped, truncated, log_blocks);
}

std::string DriverReport::json() const {
  json::JsonObject o;
  o.real("elapsed_s", elapsed_s)
      .boolean("stopped", stopped)
      .number("attributes", attributes)
      .number("connected", connected)
      .number("polled", polled)
      .number("updates", updates)
      .number("connects", connects)
      .number("disconnects", disconnects)
      .number("dropped", dropped)
      .number("truncated", truncated)
      .number("log_blocks", log_blocks);
  return o.str();
}

Result<DriverReport> run_driver(const core::Arena& arena, const config::Pipeline& /*pipeline*/,
                                const config::DriverDecl& decl, double duration_s, const std::atomic<bool>& stop) {
  auto options = driver_options(decl);
  if (!options) return tl::make_unexpected(options.error());
  if (duration_s > 0) options->duration_s = duration_s;
  DriverReport report;
  {
    detail::Driver driver(arena, *options);
    if (auto ok = driver.open(); !ok) {
      driver.close();
      return tl::make_unexpected(ok.error());
    }
    const controls::LoopEnd end =
        controls::run_driver_loop(*options, options->attributes.size(), "attributes", driver, stop);
    driver.close();
    report.stopped = end.stopped;
    report.elapsed_s = end.elapsed_s;
  }
  report.attributes = options->attributes.size();
  controls::copy_totals(controls::read_totals(arena, options->part), report);
  return report;
}

}  // namespace weir::tango
