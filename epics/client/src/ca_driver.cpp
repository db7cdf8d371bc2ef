// driver "epics": Channel Access monitors into keys, the PV log channel and waveform channels.
// Threads: CA's own (preemptive callbacks, serialised by the CA client library) fill the entry
// queue, write keys and publish waveform frames (ca_callbacks.cpp); the driver's thread
// (controls::run_driver_loop) drains the queue into PV log blocks every flush, publishes the
// counters and watches the clock.
#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "driver_impl.hpp"
#include "pv_meta.hpp"
#include "weir/json/json.hpp"

namespace weir::epics {

namespace detail {

// EPICS's client settings: the pipeline's (ca = {...}) over the environment's; a waveform larger
// than CA's 16 kB default raises EPICS_CA_MAX_ARRAY_BYTES unless someone set it.
void apply_ca_env(const DriverOptions& o) {
  for (const auto& [name, value] : o.ca.env) setenv(name.c_str(), value.c_str(), 1);
  std::uint64_t largest = 0;
  for (const PvSpec& pv : o.pvs) largest = std::max<std::uint64_t>(largest, std::uint64_t{pv.elements} * 8 + 4096);
  if (largest > 16384 && std::getenv("EPICS_CA_MAX_ARRAY_BYTES") == nullptr)
    setenv("EPICS_CA_MAX_ARRAY_BYTES", std::to_string(largest).c_str(), 1);
}

Result<void> Driver::open() {
  auto log = controls::open_driver_channels(arena_, options_, options_.pvs, "waveform", "PV log");
  if (!log) return tl::make_unexpected(log.error());
  log_.emplace(std::move(*log));
  for (std::size_t i = 0; i < options_.pvs.size(); ++i) {
    auto pv = std::make_unique<Pv>();
    pv->driver = this;
    pv->spec = options_.pvs[i];
    pv->index = static_cast<std::uint32_t>(i);
    const std::string what = "PV " + pv->spec.pv;
    if (!pv->spec.channel.empty()) {
      auto w = controls::open_writer(arena_, options_.part, what, pv->spec.channel);
      if (!w) return tl::make_unexpected(w.error());
      pv->writer = std::move(*w);
    } else {
      PvMeta meta;
      meta.pv = pv->spec.pv;
      meta.key = pv->spec.key;
      auto keys = controls::open_item_keys(kv_, options_, pv->index, pv->spec.key, what, meta_json(meta));
      if (!keys) return tl::make_unexpected(keys.error());
      pv->keys = std::move(*keys);
    }
    pvs_.push_back(std::move(pv));
  }
  apply_ca_env(options_);
  if (const int s = ca_context_create(ca_enable_preemptive_callback); s != ECA_NORMAL)
    return core::fail(core::Errc::io_error, fmt::format("driver \"{}\": Channel Access: {}", options_.part, ca_message(s)));
  context_ = ca_current_context();
  for (auto& pv : pvs_)
    if (const int s = ca_create_channel(pv->spec.pv.c_str(), &connection_cb, pv.get(), CA_PRIORITY_DEFAULT, &pv->channel);
        s != ECA_NORMAL)
      return core::fail(core::Errc::invalid_argument,
                        fmt::format("driver \"{}\": PV {}: {}", options_.part, pv->spec.pv, ca_message(s)));
  ca_flush_io();
  return {};
}


void Driver::flush(bool all) { log_->flush(queue_, all); }

void Driver::publish_counters() { counter_keys_.publish(pvs_.size(), counts_, queue_.dropped() + log_->lost(), log_->blocks()); }

std::size_t Driver::not_connected(std::string& names, std::size_t max) {
  std::size_t count = 0;
  for (const auto& pv : pvs_)
    if (ca_state(pv->channel) != cs_conn && ++count <= max) names += (names.empty() ? "" : ", ") + pv->spec.pv;
  return count;
}

void Driver::close() {
  if (context_ != nullptr) {
    ca_attach_context(context_);
    for (auto& pv : pvs_)
      if (pv->channel != nullptr) ca_clear_channel(pv->channel);  // clears its subscription: no callback after this
    ca_flush_io();
    ca_context_destroy();
    context_ = nullptr;
  }
  if (!log_) return;  // open() failed before anything was written
  flush(true);
  publish_counters();
}


}  // namespace detail

using core::Result;


std::string DriverReport::text() const {
  return fmt::format("epics driver: {:.3f} s{}: {} PVs ({} connected), {} updates, {} connects, {} disconnects, {} dropped, "
                     "{} truncated, {} log blocks",
                     elapsed_s, stopped ? ", stopped by a signal" : "", pvs, connected, updates, connects, disconnects,
                     dropped, truncated, log_blocks);
}

std::string DriverReport::json() const {
  json::JsonObject o;
  o.real("elapsed_s", elapsed_s)
      .boolean("stopped", stopped)
      .number("pvs", pvs)
      .number("connected", connected)
      .number("updates", updates)
      .number("connects", connects)
      .number("disconnects", disconnects)
      .number("dropped", dropped)
      .number("truncated", truncated)
      .number("log_blocks", log_blocks);
  return o.str();
}

Result<DriverReport> run_driver(const core::Arena& arena, const DriverOptions& options, const std::atomic<bool>& stop) {
  detail::Driver driver(arena, options);
  DriverReport report;
  if (auto ok = driver.open(); !ok) {
    driver.close();
    return tl::make_unexpected(ok.error());
  }
  const controls::LoopEnd end = controls::run_driver_loop(options, options.pvs.size(), "PVs", driver, stop);
  driver.close();
  report.stopped = end.stopped;
  report.elapsed_s = end.elapsed_s;
  report.pvs = options.pvs.size();
  controls::copy_totals(controls::read_totals(arena, options.part), report);
  return report;
}

}  // namespace weir::epics
