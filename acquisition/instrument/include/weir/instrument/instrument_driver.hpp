#pragma once
// The instrument driver: the StreamDevice-like loop that keeps one instrument connected, sends its
// init sequence, runs its queries on their periods, parses the replies into typed keys (and slow
// channels), forwards changed keys as commands, and counts every failure by kind in the arena.
//
// Keys it writes (P is options.part):
//   P.state                 text: "connecting", "connected" or "disconnected"
//   P.error                 text: the last failure, for people
//   P.queries, P.replies, P.timeouts, P.mismatches, P.overlong, P.disconnects, P.reconnects,
//   P.connect_failures, P.writes, P.write_failures, P.samples, P.parser_errors, P.late, P.unsent
//                           u64 counters (continued across restarts)
//   P.accounting.{recorded,timeout,malformed,driver_error,source_loss,late}
//                           u64: every query slot by what became of it (InstrumentAccounting)
//   each query's key        f64, f64 array or text; its units in key + kUnitsSuffix (text)
//   each write's key_readback  f64; units likewise
// Design and behaviour: acquisition/instrument/README.md.
#include <atomic>
#include <cstdint>

#include "weir/core/arena.hpp"
#include "weir/core/error.hpp"
#include "weir/instrument/instrument_options.hpp"
#include "weir/instrument/reply_parser.hpp"

namespace weir::acq {

/// Units of key K are the text key K + kUnitsSuffix: the same sibling-key convention the recorder
/// reads for axis units (h5::kUnitsSuffix).
inline constexpr char kUnitsSuffix[] = "_units";
inline constexpr std::uint32_t kDefaultSlowChannelRing = 64;  // ring of a slow channel the driver creates

/// Every failure and event, counted by kind; the same numbers as the arena's counter keys.
struct InstrumentCounters {
  std::uint64_t queries = 0;           // queries sent
  std::uint64_t replies = 0;           // replies parsed and stored
  std::uint64_t timeouts = 0;          // a command not taken, or a reply not (fully) come, in time
  std::uint64_t mismatches = 0;        // a reply its pattern refused (or an init reply not as expected)
  std::uint64_t overlong = 0;          // a reply that ran past max_reply_bytes without its terminator
  std::uint64_t disconnects = 0;       // the peer closed or the device vanished
  std::uint64_t reconnects = 0;        // connections made again after the first
  std::uint64_t connect_failures = 0;  // connects or opens that failed (or whose init failed)
  std::uint64_t writes = 0;            // forwarded commands sent
  std::uint64_t write_failures = 0;    // forwarded values that could not be formatted or sent
  std::uint64_t samples = 0;           // samples put into slow channels
  std::uint64_t parser_errors = 0;     // replies a Lua parser failed on (an error, its budget or heap ran out)
  std::uint64_t late = 0;              // query slots skipped because the loop fell behind (run once, not in a burst)
  std::uint64_t unsent = 0;            // query slots that passed while disconnected (after the first connection)
};

/// Every slot of the queries' schedules by what became of it, exactly:
///   P.queries + P.late + P.unsent = recorded + timeout + malformed + driver_error + source_loss + late.
/// A query that feeds a channel publishes one gap block (of this reason) per slot that is not recorded.
struct InstrumentAccounting {
  std::uint64_t recorded = 0;      // replies parsed and stored (P.replies)
  std::uint64_t timeout = 0;       // the command not taken, or the reply not (fully) come, in time
  std::uint64_t malformed = 0;     // a reply its pattern refused (a garbled line), or one past max_reply
  std::uint64_t driver_error = 0;  // a reply the Lua parser failed on
  std::uint64_t source_loss = 0;   // the connection lost during the query, and the slots passed while disconnected
  std::uint64_t late = 0;          // the slots skipped because the loop fell behind (P.late)
};

struct InstrumentReport {
  InstrumentCounters counters;
  InstrumentAccounting accounting;
  bool stopped = false;  // by the stop flag (else by duration_s)
  double elapsed_s = 0;
};

/// Runs the driver until `stop` is set or options.duration_s has passed. Fails before doing
/// anything for options validate() refuses, a key longer than the arena's keys, a reply limit
/// larger than its values, a reply parser that cannot be made ("lua:" without `lua_factory`), or
/// a slow channel that cannot be opened; every message names the driver kind and part. After that
/// it never fails: instrument trouble is counted, logged once per kind and connection on stderr,
/// and connecting is retried with exponential back-off. Every wait is bounded (the stop flag is
/// seen within options' timeouts or kDefaultStopPollNs). Thread: any one thread.
[[nodiscard]] core::Result<InstrumentReport> run_instrument(const core::Arena& arena, const InstrumentOptions& options,
                                                            const std::atomic<bool>& stop,
                                                            const LuaReplyParserFactory& lua_factory = {});

}  // namespace weir::acq
