// The server: one io_context on the calling thread runs the listener, HTTP sessions, WebSocket
// sessions and a timer that polls the channels being viewed and hands each session its frames.
// Frames are encoded once per view per tick and shared (shared_ptr<const std::string>) by every
// session showing that view; a session still writing keeps only the newest batch (one slot), so a
// slow client costs one batch of memory and never holds up the tick or another client.
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <thread>
#include <utility>  // before Asio: Boost 1.74's awaitable.hpp uses std::exchange without it
#include <vector>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "api.hpp"
#include "channel_feed.hpp"
#include "request_text.hpp"
#include "run_api.hpp"
#include "view_request.hpp"
#include "web_assets.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/channel.hpp"
#include "weir/serve/metrics.hpp"
#include "weir/serve/serve.hpp"

namespace weir::serve {

namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;
using Frame = std::shared_ptr<const std::string>;

constexpr std::size_t kBodyLimit = 64 * 1024;          // POST bodies and WebSocket messages
constexpr auto kHttpTimeout = std::chrono::seconds(30);  // a request must arrive within this
constexpr auto kStopPoll = std::chrono::milliseconds(100);
constexpr auto kArenaPoll = std::chrono::milliseconds(50);
constexpr auto kArenaCheck = std::chrono::seconds(1);  // how often a replaced arena is looked for
constexpr std::int64_t kReopenReadyNs = 50'000'000;    // a new arena's creator gets this long per try
constexpr auto kFeedLinger = std::chrono::seconds(60);  // a feed no view wants is kept this long (its history)
constexpr const char* kCsp =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

// ---- request helpers -----------------------------------------------------------------------

std::string_view sv(beast::string_view v) { return {v.data(), v.size()}; }
beast::string_view bsv(std::string_view v) { return {v.data(), v.size()}; }

// The token a request presents: Authorization: Bearer T, X-Weir-Token: T, ?token=T or the cookie.
bool presents_token(const Request& req, const Target& t, const std::string& token) {
  if (token.empty()) return true;
  const std::string_view auth = sv(req[http::field::authorization]);
  if (auth.size() > 7 && auth.substr(0, 7) == "Bearer " && same_secret(auth.substr(7), token)) return true;
  if (same_secret(sv(req["X-Weir-Token"]), token)) return true;
  if (auto it = t.query.find("token"); it != t.query.end() && same_secret(it->second, token)) return true;
  return same_secret(cookie_value(sv(req[http::field::cookie]), "weir_token"), token);
}

// A browser's Origin must be this server (cross-site pages may not drive the WebSocket or POST).
bool origin_allowed(const Request& req) {
  const std::string_view origin = sv(req[http::field::origin]);
  if (origin.empty()) return true;  // not a browser: the token (if any) decides
  const auto scheme = origin.find("://");
  return scheme != std::string_view::npos && origin.substr(scheme + 3) == sv(req[http::field::host]);
}

// ---- the hub: arena, feeds, sessions --------------------------------------------------------

class WsSession;

class Hub {
 public:
  Hub(net::io_context& io, core::Arena&& arena, const ServeOptions& options)
      : io_(io), arena_(std::move(arena)), options_(options), api_(arena_, options.stale_after_s), timer_(io) {}

  void start_ticks() { tick(); }
  void add(const std::shared_ptr<WsSession>& s) { sessions_.push_back(s); }
  [[nodiscard]] ServerCounters& counters() noexcept { return counters_; }
  [[nodiscard]] const ServeOptions& options() const noexcept { return options_; }
  [[nodiscard]] Api& api() noexcept { return api_; }
  [[nodiscard]] const core::Arena& arena() const noexcept { return arena_; }
  [[nodiscard]] std::uint32_t channel_count() const noexcept { return arena_.geometry().channel_capacity; }
  void on_stop(std::function<void()> fn) { stop_ = std::move(fn); }
  /// Runs `job` on the control thread (a run transition may wait seconds for a lock or the
  /// recorders), then `done` with its answer on the I/O thread. Jobs run one at a time, in order; the
  /// arena is not replaced while one is queued or running. Thread: the I/O thread.
  void control(std::function<RunAnswer(const core::Arena&)> job, std::function<void(RunAnswer)> done) {
    ++controlling_;
    net::post(control_thread_, [this, job = std::move(job), done = std::move(done)]() mutable {
      RunAnswer answer;
      try {
        answer = job(arena_);
      } catch (const std::exception& e) {  // nothing may leave the pool's thread
        answer = run_error(500, e.what());
      }
      net::post(io_, [this, answer = std::move(answer), done = std::move(done)]() mutable {
        --controlling_;
        done(std::move(answer));
      });
    });
  }

