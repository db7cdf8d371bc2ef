#pragma once
// InstrumentOptions from a pipeline's `driver "scpi" { ... }` or `driver "serial" { ... }`.
//
//   driver "scpi" { name = "dmm", host = "127.0.0.1", port = 5025, channels = {"dmm.volt"},
//     terminator = "\n",                 -- or in_terminator / out_terminator
//     timeout_ms = 1000,                 -- write and reply timeouts; each also on its own:
//                                        -- connect_timeout_ms, write_timeout_ms, reply_timeout_ms, read_timeout_ms
//     max_reply = 1024, on_error = "skip",   -- or "reconnect"
//     reconnect_min_ms = 100, reconnect_max_ms = 10000, write_poll_ms = 100,
//     script = "parse.lua", memory_mb = 16, instructions = 1000000,   -- for reply = "lua:FUNCTION"
//     init = { "*RST", {send = "*IDN?", expect = "WEIR,*", key = "dmm.idn"} },
//     queries = { {send = "MEAS:VOLT?", every = 0.5, key = "dmm.volt", units = "V", reply = "number",
//                  channel = "dmm.volt"} },
//     writes = { {key = "psu.setpoint", send = "VOLT %g", readback = "VOLT?", key_readback = "psu.volt",
//                 units = "V"} } }
//   driver "serial" { name = "gauge", device = "/dev/ttyUSB0", baud = 9600, data_bits = 8,
//     parity = "none", stop_bits = 1, flow = "none", ... the same query settings ... }
#include "weir/config/pipeline.hpp"
#include "weir/core/error.hpp"
#include "weir/instrument/instrument_options.hpp"

namespace weir::acq {

/// The options a `driver "scpi"` or `driver "serial"` declaration asks for, checked like
/// validate(InstrumentOptions) and against the declaration's channels. Every error is
/// `file:line: driver "NAME"...: what`: an unknown key (with a did-you-mean), a missing send, an
/// unknown reply kind, a period <= 0, a baud rate termios does not know, ... A relative script path
/// is taken from the pipeline file's folder. Thread: any.
[[nodiscard]] core::Result<InstrumentOptions> instrument_options(const config::DriverDecl& decl);

/// The check `weir check` and `weir run` make before starting anything (supervisor's driver table):
/// instrument_options, then, for `reply = "lua:FUNCTION"` queries, that the script loads in its
/// bounded state and defines each function (`file:line: driver "NAME": query 1 ('STAT?'): reply
/// 'lua:status': parse.lua defines no global function 'status' (it is nil)").
[[nodiscard]] core::Result<void> check_instrument_driver(const config::Pipeline& pipeline,
                                                         const config::DriverDecl& decl);

}  // namespace weir::acq
