#pragma once
// The sending end of a bridge: follows channels of an arena as a registered consumer and sends
// every block over a ZeroMQ PUSH socket (wire.hpp), with a description of each channel when first
// seen, on every (re)connect and every second, and a mark of how far it got every 100 ms.
//
// When the link cannot keep up, a lossy sender (the default) drops whole blocks on purpose (a
// non-blocking send that would block is counted and skipped); a lossless one reads as a lossless
// consumer (the near writer waits for it) and waits up to lossless_wait_ns per message before it
// drops the blocks in it. Either way every block not sent is counted, and the receiver turns the sequence it
// never got into a gap.
//
// Blocks already waiting when the sender looks go out together, as one message of up to 64 KiB
// of block records (wire.hpp); it never waits to fill one.
//
// Arena keys (bridge.NAME.*): sent, dropped, lost (lapped on the near side), bytes, messages (block
// messages sent: sent / messages is the blocks per message), link ("up" or "down"), peers,
// auth_failures, session, channels. The consumer rows (`weir ls`) show the same per
// channel: blocks_out = sent, blocks_skipped = dropped.
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "weir/bridge/curve_keys.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/error.hpp"

namespace weir::bridge {

inline constexpr int kDefaultSendHwm = 1000;                    // messages queued per link before drops
inline constexpr std::int64_t kDefaultLosslessWaitNs = 10'000'000'000;  // lossless: wait per message, then drop
inline constexpr std::int64_t kMarkEveryNs = 100'000'000;       // marks and key updates
inline constexpr std::int64_t kDescribeEveryNs = 1'000'000'000;  // descriptions again (a receiver may have restarted)
inline constexpr std::int64_t kRescanEveryNs = 1'000'000'000;   // look for new channels matching the patterns

struct SenderOptions {
  std::string name;                   // the bridge's name: its keys, consumer rows, `{sender}` at the receiver
  std::vector<std::string> patterns;  // channel names or globs (fnmatch); channels created later join
  std::string endpoint;               // tcp://HOST:PORT (or any ZeroMQ endpoint)
  bool bind = false;                  // bind instead of connect (the receiver then connects with --from)
  Security security;
  bool lossless = false;
  std::int64_t lossless_wait_ns = kDefaultLosslessWaitNs;
  int send_hwm = kDefaultSendHwm;
  bool from_newest = false;           // start at each channel's newest block instead of the oldest still held
};

struct SenderChannelReport {
  std::string name;
  std::uint64_t sent = 0, dropped = 0, lost = 0, bytes = 0;
  std::uint64_t messages = 0;  // block messages sent (each one or more blocks)
};

struct SenderReport {
  std::uint64_t session = 0;
  std::uint64_t sent = 0, dropped = 0, lost = 0, bytes = 0, messages = 0;
  std::uint64_t handshakes = 0, disconnects = 0, auth_failures = 0;
  double elapsed_s = 0;
  std::vector<SenderChannelReport> channels;
};

/// Checks options without touching the network: a name, patterns, an endpoint, and keys (readable,
/// secret key mode 0600) unless security.plain. Thread: any.
[[nodiscard]] core::Result<void> validate(const SenderOptions& options);

/// Runs the sender until `stop` is set: sets up the socket (CURVE client unless plain), follows the
/// channels, sends, and returns what it did. Fails before sending anything for bad options, keys or
/// endpoint; afterwards link trouble is counted, never fatal. Thread: one; `stop` from any.
[[nodiscard]] core::Result<SenderReport> run_sender(const core::Arena& arena, const SenderOptions& options,
                                                    const std::atomic<bool>& stop);

}  // namespace weir::bridge