 private:
  void tick();
  void reattach_if_replaced(std::chrono::steady_clock::time_point now);
  net::io_context& io_;
  core::Arena arena_;  // moved onto when the arena is replaced: Api and feeds point at this object
  const ServeOptions& options_;
  Api api_;
  net::steady_timer timer_;
  std::vector<std::weak_ptr<WsSession>> sessions_;
  struct Fed {
    ChannelFeed feed;
    std::chrono::steady_clock::time_point wanted;  // last tick a view wanted it
  };
  std::map<std::uint32_t, Fed> feeds_;
  ServerCounters counters_;
  std::function<void()> stop_;
  std::chrono::steady_clock::time_point next_tick_{};
  std::chrono::steady_clock::time_point next_arena_check_{};
  int controlling_ = 0;                  // control jobs queued or running (I/O thread only)
  net::thread_pool control_thread_{1};   // last: joined before anything a job uses goes away
};

class WsSession : public std::enable_shared_from_this<WsSession> {
 public:
  WsSession(tcp::socket&& socket, Hub& hub) : ws_(std::move(socket)), hub_(hub) {}

  void start(Request req) {
    websocket::stream_base::timeout t = websocket::stream_base::timeout::suggested(beast::role_type::server);
    t.idle_timeout = std::chrono::seconds(60);  // a peer that answers no ping for a minute is gone
    t.keep_alive_pings = true;
    ws_.set_option(t);
    ws_.read_message_max(kBodyLimit);
    ws_.binary(true);
    ws_.set_option(websocket::stream_base::decorator(
        [](websocket::response_type& res) { res.set(http::field::server, "weir"); }));
    ws_.async_accept(req, [self = shared_from_this()](beast::error_code ec) { self->on_accept(ec); });
  }

  /// The newest frames for this session's views; replaces a batch still waiting (one slot).
  void offer(std::vector<Frame> batch) {
    if (!accepted_ || closed_ || batch.empty()) return;
    if (writing_) {
      if (!pending_.empty()) hub_.counters().frames_replaced += pending_.size();
      pending_ = std::move(batch);
      return;
    }
    current_ = std::move(batch);
    write_at_ = 0;
    write_next();
  }
  /// This tick's views: named channels resolved by `index_of` (views of a name not there are left out).
  template <class IndexOf>
  const std::vector<View>& resolve(IndexOf&& index_of) {
    views_.clear();
    for (const ViewAsk& a : asks_) {
      View v = a.view;
      if (!a.name.empty()) {
        const std::optional<std::uint32_t> index = index_of(a.name);
        if (!index) continue;
        v.channel = *index;
      }
      views_.push_back(v);
    }
    return views_;
  }
  [[nodiscard]] const std::vector<View>& views() const noexcept { return views_; }
  void close() {
    closed_ = true;
    beast::error_code ignored;
    beast::get_lowest_layer(ws_).socket().close(ignored);
  }

