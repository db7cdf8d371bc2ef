// The instrument loop: connect (with back-off), init, then queries on their periods and forwarded
// keys between them, every wait bounded. One thread; the instrument's trouble is counted, never fatal.
#include "weir/instrument/instrument_driver.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "instrument_engine.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/clock.hpp"

namespace weir::acq {
namespace detail {
namespace {

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

}  // namespace

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

}  // namespace detail

core::Result<InstrumentReport> run_instrument(const core::Arena& arena, const InstrumentOptions& options,
                                              const std::atomic<bool>& stop, const LuaReplyParserFactory& lua_factory) {
  if (auto ok = validate(options); !ok) return tl::make_unexpected(ok.error());
  detail::Engine engine(arena, options, stop);
  if (auto ok = engine.prepare(lua_factory); !ok) return tl::make_unexpected(ok.error());
  return engine.run();
}

}  // namespace weir::acq
