// tango "serve": run_server() (read the options, make the attributes, start Tango's device server with an
// argv built from the pipeline, serve, report), the update thread's loop (a cycle at update_hz under the
// device's monitor, a run transition seen between cycles) and the report. Attribute list:
// tango/server/README.md.
#include "weir/tango/tango_server.hpp"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "server_impl.hpp"
#include "weir/core/clock.hpp"

// Tango's device server asks the program for its classes.
void Tango::DServer::class_factory() { add_class(weir::tango::detail::make_class()); }

namespace weir::tango {

std::string ServeReport::text() const {
  return fmt::format("tango serve: {:.1f} s, {} attributes, {} events pushed, {} commands and writes, {} refused", elapsed_s,
                     attributes, events_pushed, commands, refused);
}

std::string ServeReport::json() const {
  return fmt::format(R"({{"elapsed_s":{:.3f},"attributes":{},"events_pushed":{},"commands":{},"refused":{}}})", elapsed_s,
                     attributes, events_pushed, commands, refused);
}

namespace detail {

namespace {

constexpr std::int64_t kLongestWaitNs = 100'000'000;  // every wait looks at the stop flag this often

}  // namespace

void Server::cycle() {
  const std::int64_t now_mono = core::monotonic_ns();
  gettimeofday(&now_, nullptr);
  if (options_.run_control) update_runs(false);
  if (options_.status) update_status(now_mono);
  update_keys();
  update_channels();
  update_spectra();
  update_state(now_mono);
}

void Server::serve(double duration_s, const std::atomic<bool>& stop, const std::atomic<bool>& orb_done) {
  started_mono_ = core::monotonic_ns();
  const auto period_ns = static_cast<std::int64_t>(std::llround(1e9 / options_.update_hz));
  const auto duration_ns = static_cast<std::int64_t>(duration_s * 1e9);
  if (options_.run_control) {
    const DeviceLock lock(device_);
    gettimeofday(&now_, nullptr);
    update_runs(true);
    message("ready");
  }
  std::int64_t next = started_mono_;
  // relaxed: flags set by a signal handler and by the thread running the ORB, looked at every wait
  while (!stop.load(std::memory_order_relaxed) && !orb_done.load(std::memory_order_relaxed)) {
    const std::int64_t now = core::monotonic_ns();
    if (duration_ns > 0 && now - started_mono_ >= duration_ns) break;
    if (now >= next) {
      {
        const DeviceLock lock(device_);
        cycle();
      }
      next += period_ns;
      if (next < now) next = now + period_ns;  // late (a slow cycle): no burst to catch up
      continue;
    }
    const std::int64_t wait_ns = std::min(next - now, kLongestWaitNs);
    if (options_.run_control) {
      if (rc_.wait(run_changes_seen_, wait_ns) != run_changes_seen_) {
        const DeviceLock lock(device_);
        gettimeofday(&now_, nullptr);
        update_runs(false);
      }
    } else {
      std::this_thread::sleep_for(std::chrono::nanoseconds(wait_ns));
    }
  }
  elapsed_s_ = static_cast<double>(core::monotonic_ns() - started_mono_) / 1e9;
}

ServeReport Server::report() const {
  ServeReport r;
  r.elapsed_s = elapsed_s_;
  r.attributes = values_.size();
  r.events_pushed = pushed_.load(std::memory_order_relaxed);  // relaxed: counters, read after the threads stopped
  r.commands = commands_.load(std::memory_order_relaxed) + writes_.load(std::memory_order_relaxed);
  r.refused = refused_.load(std::memory_order_relaxed);
  return r;
}

}  // namespace detail

namespace {

// Tango's command line for the options: `weir-tango INSTANCE [-nodb -dlist DEV | -file=PATH]
// [-ORBendPoint giop:tcp:HOST:PORT]`.
core::Result<std::vector<std::string>> tango_args(const ServeOptions& o, std::string& file_db) {
  std::vector<std::string> args{detail::kServerName, o.instance};
  switch (o.database) {
    case TangoDatabase::none:
      args.insert(args.end(), {"-nodb", "-dlist", o.device});
      break;
    case TangoDatabase::file: {
      file_db = o.file;
      if (file_db.empty()) {
        std::error_code ec;
        const auto dir = std::filesystem::temp_directory_path(ec);
        if (ec) return core::fail(core::Errc::io_error, fmt::format("tango \"{}\": no temporary directory: {}", o.part, ec.message()));
        file_db = (dir / fmt::format("weir-tango-{}-{}.db", o.instance, ::getpid())).string();
      }
      std::ofstream out(file_db, std::ios::trunc);
      out << fmt::format("{}/{}/DEVICE/{}: \"{}\"\n", detail::kServerName, o.instance, detail::kClassName, o.device);
      if (!out.flush())
        return core::fail(core::Errc::io_error, fmt::format("tango \"{}\": cannot write the file database {}", o.part, file_db));
      args.push_back("-file=" + file_db);
      break;
    }
    case TangoDatabase::tango: break;
  }
  if (o.port != 0 || !o.host.empty()) args.insert(args.end(), {"-ORBendPoint", fmt::format("giop:tcp:{}:{}", o.host, o.port == 0 ? std::string() : std::to_string(o.port))});
  return args;
}

std::string what_of(const Tango::DevFailed& e) {
  std::string out;
  for (CORBA::ULong i = 0; i < e.errors.length(); ++i)
    out += fmt::format("{}{}: {}", i == 0 ? "" : "; ", e.errors[i].reason.in(), e.errors[i].desc.in());
  return out;
}

}  // namespace

core::Result<ServeReport> run_server(const core::Arena& arena, const config::Pipeline& pipeline,
                                     const config::TangoDecl& decl, double duration_s, const std::atomic<bool>& stop) {
  static std::atomic<bool> started{false};
  if (started.exchange(true))
    return core::fail(core::Errc::conflict, "tango serve: one server per process (Tango's Util is the process's)");
  auto options = serve_options(pipeline, decl);
  if (!options) return tl::make_unexpected(options.error());
  // Tango keeps the classes, devices and attributes until the process exits, and they call the server.
  auto* server = new detail::Server(arena, pipeline, *options);  // NOLINT: lives as long as the process
  if (auto ok = server->build(); !ok) return tl::make_unexpected(ok.error());
  detail::current_server() = server;
  std::string file_db;
  auto args = tango_args(*options, file_db);
  if (!args) return tl::make_unexpected(args.error());
  std::vector<char*> argv;
  for (std::string& a : *args) argv.push_back(a.data());
  argv.push_back(nullptr);
  Tango::Util* tg = nullptr;
  try {
    tg = Tango::Util::init(static_cast<int>(args->size()), argv.data());
    if (options->database != TangoDatabase::tango) (void)detail::match_nodb_heartbeat();
    tg->server_init();
  } catch (const Tango::DevFailed& e) {
    return core::fail(core::Errc::io_error, fmt::format("tango \"{}\": device {}: {}", options->part, options->device, what_of(e)));
  } catch (const CORBA::Exception& e) {
    return core::fail(core::Errc::io_error, fmt::format("tango \"{}\": CORBA: {}", options->part, e._name()));
  }
  if (!server->attached())
    return core::fail(core::Errc::invalid_argument, fmt::format("tango \"{}\": Tango made no device {}", options->part, options->device));
  std::atomic<bool> orb_done{false};
  std::thread update([&] {
    const omni_thread::ensure_self as_omni_thread;  // Tango's monitors know their owners as omni threads
    server->serve(duration_s, stop, orb_done);
    if (orb_done.load()) return;
    try {
      tg->get_dserver_device()->kill();  // Tango's own shutdown: devices deleted, then the ORB's
    } catch (const Tango::DevFailed&) {
      tg->get_orb()->shutdown(false);
    }
  });
  try {
    tg->server_run();
  } catch (const Tango::DevFailed& e) {
    fmt::print(stderr, "tango \"{}\": {}\n", options->part, what_of(e));
  } catch (const CORBA::Exception& e) {
    fmt::print(stderr, "tango \"{}\": CORBA: {}\n", options->part, e._name());
  }
  orb_done.store(true);
  update.join();
  if (!file_db.empty() && options->file.empty()) std::filesystem::remove(file_db);
  return server->report();
}

}  // namespace weir::tango