 private:
  void on_accept(beast::error_code ec) {
    if (ec) return;
    accepted_ = true;
    hub_.add(shared_from_this());
    read();
  }
  void read() {
    ws_.async_read(in_, [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
  }
  void on_read(beast::error_code ec) {
    if (ec) {
      closed_ = true;
      return;
    }
    const std::string text = beast::buffers_to_string(in_.data());
    in_.consume(in_.size());
    apply(text);
    read();
  }
  // {"views": [...]} (view_request.hpp); any other message is ignored.
  void apply(const std::string& text) {
    bool ok = false;
    std::vector<ViewAsk> asks = parse_views(text, hub_.channel_count(), ok);
    if (ok) asks_ = std::move(asks);
  }
  void write_next() {
    writing_ = true;
    const Frame& f = current_[write_at_];
    ws_.async_write(net::buffer(f->data(), f->size()),
                    [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_write(ec); });
  }
  void on_write(beast::error_code ec) {
    writing_ = false;
    if (ec) {
      closed_ = true;
      current_.clear();
      pending_.clear();
      return;
    }
    ++hub_.counters().frames_sent;
    if (++write_at_ < current_.size()) return write_next();
    current_.clear();
    if (!pending_.empty()) {
      current_ = std::move(pending_);
      pending_.clear();
      write_at_ = 0;
      write_next();
    }
  }

  websocket::stream<beast::tcp_stream> ws_;
  Hub& hub_;
  beast::flat_buffer in_;
  std::vector<ViewAsk> asks_;
  std::vector<View> views_;  // asks_ resolved at the last tick
  std::vector<Frame> current_;  // the batch being written, frame by frame
  std::size_t write_at_ = 0;
  std::vector<Frame> pending_;  // one slot: the newest batch, replaced while a write is in flight
  bool writing_ = false;
  bool accepted_ = false;
  bool closed_ = false;
};

// A name recreated (`weir run --replace`, `weir rm` and `weir create`) is a new file under the same
// path: when the path no longer leads to the mapped inode, the new arena is opened and the feeds of
// the old one dropped. Until the new one opens (its creator may still be at work) the old one stays.
void Hub::reattach_if_replaced(std::chrono::steady_clock::time_point now) {
  if (now < next_arena_check_ || arena_.location().path.empty() || arena_.fd() < 0 || controlling_ > 0) return;
  next_arena_check_ = now + kArenaCheck;
  struct stat named{}, mapped{};
  if (::stat(arena_.location().path.c_str(), &named) != 0 || ::fstat(arena_.fd(), &mapped) != 0) return;
  if (named.st_ino == mapped.st_ino && named.st_dev == mapped.st_dev) return;
  core::OpenOptions open;
  open.read_only = !options_.allow_set && !options_.allow_control;
  open.ready_timeout_ns = kReopenReadyNs;
  auto fresh = core::Arena::open(options_.where, open);
  if (!fresh) return;  // not ready yet: the next check tries again
  feeds_.clear();      // they point into the old mapping
  arena_ = std::move(*fresh);
}

void Hub::tick() {
  reattach_if_replaced(std::chrono::steady_clock::now());
  std::vector<std::shared_ptr<WsSession>> live;
  live.reserve(sessions_.size());
  for (const auto& w : sessions_)
    if (auto s = w.lock()) live.push_back(std::move(s));
  std::erase_if(sessions_, [](const std::weak_ptr<WsSession>& w) { return w.expired(); });
  counters_.ws_clients = live.size();
  const auto index_of = [this](const std::string& name) -> std::optional<std::uint32_t> {
    auto found = core::find_channel(arena_, name);  // a scan of the channel table, by name
    return found ? std::optional<std::uint32_t>(*found) : std::nullopt;
  };
  std::set<std::uint32_t> wanted;
  for (const auto& s : live)
    for (const View& v : s->resolve(index_of)) wanted.insert(v.channel);
  // A feed keeps its history a while after its last view, so switching views back and forth finds it.
  const auto now = std::chrono::steady_clock::now();
  std::erase_if(feeds_, [&](const auto& kv) { return wanted.count(kv.first) == 0 && now - kv.second.wanted > kFeedLinger; });
  for (const std::uint32_t c : wanted) {
    auto it = feeds_.find(c);
    if (it == feeds_.end()) {
      auto feed = ChannelFeed::open(arena_, c);
      if (!feed) continue;  // not a ready channel (yet): views of it get no frames
      it = feeds_.emplace(c, Fed{std::move(*feed), now}).first;
    }
    it->second.wanted = now;
  }
  for (auto& [c, fed] : feeds_) fed.feed.poll();
  std::map<View, Frame> encoded;  // one frame per view per tick, shared by every session on it
  for (const auto& s : live) {
    std::vector<Frame> batch;
    for (const View& v : s->views()) {
      auto feed = feeds_.find(v.channel);
      if (feed == feeds_.end()) continue;
      auto [it, fresh] = encoded.try_emplace(v);
      if (fresh) {
        it->second = std::make_shared<const std::string>(feed->second.feed.frame(v));
        ++counters_.frames_encoded;
      }
      batch.push_back(it->second);
    }
    s->offer(std::move(batch));
  }
  if (stop_) stop_();
  // Absolute deadlines, so the frame rate does not drift by each tick's own work.
  const auto period = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(1.0 / options_.frames_per_s));
  next_tick_ = next_tick_ + period < now ? now : next_tick_ + period;
  timer_.expires_at(next_tick_);
  timer_.async_wait([this](beast::error_code ec) {
    if (!ec) tick();
  });
}

// ---- HTTP ----------------------------------------------------------------------------------

class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(tcp::socket&& socket, Hub& hub) : stream_(std::move(socket)), hub_(hub) {}
  void start() { read(); }

