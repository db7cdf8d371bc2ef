#pragma once
// A pipeline's `driver "udp" { ... }` as the UDP driver's options: what `weir udp --pipeline FILE
// --part NAME` runs with, and what `weir check` / `weir run` check before starting anything.
//
//   driver "udp" {
//     name = "digitizer", channels = { "adc0", "adc1" },
//     port = 5000,                 -- required; 0: the kernel picks (see <name>.port)
//     format = "vita49",           -- or "raw"
//     streams = { { id = 1, channel = "adc0" }, { id = 2, channel = "adc1" } },
//     bind = "0.0.0.0", group = "239.1.2.3",      -- optional
//     rcvbuf = 67108864, batch = 32, reorder = 2, horizon = 256,  -- optional
//     cpu = 3,                     -- a part setting (DriverDecl::cpu): the receiving thread is pinned there
//   }
#include "weir/config/pipeline.hpp"
#include "weir/core/error.hpp"
#include "weir/udp/receiver.hpp"

namespace weir::acq {

/// The driver's options from its settings; errors `file:line: driver "NAME": ...` name the key.
/// Each stream's channel must be one of the driver's `channels`. Thread: any.
[[nodiscard]] core::Result<UdpOptions> udp_options(const config::DriverDecl& decl);

/// udp_options(decl), discarded: the check `weir check` and `weir run` make. Thread: any.
[[nodiscard]] core::Result<void> check_udp_driver(const config::Pipeline& pipeline, const config::DriverDecl& decl);

}  // namespace weir::acq
