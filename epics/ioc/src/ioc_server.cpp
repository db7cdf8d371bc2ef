// epics "serve": run_server() (build the PVs, start the IOC, serve, report), the update thread's loop
// (a cycle at update_hz, a run transition seen between cycles) and the report. The server's other
// jobs, one file each: ioc_server_impl.hpp names them. PV list: epics/ioc/README.md.
#include "weir/epics/ioc_server.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include <epicsExit.h>
#include <fmt/format.h>

#include "ioc_server_impl.hpp"
#include "weir/core/clock.hpp"

namespace weir::epics {

std::string ServeReport::text() const {
  return fmt::format("epics serve: {:.1f} s, {} records, {} updates posted, {} puts accepted, {} refused", elapsed_s,
                     records, updates, puts, refused_puts);
}

std::string ServeReport::json() const {
  return fmt::format(R"({{"elapsed_s":{:.3f},"records":{},"updates":{},"puts":{},"refused_puts":{}}})", elapsed_s,
                     records, updates, puts, refused_puts);
}

namespace detail {

void Server::cycle() {
  const std::int64_t now_rt = core::realtime_ns();
  const std::int64_t now_mono = core::monotonic_ns();
  if (options_.status) update_status(now_rt, now_mono);
  update_keys(now_rt);
  update_channels();
  if (options_.run_control) update_runs(now_rt, false);
}

void Server::serve(double duration_s, const std::atomic<bool>& stop) {
  started_mono_ = core::monotonic_ns();
  const auto period_ns = static_cast<std::int64_t>(std::llround(1e9 / options_.update_hz));
  const auto duration_ns = static_cast<std::int64_t>(duration_s * 1e9);
  if (options_.run_control) {
    update_runs(core::realtime_ns(), true);
    for (Pv* meta : {find("RunTitle"), find("RunOperator"), find("RunSample")})
      if (meta != nullptr) show_lso(*meta, "");
    message("ready", false);
  }
  std::int64_t next = started_mono_;
  while (!stop.load(std::memory_order_relaxed)) {  // relaxed: a flag set by a signal handler
    const std::int64_t now = core::monotonic_ns();
    if (duration_ns > 0 && now - started_mono_ >= duration_ns) break;
    if (now >= next) {
      cycle();
      next += period_ns;
      if (next < now) next = now + period_ns;  // late (a slow cycle): no burst to catch up
      continue;
    }
    const std::int64_t wait_ns = std::min(next - now, kMaxWaitNs);
    if (options_.run_control) {
      if (rc_.wait(run_changes_seen_, wait_ns) != run_changes_seen_) update_runs(core::realtime_ns(), false);
    } else {
      std::this_thread::sleep_for(std::chrono::nanoseconds(wait_ns));
    }
  }
  elapsed_s_ = static_cast<double>(core::monotonic_ns() - started_mono_) / 1e9;
  stop_control();
}

ServeReport Server::report() const {
  ServeReport r;
  r.elapsed_s = elapsed_s_;
  r.records = pvs_.size();
  r.updates = updates_.load(std::memory_order_relaxed);  // relaxed: counters, read after the threads stopped
  r.puts = puts_.load(std::memory_order_relaxed);
  r.refused_puts = refused_.load(std::memory_order_relaxed);
  return r;
}

}  // namespace detail

core::Result<ServeReport> run_server(const core::Arena& arena, const config::Pipeline& pipeline,
                                     const ServeOptions& options, double duration_s, const std::atomic<bool>& stop) {
  static std::atomic<bool> started{false};
  if (started.exchange(true))
    return core::fail(core::Errc::conflict, "epics serve: one server per process (the IOC database is the process's)");
  // The IOC's records point at the server's PVs until the process exits: it is never destroyed.
  auto* server = new detail::Server(arena, pipeline, options);  // NOLINT: lives as long as the process
  if (auto ok = server->build(); !ok) return tl::make_unexpected(ok.error());
  if (auto ok = server->start(); !ok) return tl::make_unexpected(ok.error());
  server->serve(duration_s, stop);
  // EPICS's own exit handlers (the servers' threads, QSRV's and RSRV's sockets) run now, while the
  // objects they use still exist, rather than among the process's static destructors.
  epicsExitCallAtExits();
  return server->report();
}

}  // namespace weir::epics