 private:
  void read() {
    parser_.emplace();
    parser_->body_limit(kBodyLimit);
    stream_.expires_after(kHttpTimeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
  }
  void on_read(beast::error_code ec) {
    if (ec) {
      beast::error_code ignored;
      stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
      return;
    }
    Request req = parser_->release();
    ++hub_.counters().http_requests;
    const Target target = parse_target(sv(req.target()));
    if (!host_allowed(sv(req[http::field::host]), hub_.options()))
      return send(error(req, http::status::misdirected_request,
                        "Host '" + std::string(sv(req[http::field::host])) +
                            "' does not name this server; start weir serve with --allow-host NAME if it should\n"));
    if (websocket::is_upgrade(req)) {
      if (target.path != "/ws") return send(error(req, http::status::not_found, "no WebSocket here; use /ws\n"));
      if (!presents_token(req, target, hub_.options().token))
        return send(error(req, http::status::unauthorized, "a token is needed\n"));
      if (!origin_allowed(req)) return send(error(req, http::status::forbidden, "cross-origin WebSocket refused\n"));
      stream_.expires_never();
      std::make_shared<WsSession>(stream_.release_socket(), hub_)->start(std::move(req));
      return;
    }
    if (target.path.starts_with("/api/run/")) return control(std::move(req), target);
    send(handle(req, target));
  }
  // POST /api/run/start|stop|abort: checked here, done on the hub's control thread, answered then.
  void control(Request req, const Target& t) {
    const ServeOptions& o = hub_.options();
    if (!presents_token(req, t, o.token)) return send(error(req, http::status::unauthorized, "a token is needed\n"));
    const auto refuse = [&](unsigned status, std::string_view why) {
      send(json(req, run_error(status, why).body, static_cast<http::status>(status)));
    };
    const std::string verb = t.path.substr(std::string_view("/api/run/").size());
    if (verb != "start" && verb != "stop" && verb != "abort")
      return refuse(404, fmt::format("no such page: {} (POST /api/run/start, /api/run/stop or /api/run/abort)", t.path));
    if (req.method() != http::verb::post) return refuse(405, "POST only");
    if (!o.allow_control)
      return refuse(403, "run control is not allowed: start weir serve with --allow-control and a token (--token or "
                         "--token-file), or weir run with --serve-allow-control and --serve-token-file");
    if (!origin_allowed(req)) return refuse(403, "cross-origin POST refused");
    if (!req.body().empty() && sv(req[http::field::content_type]).substr(0, 16) != "application/json")
      return refuse(415, "send application/json");
    const core::RunEnd how = verb == "abort" ? core::RunEnd::aborted : core::RunEnd::stopped;
    auto job = [start = verb == "start", how, body = req.body()](const core::Arena& arena) {
      return start ? run_start(arena, body) : run_stop(arena, how, body);
    };
    hub_.control(std::move(job),  // made before req moves into the answer's lambda
                 [self = shared_from_this(), req = std::move(req)](RunAnswer a) {
                   self->stream_.expires_after(kHttpTimeout);  // the read's deadline may have passed meanwhile
                   self->send(json(req, std::move(a.body), static_cast<http::status>(a.status)));
                 });
  }
  void send(Response res) {
    auto shared = std::make_shared<Response>(std::move(res));
    http::async_write(stream_, *shared, [self = shared_from_this(), shared](beast::error_code ec, std::size_t) {
      if (ec || !shared->keep_alive()) {
        beast::error_code ignored;
        self->stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
        return;
      }
      self->read();
    });
  }

  static Response respond(const Request& req, http::status status, std::string_view type, std::string body) {
    Response res{status, req.version()};
    res.set(http::field::server, "weir");
    res.set(http::field::content_type, bsv(type));
    res.set(http::field::cache_control, "no-store");
    res.set("Content-Security-Policy", kCsp);
    res.set("X-Content-Type-Options", "nosniff");
    res.set("Referrer-Policy", "no-referrer");
    res.keep_alive(req.keep_alive());
    res.body() = req.method() == http::verb::head ? std::string{} : std::move(body);
    res.prepare_payload();
    if (req.method() == http::verb::head) res.content_length(0);
    return res;
  }
  static Response error(const Request& req, http::status status, std::string text) {
    Response res = respond(req, status, "text/plain; charset=utf-8", std::move(text));
    if (status == http::status::unauthorized) res.set(http::field::www_authenticate, "Bearer realm=\"weir\"");
    return res;
  }
  static Response json(const Request& req, std::string body, http::status status = http::status::ok) {
    return respond(req, status, "application/json", std::move(body) + "\n");
  }

  Response handle(const Request& req, const Target& t) {
    const ServeOptions& o = hub_.options();
    if (!presents_token(req, t, o.token)) return error(req, http::status::unauthorized, "a token is needed: ?token=T, a Bearer header or the weir_token cookie\n");
    const bool get = req.method() == http::verb::get || req.method() == http::verb::head;
    if (t.path == "/api/set") {
      if (req.method() != http::verb::post) return error(req, http::status::method_not_allowed, "POST only\n");
      if (!o.allow_set) return error(req, http::status::forbidden, "read-only: start weir serve with --allow-set to write keys\n");
      if (!origin_allowed(req)) return error(req, http::status::forbidden, "cross-origin POST refused\n");
      if (sv(req[http::field::content_type]).substr(0, 16) != "application/json")
        return error(req, http::status::unsupported_media_type, "send application/json\n");
      auto done = hub_.api().set(req.body());
      if (!done) return error(req, http::status::bad_request, done.error().what + "\n");
      return json(req, *done);
    }
    if (!get) return error(req, http::status::method_not_allowed, "GET only\n");
    if (t.path == "/metrics")
      return respond(req, http::status::ok, "text/plain; version=0.0.4; charset=utf-8",
                     prometheus_text(hub_.arena(), o.disk_paths, &hub_.counters()));
    if (t.path == "/api/arena") return json(req, hub_.api().arena());
    if (t.path == "/api/channels") return json(req, hub_.api().channels());
    if (t.path == "/api/keys") return json(req, hub_.api().keys());
    if (t.path == "/api/mca") return json(req, hub_.api().mca());
    if (t.path == "/api/run") return json(req, run_status_json(hub_.arena()));
    if (t.path == "/api/server")
      return json(req, fmt::format(R"({{"allow_set":{},"allow_control":{},"frames_per_s":{},"token":{}}})",
                                   o.allow_set, o.allow_control, o.frames_per_s, !o.token.empty()));
    if (t.path == "/api/key") {
      const auto name = t.query.find("name");
      if (name == t.query.end()) return error(req, http::status::bad_request, "give ?name=KEY\n");
      auto value = hub_.api().key(name->second);
      if (!value) return error(req, http::status::not_found, value.error().what + "\n");
      return json(req, *value);
    }
    const std::string path = t.path == "/" ? "/index.html" : t.path;
    for (const WebAsset& a : web_assets()) {
      if (a.path != path) continue;
      Response res = respond(req, http::status::ok, a.content_type, std::string(a.body));
      // The page's own requests then carry the cookie; only the right token is echoed into a header.
      if (const auto q = t.query.find("token"); !o.token.empty() && q != t.query.end() && same_secret(q->second, o.token))
        res.set(http::field::set_cookie, "weir_token=" + o.token + "; HttpOnly; SameSite=Strict; Path=/");
      return res;
    }
    return error(req, http::status::not_found, fmt::format("no such page: {}\n", t.path));
  }

  beast::tcp_stream stream_;
  Hub& hub_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
};

void accept(tcp::acceptor& acceptor, Hub& hub) {
  acceptor.async_accept([&acceptor, &hub](beast::error_code ec, tcp::socket socket) {
    if (!ec) std::make_shared<HttpSession>(std::move(socket), hub)->start();
    if (acceptor.is_open()) accept(acceptor, hub);
  });
}

core::Result<core::Arena> open_arena(const ServeOptions& o, const std::atomic<bool>& stop) {
  core::OpenOptions open;
  open.read_only = !o.allow_set && !o.allow_control;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(o.wait_for_arena_s);
  for (;;) {
    auto arena = core::Arena::open(o.where, open);
    // Waiting for a pipeline's arena: a stale one of the same name (dead creator) is not it yet.
    if (arena && (o.wait_for_arena_s <= 0 || core::pid_alive(arena->header().creator_pid))) return arena;
    if (std::chrono::steady_clock::now() >= deadline || stop.load(std::memory_order_relaxed)) {
      if (!arena) return tl::make_unexpected(arena.error());
      return core::fail(core::Errc::not_found, fmt::format("serve: {} has no live creator", arena->location().describe()));
    }
    std::this_thread::sleep_for(kArenaPoll);
  }
}

}  // namespace

core::Result<void> run_serve(const ServeOptions& options, const std::atomic<bool>& stop) {
  if (auto ok = check_options(options); !ok) return ok;
  auto arena = open_arena(options, stop);
  if (!arena) return tl::make_unexpected(arena.error());

  net::io_context io{1};
  tcp::acceptor acceptor(io);
  beast::error_code ec;
  const tcp::endpoint endpoint(net::ip::make_address(options.bind, ec), options.port);
  if (!ec) acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec)
    return core::fail(core::Errc::io_error,
                      fmt::format("serve: cannot listen on {}:{}: {}", options.bind, options.port, ec.message()));
  const std::uint16_t port = acceptor.local_endpoint().port();

  const std::string described = arena->location().describe();
  Hub hub(io, std::move(*arena), options);
  auto next_check = std::chrono::steady_clock::now();
  hub.on_stop([&] {
    const auto now = std::chrono::steady_clock::now();
    if (now < next_check) return;
    next_check = now + kStopPoll;
    if (stop.load(std::memory_order_relaxed)) io.stop();
  });
  accept(acceptor, hub);
  hub.start_ticks();
  if (!options.quiet) {
    const bool v6 = endpoint.address().is_v6();
    std::printf("weir serve: listening on http://%s%s%s:%u/ (%s%s%s)\n", v6 ? "[" : "", options.bind.c_str(),
                v6 ? "]" : "", port, described.c_str(), options.allow_set ? ", keys writable" : "",
                options.allow_control ? ", runs controllable" : "");
    std::fflush(stdout);
  }
  io.run();
  return {};
}

}  // namespace weir::serve
