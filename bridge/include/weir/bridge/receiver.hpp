#pragma once
// The receiving end of a bridge: a ZeroMQ PULL socket (one or many senders) whose blocks it
// publishes into channels of its own arena, created from the senders' descriptions or attached
// when they match (a channel of the same name with another dtype, block size, rate or frame shape
// is refused, loudly). Every sequence number it did not get (link loss, sender drops, a restart of
// either end, a reconnect) becomes gap blocks (ChannelWriter::skip), so far-side consumers and
// recordings count exactly the blocks the near side wrote and they never got.
//
// Sequences: far block = near block + offset, the offset fixed per stream (a near channel as
// created; a recreated one is a new stream) and kept in the key bridge.NAME.origin.CHANNEL, so a
// restarted receiver continues where its channel ends. A block below the far channel's head is
// late (an old session's, or already delivered) and dropped, counted.
//
// Many-to-one: any number of senders connect to one receiver; each far channel belongs to the
// first sender (by name) that describes it, and another sender's channel of the same name is
// refused. `prefix` is put before every channel name, with "{sender}" replaced by the sending
// bridge's name: prefix "{sender}." keeps the senders apart.
//
// Security: a CURVE server unless plain; a ZAP handler accepts only the public keys in the allowed
// folder. Keys (bridge.NAME.*): received, bytes, gaps, late, dropped (the far writer dropped),
// refused, undescribed, malformed, sessions, link, peers, auth_failures, zap_refused.
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "weir/bridge/curve_keys.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/error.hpp"

namespace weir::bridge {

inline constexpr int kDefaultRecvHwm = 1000;  // blocks queued per link before TCP pushes back

struct ReceiverOptions {
  std::string name;       // the bridge's name: its keys
  std::string endpoint;   // tcp://HOST:PORT
  bool bind = true;       // bind (the senders connect); false: connect to a sender that binds
  Security security;
  std::string prefix;     // before every channel name; "{sender}" is the sending bridge's name
  int recv_hwm = kDefaultRecvHwm;
};

struct ReceiverChannelReport {
  std::string name, sender;
  bool created = false;
  std::uint64_t received = 0, gaps = 0, late = 0, dropped = 0;
};

struct ReceiverReport {
  std::uint64_t received = 0, bytes = 0, gaps = 0, late = 0, dropped = 0, refused = 0, undescribed = 0;
  std::uint64_t malformed = 0, sessions = 0, handshakes = 0, disconnects = 0, auth_failures = 0, zap_refused = 0;
  double elapsed_s = 0;
  std::vector<ReceiverChannelReport> channels;
};

/// Checks options without touching the network. Thread: any.
[[nodiscard]] core::Result<void> validate(const ReceiverOptions& options);

/// Runs the receiver until `stop` is set. Fails before receiving anything for bad options, keys or
/// endpoint; afterwards bad messages, refused channels and peers are counted, never fatal.
/// Thread: one; `stop` from any.
[[nodiscard]] core::Result<ReceiverReport> run_receiver(const core::Arena& arena, const ReceiverOptions& options,
                                                        const std::atomic<bool>& stop);

}  // namespace weir::bridge
