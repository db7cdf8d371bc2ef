// The instrument loop: connect (with back-off), init, then queries on their periods and forwarded
// keys between them, every wait bounded. One thread; the instrument's trouble is counted, never fatal.
#include "weir/instrument/instrument_driver.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "weir/core/channel.hpp"
#include "query_channel.hpp"
#include "weir/core/clock.hpp"
#include "weir/core/gap_reason.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/instrument/command_format.hpp"

namespace weir::acq {

namespace {

constexpr std::size_t kCommandBytes = 512;  // longest forwarded command

std::int64_t to_ns(double seconds) { return std::llround(seconds * 1e9); }

// '*' any run, '?' one character: an init step's expected reply.
bool glob(std::string_view pattern, std::string_view text) noexcept {
  std::size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

// One counter: the local count and its u64 key in the arena.
struct Counter {
  std::uint64_t* value;
  const char* name;
  std::string key;
};

struct Query {
  const QuerySpec* spec;
  std::unique_ptr<ReplyParser> parser;
  std::int64_t period_ns = 0;
  std::int64_t due_ns = 0;  // the next slot of its schedule
  std::optional<detail::QueryChannel> channel;
};

struct Write {
  const WriteSpec* spec;
  CommandFormat format;
  std::uint64_t seen_version = 0;  // the key's version last forwarded (or found at start)
  bool present = false;
};

enum class Outcome : std::uint8_t {
  ok,
  failed,  // counted; the connection stays
  lost,    // counted; the connection must go (closed, or on_error = reconnect)
};

class Engine {
 public:
  Engine(const core::Arena& arena, const InstrumentOptions& o, const std::atomic<bool>& stop)
      : arena_(arena), kv_(arena), o_(o), stop_(stop), who_(std::string(driver_kind(o.transport)) + " '" + o.part + "'") {
    if (o.transport == TransportKind::tcp)
      transport_ = std::make_unique<TcpTransport>(o.host, o.port, o.framing);
    else
      transport_ = std::make_unique<SerialTransport>(o.device, o.serial, o.framing);
    InstrumentCounters& c = report_.counters;
    counters_ = {Counter{&c.queries, "queries", {}},       Counter{&c.replies, "replies", {}},
                 Counter{&c.timeouts, "timeouts", {}},     Counter{&c.mismatches, "mismatches", {}},
                 Counter{&c.overlong, "overlong", {}},     Counter{&c.disconnects, "disconnects", {}},
                 Counter{&c.reconnects, "reconnects", {}}, Counter{&c.connect_failures, "connect_failures", {}},
                 Counter{&c.writes, "writes", {}},         Counter{&c.write_failures, "write_failures", {}},
                 Counter{&c.samples, "samples", {}},       Counter{&c.parser_errors, "parser_errors", {}},
                 Counter{&c.late, "late", {}},             Counter{&c.unsent, "unsent", {}}};
    InstrumentAccounting& a = report_.accounting;  // every query slot, by what became of it
    counters_.insert(counters_.end(), {Counter{&a.recorded, "accounting.recorded", {}},
                                       Counter{&a.timeout, "accounting.timeout", {}},
                                       Counter{&a.malformed, "accounting.malformed", {}},
                                       Counter{&a.driver_error, "accounting.driver_error", {}},
                                       Counter{&a.source_loss, "accounting.source_loss", {}},
                                       Counter{&a.late, "accounting.late", {}}});
  }

  core::Result<void> prepare(const LuaReplyParserFactory& lua_factory);
  InstrumentReport run();

 private:
  tl::unexpected<core::Error> refuse(const std::string& why) const {
    return core::fail(core::Errc::invalid_argument, who_ + ": " + why);
  }
  void count(std::uint64_t& value, std::uint64_t n = 1);
  void set_state(const char* state);
  void note(const char* kind, const std::string& message);
  bool connect();
  bool run_init();
  void drop(const char* state);
  Outcome fail_io(IoStatus status, std::string_view send);
  Outcome exchange(std::string_view send, std::string_view& reply);
  Outcome run_query(Query& q);
  void store(Query& q, const ParsedReply& reply);
  void miss(Query& q, std::uint64_t slots, core::GapReason reason);
  void skip_unsent(std::int64_t now);
  Outcome poll_writes();
  Outcome forward(Write& w, const core::ValueInfo& info, std::span<const std::byte> value);

  const core::Arena& arena_;
  core::KvStore kv_;
  const InstrumentOptions& o_;
  const std::atomic<bool>& stop_;
  std::string who_;
  std::unique_ptr<LineTransport> transport_;
  std::vector<Counter> counters_;
  std::vector<Query> queries_;
  std::vector<Write> writes_;
  ParsedReply reply_;
  IoStatus last_failure_ = IoStatus::ok;  // what the last failed exchange met
  std::vector<std::byte> value_buf_;  // a forwarded key's value (value_bytes)
  std::array<char, kCommandBytes> command_{};
  std::string state_key_, error_key_;
  InstrumentReport report_;
  bool ever_connected_ = false;
  bool healthy_ = false;  // this connection answered a query: the back-off starts over
  std::int64_t backoff_ns_ = 0;
  std::int64_t next_connect_ns_ = 0;
  std::uint32_t noted_ = 0;  // kinds logged on this connection: one line each, not one per query
};

core::Result<void> Engine::prepare(const LuaReplyParserFactory& lua_factory) {
  const auto key_fits = [&](const std::string& key) -> core::Result<void> {
    if (key.size() > kv_.key_bytes())
      return refuse(fmt::format("key '{}' is longer than the arena's {}-byte keys", key, kv_.key_bytes()));
    return {};
  };
  state_key_ = o_.part + ".state";
  error_key_ = o_.part + ".error";
  for (const std::string* k : {&state_key_, &error_key_})
    if (auto ok = key_fits(*k); !ok) return ok;
  for (Counter& c : counters_) {
    c.key = o_.part + "." + c.name;
    if (auto ok = key_fits(c.key); !ok) return ok;
    // Continue a count a previous run of this part left (a restart); start others at 0 as u64.
    std::uint64_t bits = 0;
    core::ValueType type = core::ValueType::none;
    if (kv_.get_scalar(c.key, bits, type) == core::KvStatus::ok && type == core::ValueType::u64) {
      *c.value = 0;
    } else if (kv_.set_u64(c.key, 0) != core::KvStatus::ok) {
      return refuse("cannot write key '" + c.key + "'");
    }
  }
  if (o_.framing.max_reply_bytes > kv_.value_bytes())
    return refuse(fmt::format("max_reply_bytes {} is larger than the arena's {}-byte values", o_.framing.max_reply_bytes,
                              kv_.value_bytes()));
  reply_.numbers.reserve(kv_.value_bytes() / sizeof(double));
  value_buf_.resize(kv_.value_bytes());

  const std::int64_t now = core::monotonic_ns();
  for (const QuerySpec& spec : o_.queries) {
    Query q;
    q.spec = &spec;
    const std::string entry = "query '" + spec.send + "'";
    auto reply = parse_reply_spec(spec.reply);
    if (!reply) return refuse(entry + ": " + reply.error().what);
    auto parser = make_reply_parser(*reply, o_.script, lua_factory);
    if (!parser) return refuse(entry + ": " + parser.error().what);
    q.parser = std::move(*parser);
    q.period_ns = std::max<std::int64_t>(1, to_ns(spec.every_s));
    q.due_ns = now;
    if (auto ok = key_fits(spec.key); !ok) return ok;
    if (!spec.units.empty()) {
      if (auto ok = key_fits(spec.key + kUnitsSuffix); !ok) return ok;
      (void)kv_.set_text(spec.key + kUnitsSuffix, spec.units);
    }
    if (!spec.channel.empty()) {
      if (!core::find_channel(arena_, spec.channel)) {
        core::ChannelSpec c;  // not declared: one sample per block at the query's rate
        c.name = spec.channel;
        c.dtype = core::Dtype::f64;
        c.rate_hz = 1.0 / spec.every_s;
        c.units = spec.units;
        c.labels = {"slow"};
        c.samples_per_block = 1;
        c.ring_blocks = kDefaultSlowChannelRing;
        c.full_policy = core::FullPolicy::drop;  // a slow instrument never waits for a reader
        if (auto made = core::create_channel(arena_, c); !made && !core::find_channel(arena_, spec.channel))
          return refuse(entry + ": channel '" + spec.channel + "': " + made.error().what);
      }
      auto writer = core::ChannelWriter::open(arena_, spec.channel);
      if (!writer) return refuse(entry + ": channel '" + spec.channel + "': " + writer.error().what);
      const core::Dtype dtype = writer->desc().dtype;
      if (dtype != core::Dtype::f64 && dtype != core::Dtype::f32)
        return refuse(entry + ": channel '" + spec.channel + "' holds " + core::dtype_name(dtype) + "; it needs f32 or f64");
      q.channel.emplace(std::move(*writer));
    }
    queries_.push_back(std::move(q));
  }
  for (const InitStep& step : o_.init)
    if (!step.key.empty())
      if (auto ok = key_fits(step.key); !ok) return ok;
  for (const WriteSpec& spec : o_.writes) {
    auto format = CommandFormat::parse(spec.send);
    if (!format) return refuse("write '" + spec.key + "': " + format.error().what);
    Write w{&spec, std::move(*format)};
    for (const std::string* k : {&spec.key, &spec.key_readback})
      if (auto ok = key_fits(*k); !ok) return ok;
    if (!spec.units.empty() && !spec.key_readback.empty()) (void)kv_.set_text(spec.key_readback + kUnitsSuffix, spec.units);
    // A value already there when the driver starts is not sent: only changes made while it runs
    // are (a setpoint left from an earlier run must not reach a supply by surprise).
    core::ValueInfo info;
    const core::KvStatus got = kv_.get(spec.key, value_buf_, info);
    w.present = got == core::KvStatus::ok || got == core::KvStatus::value_too_large;
    w.seen_version = w.present ? info.version() : 0;
    writes_.push_back(std::move(w));
  }
  return {};
}

void Engine::count(std::uint64_t& value, std::uint64_t n) {
  value += n;
  for (Counter& c : counters_) {
    if (c.value != &value) continue;
    std::uint64_t now = 0;
    if (kv_.atomic(c.key, core::AtomicOp::add, n, now) != core::KvStatus::ok) (void)kv_.set_u64(c.key, value);
  }
}

void Engine::set_state(const char* state) { (void)kv_.set_text(state_key_, state); }

// One line on stderr per kind of trouble per connection; the counters count every one.
void Engine::note(const char* kind, const std::string& message) {
  (void)kv_.set_text(error_key_, std::string_view(message).substr(0, kv_.value_bytes()));
  std::uint32_t bit = 0;
  for (std::size_t i = 0; i < counters_.size(); ++i)
    if (std::strcmp(counters_[i].name, kind) == 0) bit = 1U << i;
  if (bit != 0 && (noted_ & bit) != 0) return;
  noted_ |= bit;
  std::fprintf(stderr, "%s: %s\n", who_.c_str(), message.c_str());
}

void Engine::drop(const char* state) {
  transport_->close();
  set_state(state);
  healthy_ = false;
  next_connect_ns_ = core::monotonic_ns() + backoff_ns_;
}

bool Engine::connect() {
  set_state("connecting");
  auto opened = transport_->open(to_ns(o_.connect_timeout_s));
  if (opened && run_init()) {
    noted_ = 0;
    if (ever_connected_) count(report_.counters.reconnects);
    std::fprintf(stderr, "%s: connected to %s\n", who_.c_str(), transport_->describe().c_str());
    set_state("connected");
    const std::int64_t now = core::monotonic_ns();
    skip_unsent(now);
    ever_connected_ = true;
    for (Query& q : queries_) q.due_ns = std::min(q.due_ns, now);  // each runs at once, then on its period
    return true;
  }
  count(report_.counters.connect_failures);
  if (!opened) note("connect_failures", opened.error().what);
  backoff_ns_ = std::min(to_ns(o_.reconnect_max_s), backoff_ns_ == 0 ? to_ns(o_.reconnect_min_s) : backoff_ns_ * 2);
  drop("disconnected");
  skip_unsent(core::monotonic_ns());
  return false;
}

bool Engine::run_init() {
  for (const InitStep& step : o_.init) {
    if (!step.awaits_reply()) {
      if (const IoStatus s = transport_->write_line(step.send, to_ns(o_.write_timeout_s)); s != IoStatus::ok) {
        (void)fail_io(s, step.send);
        return false;
      }
      continue;
    }
    std::string_view reply;
    if (exchange(step.send, reply) != Outcome::ok) return false;
    if (!step.expect.empty() && !glob(step.expect, reply)) {
      count(report_.counters.mismatches);
      note("mismatches", fmt::format("init '{}' on {}: reply \"{}\" is not \"{}\"", step.send, transport_->describe(),
                                     escape_text(reply), step.expect));
      return false;
    }
    if (!step.key.empty()) (void)kv_.set_text(step.key, reply.substr(0, kv_.value_bytes()));
  }
  return true;
}

Outcome Engine::fail_io(IoStatus status, std::string_view send) {
  const std::string where = transport_->describe();
  last_failure_ = status;
  switch (status) {
    case IoStatus::ok: return Outcome::ok;
    case IoStatus::timeout:
      count(report_.counters.timeouts);
      note("timeouts", fmt::format("'{}' on {}: no reply within {} s", send, where, o_.reply_timeout_s));
      return o_.on_error == OnError::reconnect ? Outcome::lost : Outcome::failed;
    case IoStatus::too_long:
      count(report_.counters.overlong);
      note("overlong", fmt::format("reply to '{}' on {} ran past {} bytes without its terminator \"{}\"", send, where,
                                   o_.framing.max_reply_bytes, escape_text(o_.framing.in_terminator)));
      // What follows is the rest of that reply: resynchronise by dropping it, or the connection.
      if (o_.on_error == OnError::reconnect || transport_->discard_input() != IoStatus::ok) return Outcome::lost;
      return Outcome::failed;
    case IoStatus::closed:
    case IoStatus::failed:
      count(report_.counters.disconnects);
      note("disconnects", fmt::format("{} lost during '{}': {}", where, send,
                                      transport_->last_errno() != 0 ? std::strerror(transport_->last_errno()) : "closed"));
      return Outcome::lost;
  }
  return Outcome::lost;
}

Outcome Engine::exchange(std::string_view send, std::string_view& reply) {
  if (const IoStatus s = transport_->discard_input(); s != IoStatus::ok) return fail_io(s, send);
  if (const IoStatus s = transport_->write_line(send, to_ns(o_.write_timeout_s)); s != IoStatus::ok) return fail_io(s, send);
  const IoStatus s = transport_->read_line(reply, to_ns(o_.reply_timeout_s), to_ns(o_.read_timeout_s));
  return s == IoStatus::ok ? Outcome::ok : fail_io(s, send);
}

// A failed exchange's slot, by who lost it: the instrument's silence, a line that ran past its
// limit, or the connection.
core::GapReason reason_of(IoStatus status) noexcept {
  switch (status) {
    case IoStatus::timeout: return core::GapReason::timeout;
    case IoStatus::too_long: return core::GapReason::malformed;
    case IoStatus::ok:
    case IoStatus::closed:
    case IoStatus::failed: break;
  }
  return core::GapReason::source_loss;
}

Outcome Engine::run_query(Query& q) {
  count(report_.counters.queries);
  std::string_view line;
  if (const Outcome out = exchange(q.spec->send, line); out != Outcome::ok) {
    miss(q, 1, reason_of(last_failure_));
    return out;
  }
  const ParseStatus parsed = q.parser->parse(line, reply_);
  if (parsed == ParseStatus::failed) {
    count(report_.counters.parser_errors);
    miss(q, 1, core::GapReason::driver_error);
    note("parser_errors", fmt::format("reply to '{}' on {}: {} failed on \"{}\": {}", q.spec->send, transport_->describe(),
                                      q.spec->reply, escape_text(line), q.parser->last_error()));
    return o_.on_error == OnError::reconnect ? Outcome::lost : Outcome::failed;
  }
  const bool empty_list = parsed == ParseStatus::ok && reply_.kind == ReplyKind::numbers && reply_.numbers.empty();
  if (parsed != ParseStatus::ok || empty_list) {
    count(report_.counters.mismatches);
    miss(q, 1, core::GapReason::malformed);
    note("mismatches", fmt::format("reply to '{}' on {} is not {}: \"{}\"", q.spec->send, transport_->describe(),
                                   q.spec->reply, escape_text(line)));
    return o_.on_error == OnError::reconnect ? Outcome::lost : Outcome::failed;
  }
  store(q, reply_);
  count(report_.counters.replies);
  count(report_.accounting.recorded);
  if (!healthy_) {
    healthy_ = true;
    backoff_ns_ = 0;  // the connection works: a later drop starts the back-off over
  }
  return Outcome::ok;
}

void Engine::store(Query& q, const ParsedReply& r) {
  const std::string& key = q.spec->key;
  switch (r.kind) {
    case ReplyKind::number:
      (void)kv_.set_f64(key, r.number);
      if (q.channel) count(report_.counters.samples, q.channel->push(r.number, static_cast<std::uint64_t>(core::realtime_ns())));
      break;
    case ReplyKind::numbers: {
      core::ArrayShape shape;
      shape.elem = core::Dtype::f64;
      shape.rank = 1;
      shape.dims = {static_cast<std::uint32_t>(r.numbers.size()), 0};
      (void)kv_.set_array(key, shape, std::as_bytes(std::span(r.numbers)));
      break;
    }
    case ReplyKind::text:
      (void)kv_.set_text(key, r.text.substr(0, kv_.value_bytes()));
      break;
    case ReplyKind::lua: break;  // a parser never produces this kind
  }
}

// `slots` of q's schedule that recorded nothing, for `reason`: counted, and as many gap blocks in
// its channel (after the block it was filling, closed short).
void Engine::miss(Query& q, std::uint64_t slots, core::GapReason reason) {
  if (slots == 0) return;
  InstrumentAccounting& a = report_.accounting;
  if (reason == core::GapReason::timeout) count(a.timeout, slots);
  else if (reason == core::GapReason::malformed) count(a.malformed, slots);
  else if (reason == core::GapReason::driver_error) count(a.driver_error, slots);
  else if (reason == core::GapReason::late) count(a.late, slots);
  else count(a.source_loss, slots);
  if (q.channel) count(report_.counters.samples, q.channel->miss(slots, reason));
}

// The slots before `now` that passed while disconnected: unsent, lost at the source. The schedule
// starts at the first connection; before it no query has a slot.
void Engine::skip_unsent(std::int64_t now) {
  if (!ever_connected_) return;
  for (Query& q : queries_) {
    if (q.due_ns >= now) continue;
    const auto slots = static_cast<std::uint64_t>((now - q.due_ns + q.period_ns - 1) / q.period_ns);
    q.due_ns += static_cast<std::int64_t>(slots) * q.period_ns;
    count(report_.counters.unsent, slots);
    miss(q, slots, core::GapReason::source_loss);
  }
}

Outcome Engine::poll_writes() {
  for (Write& w : writes_) {
    core::ValueInfo info;
    const core::KvStatus got = kv_.get(w.spec->key, value_buf_, info);
    if (got != core::KvStatus::ok) continue;  // missing, busy or torn: looked at again next poll
    if (w.present && info.version() == w.seen_version) continue;
    const Outcome out = forward(w, info, std::span(value_buf_).first(info.length));
    if (out == Outcome::lost) return out;
  }
  return Outcome::ok;
}

Outcome Engine::forward(Write& w, const core::ValueInfo& info, std::span<const std::byte> value) {
  std::size_t length = 0;
  bool formatted = false;
  switch (info.type) {
    case core::ValueType::f64:
    case core::ValueType::i64:
    case core::ValueType::u64: {
      std::uint64_t bits = 0;
      std::memcpy(&bits, value.data(), std::min(value.size(), sizeof bits));
      double number = 0;
      if (info.type == core::ValueType::f64) std::memcpy(&number, &bits, sizeof number);
      if (info.type == core::ValueType::i64) number = static_cast<double>(static_cast<std::int64_t>(bits));
      if (info.type == core::ValueType::u64) number = static_cast<double>(bits);
      formatted = w.format.format_number(number, command_, length);
      break;
    }
    case core::ValueType::text:
    case core::ValueType::bytes:
      formatted = w.format.format_text(std::string_view(reinterpret_cast<const char*>(value.data()), value.size()),
                                       command_, length);
      break;
    case core::ValueType::none:
    case core::ValueType::vector:
    case core::ValueType::array: break;
  }
  // Seen either way: a value that cannot be sent is reported once, not on every poll.
  w.present = true;
  w.seen_version = info.version();
  if (!formatted) {
    count(report_.counters.write_failures);
    note("write_failures", fmt::format("key '{}' ({}) does not fill \"{}\"", w.spec->key, core::value_type_name(info.type),
                                       w.spec->send));
    return Outcome::failed;
  }
  const std::string_view command(command_.data(), length);
  if (const IoStatus s = transport_->write_line(command, to_ns(o_.write_timeout_s)); s != IoStatus::ok) {
    count(report_.counters.write_failures);
    w.present = false;  // not sent: send it again once connected
    return fail_io(s, command);
  }
  count(report_.counters.writes);
  if (w.spec->readback.empty()) return Outcome::ok;
  std::string_view line;
  if (const Outcome out = exchange(w.spec->readback, line); out != Outcome::ok) return out;
  double number = 0;
  if (parse_number(line, number) != ParseStatus::ok) {
    count(report_.counters.mismatches);
    note("mismatches", fmt::format("read-back '{}' on {} is not a number: \"{}\"", w.spec->readback,
                                   transport_->describe(), escape_text(line)));
    return o_.on_error == OnError::reconnect ? Outcome::lost : Outcome::failed;
  }
  (void)kv_.set_f64(w.spec->key_readback, number);
  return Outcome::ok;
}

InstrumentReport Engine::run() {
  const std::int64_t start = core::monotonic_ns();
  const std::int64_t end = o_.duration_s > 0 ? start + to_ns(o_.duration_s) : INT64_MAX;
  const std::int64_t write_poll_ns = to_ns(o_.write_poll_s);
  std::int64_t next_write_poll = start;
  set_state("disconnected");
  next_connect_ns_ = start;
  for (;;) {
    if (stop_.load(std::memory_order_relaxed)) {  // a flag: nothing is ordered on it
      report_.stopped = true;
      break;
    }
    std::int64_t now = core::monotonic_ns();
    if (now >= end) break;
    if (!transport_->is_open()) {
      if (now < next_connect_ns_) {
        if (core::sleep_until(std::min(next_connect_ns_, end), &stop_) == core::SleepStatus::stopped) continue;
        continue;
      }
      (void)connect();
      continue;
    }
    // The next thing due: the earliest query, or the look at forwarded keys.
    Query* next = nullptr;
    for (Query& q : queries_)
      if (next == nullptr || q.due_ns < next->due_ns) next = &q;
    std::int64_t wake = writes_.empty() ? INT64_MAX : next_write_poll;
    if (next != nullptr) wake = std::min(wake, next->due_ns);
    if (wake > now) {
      (void)core::sleep_until(std::min(wake, end), &stop_);
      continue;
    }
    Outcome out = Outcome::ok;
    if (!writes_.empty() && now >= next_write_poll) {
      next_write_poll = now + write_poll_ns;
      out = poll_writes();
    } else if (next != nullptr) {
      // On schedule without drift; a query that fell behind runs once, not in a burst, for its
      // oldest slot, and the later slots already past are skipped as late.
      const auto late = static_cast<std::uint64_t>((now - next->due_ns) / next->period_ns);
      next->due_ns += static_cast<std::int64_t>(late + 1) * next->period_ns;
      if (late > 0) {
        count(report_.counters.late, late);
        miss(*next, late, core::GapReason::late);
      }
      out = run_query(*next);
    }
    if (out == Outcome::lost) {
      backoff_ns_ = std::min(to_ns(o_.reconnect_max_s), backoff_ns_ == 0 ? to_ns(o_.reconnect_min_s) : backoff_ns_ * 2);
      drop("disconnected");
    }
  }
  if (!transport_->is_open()) skip_unsent(core::monotonic_ns());
  transport_->close();
  set_state("disconnected");
  for (Query& q : queries_)
    if (q.channel) count(report_.counters.samples, q.channel->flush());
  report_.elapsed_s = static_cast<double>(core::monotonic_ns() - start) / 1e9;
  return report_;
}

}  // namespace

core::Result<InstrumentReport> run_instrument(const core::Arena& arena, const InstrumentOptions& options,
                                              const std::atomic<bool>& stop, const LuaReplyParserFactory& lua_factory) {
  if (auto ok = validate(options); !ok) return tl::make_unexpected(ok.error());
  Engine engine(arena, options, stop);
  if (auto ok = engine.prepare(lua_factory); !ok) return tl::make_unexpected(ok.error());
  return engine.run();
}

}  // namespace weir::acq
