#pragma once
// `weir serve` without its command line: one arena over HTTP and WebSocket on one io_context
// thread. The page (a web scope, spectrum and MCA views, a keys table), a JSON API, Prometheus
// /metrics, and one WebSocket per page carrying binary envelope and spectrum frames.
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "weir/core/error.hpp"

namespace weir::serve {

struct ServeOptions {
  std::string where;                    // the arena (a weir::core::Location string)
  std::string bind = "127.0.0.1";       // address to listen on; anything but loopback needs a token
  std::uint16_t port = 8080;            // 0: any free port (the one taken is printed)
  std::string token;                    // "" for none; else every request must present it
  bool allow_set = false;               // POST /api/set writes keys; read-only without it
  bool allow_control = false;           // POST /api/run/start|stop|abort make run transitions (needs a token)
  double frames_per_s = 30;             // WebSocket frames per second per view
  std::vector<std::string> disk_paths;  // directories whose free bytes /metrics reports
  std::vector<std::string> allow_hosts;  // names a request's Host may give besides localhost and IP addresses
  double stale_after_s = 0;             // a channel is stale past this age of its newest block (0: the
                                        // longer of 2 s and 4 of its nominal block periods)
  double wait_for_arena_s = 0;          // wait this long for the arena (and a live creator) to appear
  bool quiet = false;                   // no "listening on" line on stdout
};

/// Checks the options before anything is opened: a port, an address that parses, and a token when
/// the address is not loopback (127.0.0.0/8, ::1) or runs may be controlled (allow_control). The
/// error names the option and says what to do.
/// Thread: any.
[[nodiscard]] core::Result<void> check_options(const ServeOptions& options);

/// Whether `address` is an IPv4 or IPv6 loopback address (a name such as "localhost" is not).
[[nodiscard]] bool is_loopback(std::string_view address);

/// Whether a request's Host header names this server, so that a page served from another name
/// that a rebound DNS entry points here (DNS rebinding) is refused: "localhost", a name given with
/// --allow-host (case-insensitive), or an IP address: the bind address, a loopback address when the
/// server listens on loopback, any address when it listens on all (0.0.0.0, ::). A port is ignored;
/// an empty Host (HTTP/1.0) passes: a browser always sends one. Thread: any.
[[nodiscard]] bool host_allowed(std::string_view host, const ServeOptions& options);

/// The token in a file: its first line without surrounding whitespace. Fails naming the file when
/// it cannot be read or holds no token. Thread: any.
[[nodiscard]] core::Result<std::string> read_token_file(const std::string& path);

/// Serves until `stop` becomes true (polled every 100 ms) and returns. Prints "weir serve:
/// listening on http://ADDR:PORT/" on stdout once accepting (unless quiet). Fails, before serving,
/// when the options are refused, the arena does not open, or the address cannot be bound.
/// Thread: any one thread; it runs the server's io_context itself.
[[nodiscard]] core::Result<void> run_serve(const ServeOptions& options, const std::atomic<bool>& stop);

}  // namespace weir::serve
