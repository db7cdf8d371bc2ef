#pragma once
// What one instrument driver does: where the instrument is (TCP or a serial line), how lines are
// framed, what to send when it connects, what to ask and how often, which keys to forward to it,
// and what to do when it does not answer. Plain data: a pipeline's `driver "scpi" { ... }` or
// `driver "serial" { ... }` fills it (instrument_config.hpp), and so do tests.
#include <cstdint>
#include <string>
#include <vector>

#include "weir/core/error.hpp"
#include "weir/instrument/line_transport.hpp"

namespace weir::acq {

inline constexpr double kDefaultConnectTimeoutS = 2.0;  // connect() (TCP) gives up after this
inline constexpr double kDefaultWriteTimeoutS = 1.0;    // a command not taken by the line in this long: timeout
inline constexpr double kDefaultReplyTimeoutS = 1.0;    // no first byte of a reply in this long: timeout
inline constexpr double kDefaultReadTimeoutS = 0.5;     // a reply that pauses this long between bytes: timeout
inline constexpr double kDefaultReconnectMinS = 0.1;    // first wait before a reconnect; doubles per failure
inline constexpr double kDefaultReconnectMaxS = 10.0;   // the longest wait between reconnect attempts
inline constexpr double kDefaultWritePollS = 0.1;       // forwarded keys are looked at this often
inline constexpr double kDefaultQueryEveryS = 1.0;      // a query's period unless it names one
inline constexpr std::uint32_t kMaxQueries = 256;       // refuse more queries (or writes) per instrument
inline constexpr std::uint32_t kDefaultScriptMemoryMb = 16;   // heap of the Lua state reply parsers run in
inline constexpr int kDefaultScriptInstructions = 1'000'000;  // Lua instructions one reply may take to parse
inline constexpr std::uint32_t kMaxScriptMemoryMb = 65536;    // refuse a parser heap past 64 GiB (the sandbox's bound)

enum class TransportKind : std::uint8_t { tcp, serial };
/// What a timeout, a mismatched reply or a reply that never ends leads to.
enum class OnError : std::uint8_t {
  skip,       // count it and go on with the next query
  reconnect,  // count it, drop the connection and connect again (with back-off)
};

[[nodiscard]] const char* on_error_name(OnError on_error) noexcept;
/// "skip" | "reconnect". Thread: any.
[[nodiscard]] core::Result<OnError> parse_on_error(std::string_view text);

/// One command sent after every connect, before any query.
struct InitStep {
  std::string send;
  std::string expect;  // a reply is awaited and must match this glob ('*', '?'); "" with `key`: any reply
  std::string key;     // a reply is awaited and stored as text under this key ("" : none)
  [[nodiscard]] bool awaits_reply() const noexcept { return !expect.empty() || !key.empty(); }
};

/// One periodic query.
struct QuerySpec {
  std::string send;                 // e.g. "MEAS:VOLT?"
  double every_s = kDefaultQueryEveryS;
  std::string key;                  // the result's key: f64 (number), f64 array (numbers) or text
  std::string units;                // stored as text under key + kUnitsSuffix ("" : none)
  std::string reply = "number";     // number | numbers | text | lua:FUNCTION
  std::string channel;              // also one sample per reply into this channel ("" : none; number only)
};

/// One key forwarded to the instrument whenever a user changes it (`weir set psu.setpoint 1.5`).
struct WriteSpec {
  std::string key;           // watched; its value (a number, or text) fills `send`
  std::string send;          // a printf format with at most one conversion: "VOLT %g", "MODE %s", "OUTP ON"
  std::string readback;      // a query sent after the command ("" : none), e.g. "VOLT?"
  std::string key_readback;  // where the read-back number goes (f64)
  std::string units;         // of key_readback
};

struct InstrumentOptions {
  std::string part;  // the part's name: keys are <part>.state, <part>.queries, ...; messages name it
  TransportKind transport = TransportKind::tcp;
  std::string host;             // tcp: name or address (IPv4 or IPv6)
  std::uint16_t port = 0;       // tcp
  std::string device;           // serial: a tty path
  SerialSettings serial;        // serial
  LineFraming framing;
  std::vector<InitStep> init;
  std::vector<QuerySpec> queries;
  std::vector<WriteSpec> writes;
  std::string script;           // Lua file for "lua:FUNCTION" replies ("" : none)
  std::uint32_t script_memory_mb = kDefaultScriptMemoryMb;  // its state's heap, 1..kMaxScriptMemoryMb
  int script_instructions = kDefaultScriptInstructions;    // per reply; 0: unlimited
  double connect_timeout_s = kDefaultConnectTimeoutS;
  double write_timeout_s = kDefaultWriteTimeoutS;
  double reply_timeout_s = kDefaultReplyTimeoutS;
  double read_timeout_s = kDefaultReadTimeoutS;
  OnError on_error = OnError::skip;
  double reconnect_min_s = kDefaultReconnectMinS;
  double reconnect_max_s = kDefaultReconnectMaxS;
  double write_poll_s = kDefaultWritePollS;
  double duration_s = 0;        // stop after this long (0: until stopped)
};

/// "scpi" for tcp, "serial" for serial: the driver kind in messages.
[[nodiscard]] const char* driver_kind(TransportKind transport) noexcept;

/// Checks everything that needs no arena: a part name, host and port (tcp) or device and termios
/// settings (serial), framing, positive periods and timeouts, every query's send, key and reply
/// kind, every write's key, format (at most one conversion) and read-back, and no key written by
/// two of them. Errors name the part and the offending entry: "scpi 'dmm': query 2 ('MEAS:VOLT?'):
/// every must be > 0 s, not -1". Thread: any.
[[nodiscard]] core::Result<void> validate(const InstrumentOptions& options);

}  // namespace weir::acq
