// The instrument's exchanges: one query's round trip and what became of its slot (recorded, or a
// loss counted by its term and put into the query's channel as a gap block), the slots passed while
// disconnected, and the forwarded keys with their read-backs.
#include <algorithm>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "instrument_engine.hpp"
#include "weir/core/clock.hpp"

namespace weir::acq::detail {

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

namespace {

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

}  // namespace

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

}  // namespace weir::acq::detail
