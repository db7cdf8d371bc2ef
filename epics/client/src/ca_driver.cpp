// driver "epics": Channel Access monitors into keys, the PV log channel and waveform channels.
// Threads: CA's own (preemptive callbacks, serialised by the CA client library) fill the entry
// queue, write keys and publish waveform frames (ca_callbacks.cpp); the driver's thread (here)
// drains the queue into PV log blocks every flush, publishes the counters and watches the clock.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>

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
  // The channels: made by weir run before its drivers start; made here when this driver runs alone.
  const auto make = [&](const core::ChannelSpec& spec) {
    if (!core::find_channel(arena_, spec.name)) (void)core::create_channel(arena_, spec);
  };
  make(log_channel_spec(options_));
  for (const PvSpec& pv : options_.pvs)
    if (!pv.channel.empty()) make(waveform_channel_spec(pv));
  auto log = core::ChannelWriter::open(arena_, options_.log_channel);
  if (!log)
    return core::fail(log.error().code, fmt::format("driver \"{}\": PV log channel '{}': {}", options_.part,
                                                    options_.log_channel, log.error().what));
  log_ = std::make_unique<core::ChannelWriter>(std::move(*log));
  for (std::size_t i = 0; i < options_.pvs.size(); ++i) {
    auto pv = std::make_unique<Pv>();
    pv->driver = this;
    pv->spec = options_.pvs[i];
    pv->index = static_cast<std::uint32_t>(i);
    if (!pv->spec.channel.empty()) {
      auto w = core::ChannelWriter::open(arena_, pv->spec.channel);
      if (!w)
        return core::fail(w.error().code, fmt::format("driver \"{}\": PV {}: channel '{}': {}", options_.part, pv->spec.pv,
                                                      pv->spec.channel, w.error().what));
      pv->writer = std::make_unique<core::ChannelWriter>(std::move(*w));
    } else {
      pv->meta_key = core::pv_meta_key(options_.log_channel, pv->index);
      PvMeta meta;
      meta.pv = pv->spec.pv;
      meta.key = pv->spec.key;
      if (auto s = kv_.set_text(pv->meta_key, meta_json(meta)); s != core::KvStatus::ok)
        return core::fail(core::Errc::invalid_argument, fmt::format("driver \"{}\": key '{}': {}", options_.part,
                                                                    pv->meta_key, core::kv_status_text(s)));
      if (auto s = kv_.resolve(pv->spec.key, pv->value_key, true); s != core::KvStatus::ok)
        return core::fail(core::Errc::invalid_argument, fmt::format("driver \"{}\": PV {}: key '{}': {}", options_.part,
                                                                    pv->spec.pv, pv->spec.key, core::kv_status_text(s)));
      pv->state_key = pv->spec.key + "_state";
      pv->units_key = pv->spec.key + "_units";
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


// Moves queued entries into PV log blocks: every full block at once, the rest when `all` (the flush).
void Driver::flush(bool all) {
  if (any_dropped_.exchange(false, std::memory_order_acq_rel))
    for (auto& pv : pvs_)
      if (const std::uint32_t n = pv->dropped.exchange(0, std::memory_order_relaxed); n > 0) {
        PvLogEntry e;
        e.time_ns = realtime_ns();
        e.pv = pv->index;
        e.event = static_cast<std::uint8_t>(core::PvEvent::dropped);
        e.type = pv->type_seen.load(std::memory_order_relaxed);
        e.count = n;
        if (!queue_.push(e)) pv->dropped.fetch_add(n, std::memory_order_relaxed), any_dropped_.store(true);
      }
  const std::uint32_t per_block = options_.log_block;
  while (queue_.size() >= per_block || (all && queue_.size() > 0)) {
    std::span<std::byte> out;
    if (log_->claim(out) != core::ClaimStatus::ok) {  // a full lossless reader past its timeout: counted at source
      std::vector<std::byte> discard(std::size_t{per_block} * sizeof(PvLogEntry));
      log_lost_ += queue_.pop(discard.data(), per_block);
      continue;
    }
    const std::uint32_t n = queue_.pop(out.data(), per_block);
    log_->publish(n * core::kPvLogEntryBytes, static_cast<std::uint64_t>(realtime_ns()));
    ++log_blocks_;
  }
}

void Driver::publish_counters() {
  counters_keys_.set(k_pvs_, pvs_.size());
  counters_keys_.set(k_connected_, counters_.connected.load(std::memory_order_relaxed));
  counters_keys_.set(k_updates_, counters_.updates.load(std::memory_order_relaxed));
  counters_keys_.set(k_connects_, counters_.connects.load(std::memory_order_relaxed));
  counters_keys_.set(k_disconnects_, counters_.disconnects.load(std::memory_order_relaxed));
  counters_keys_.set(k_dropped_, counters_.dropped.load(std::memory_order_relaxed) + log_lost_);
  counters_keys_.set(k_truncated_, counters_.truncated.load(std::memory_order_relaxed));
  counters_keys_.set(k_log_blocks_, log_blocks_);
  const std::uint64_t up = counters_.connected.load(std::memory_order_relaxed);
  counters_keys_.publish(up == pvs_.size() ? "connected" : fmt::format("connected {}/{}", up, pvs_.size()));
}

void Driver::run(const std::atomic<bool>& stop, DriverReport& report) {
  using clock = std::chrono::steady_clock;
  const auto started = clock::now();
  const auto flush_every = std::chrono::microseconds(static_cast<std::int64_t>(options_.flush_ms * 1000));
  auto next_flush = started + flush_every;
  auto next_counters = started;
  bool warned = false;
  // The poll: a block fills in log_block updates; at 20,000 updates/s and 256 a block that is 12.8 ms.
  const auto poll = std::min<clock::duration>(flush_every, std::chrono::milliseconds(2));
  while (!stop.load(std::memory_order_relaxed)) {
    const auto now = clock::now();
    if (options_.duration_s > 0 && now - started >= std::chrono::duration<double>(options_.duration_s)) break;
    const bool due = now >= next_flush;
    flush(due);
    if (due) next_flush = now + flush_every;
    if (now >= next_counters) {
      publish_counters();
      next_counters = now + std::chrono::milliseconds(200);
    }
    if (!warned && now - started > std::chrono::duration<double>(options_.connect_timeout_s)) {
      warned = true;
      std::string missing;
      std::size_t count = 0;
      for (const auto& pv : pvs_)
        if (ca_state(pv->channel) != cs_conn) {
          if (++count <= 10) missing += (missing.empty() ? "" : ", ") + pv->spec.pv;
        }
      if (count > 0)
        fmt::print(stderr, "driver \"{}\": {} of {} PVs not connected after {} s (still waiting): {}{}\n", options_.part,
                   count, pvs_.size(), options_.connect_timeout_s, missing, count > 10 ? ", ..." : "");
    }
    std::this_thread::sleep_for(poll);
  }
  report.stopped = stop.load(std::memory_order_relaxed);
  report.elapsed_s = std::chrono::duration<double>(clock::now() - started).count();
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
  driver.run(stop, report);
  driver.close();
  report.pvs = options.pvs.size();
  const auto value = [&](const std::string& field) {
    std::uint64_t bits = 0;
    core::ValueType type{};
    return core::KvStore(arena).get_scalar(options.part + "." + field, bits, type) == core::KvStatus::ok ? bits : 0;
  };
  report.connected = value("pvs_connected");
  report.updates = value("updates");
  report.connects = value("connects");
  report.disconnects = value("disconnects");
  report.dropped = value("dropped");
  report.truncated = value("truncated");
  report.log_blocks = value("log_blocks");
  return report;
}

}  // namespace weir::epics
