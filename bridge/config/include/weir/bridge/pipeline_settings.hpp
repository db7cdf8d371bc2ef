#pragma once
// Bridges declared in a pipeline file, as the options `weir bridge send|recv --pipeline FILE --part
// NAME` runs with and `weir check` / `weir run` check before anything starts. Key files and the
// allowed-keys folder are relative to the pipeline file's folder.
//
//   bridge "send" {                      -- follows channels, sends their blocks
//     name = "daq1", channels = { "adc*" },
//     to = "tcp://archive:5600",         -- or bind = "tcp://0.0.0.0:5600" (the receiver uses from)
//     key = "keys/daq1.key", server_key = "keys/archive.pub",   -- or plain = true
//     lossless = true, wait_ms = 10000, hwm = 1000, newest = false,  -- optional
//   }
//   driver "bridge" {                    -- publishes what senders push into this arena
//     name = "in", channels = { "daq1.adc0" },   -- the declared channels it writes (optional)
//     bind = "tcp://0.0.0.0:5600",       -- or from = "tcp://daq1:5600"
//     key = "keys/archive.key", allow = "allowed",              -- or plain = true
//     prefix = "{sender}.", hwm = 1000,  -- optional
//   }
#include "weir/bridge/receiver.hpp"
#include "weir/bridge/sender.hpp"
#include "weir/config/pipeline.hpp"
#include "weir/core/error.hpp"

namespace weir::bridge {

/// The sender's options from a `bridge "send"` declaration; its name is the part's. Errors
/// `file:line: bridge "NAME": ...` name the key; unless plain, the key files must be readable
/// keys (the secret one mode 0600). Thread: any.
[[nodiscard]] core::Result<SenderOptions> sender_options(const config::BridgeDecl& decl);

/// The receiver's options from a `driver "bridge"` declaration; its name is the part's. Unless
/// plain, the secret key must be readable (mode 0600) and the allowed folder hold *.pub keys.
/// Thread: any.
[[nodiscard]] core::Result<ReceiverOptions> receiver_options(const config::DriverDecl& decl);

/// sender_options for each of the pipeline's bridges: the first bad one's error. Thread: any.
[[nodiscard]] core::Result<void> check_bridges(const config::Pipeline& pipeline);

/// receiver_options(decl), discarded: the check of a `driver "bridge"`. Thread: any.
[[nodiscard]] core::Result<void> check_receiver_driver(const config::Pipeline& pipeline, const config::DriverDecl& decl);

}  // namespace weir::bridge
