#pragma once
// The instrument driver's engine, shared by its two files: instrument_driver.cpp (connecting, init,
// the loop) and instrument_queries.cpp (exchanges, queries and their accounting, forwarded writes).
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "query_channel.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/error.hpp"
#include "weir/core/gap_reason.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/instrument/command_format.hpp"
#include "weir/instrument/instrument_driver.hpp"
#include "weir/instrument/line_transport.hpp"
#include "weir/instrument/reply_parser.hpp"

namespace weir::acq::detail {

inline constexpr std::size_t kCommandBytes = 512;  // longest forwarded command

inline std::int64_t to_ns(double seconds) { return std::llround(seconds * 1e9); }

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

}  // namespace weir::acq::detail
