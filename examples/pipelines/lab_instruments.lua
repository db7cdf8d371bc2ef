-- Slow control from two line-based instruments over TCP (SCPI): a multimeter read twice a second
-- (its voltage also as a slow channel, recorded to HDF5 with every instrument key), and a power
-- supply whose voltage follows the key psu.setpoint (`weir set lab psu.setpoint 1.5`) and is read
-- back into psu.volt. Each driver counts its trouble in keys (dmm.timeouts, psu.reconnects, ...)
-- and reconnects by itself. Without the instruments, the fake ones of the tests stand in:
--   tests/acquisition/instrument/fake_scpi.py --tcp 5025 --kind dmm &
--   tests/acquisition/instrument/fake_scpi.py --tcp 5026 --kind psu &
arena { name = "lab", slots = 256, channels = 4, channel_mb = 4 }

channel "dmm.volt" { dtype = "f64", rate = 2, block = 1, ring = 64, units = "V", labels = {"slow"} }

driver "scpi" { name = "dmm", host = "127.0.0.1", port = 5025, channels = {"dmm.volt"}, timeout_ms = 500,
  init = { "*CLS", {send = "*IDN?", expect = "WEIR,FAKE-DMM,*", key = "dmm.idn"} },
  queries = {
    {send = "MEAS:VOLT?", every = 0.5, key = "dmm.volt", units = "V", channel = "dmm.volt"},
    {send = "MEAS:ARR?", every = 2, key = "dmm.scan", units = "V", reply = "numbers"},
    {send = "SYST:ERR?", every = 5, key = "dmm.last_error", reply = "text"},
  } }

driver "scpi" { name = "psu", host = "127.0.0.1", port = 5026, timeout_ms = 500, on_error = "reconnect",
  init = { "*RST", {send = "*IDN?", expect = "WEIR,FAKE-PSU,*", key = "psu.idn"} },
  queries = { {send = "MEAS:CURR?", every = 1, key = "psu.curr", units = "A"} },
  writes = { {key = "psu.setpoint", send = "VOLT %.3f", readback = "VOLT?", key_readback = "psu.volt", units = "V"} } }

record "hdf5" { channels = {"dmm.volt"}, keys = {"dmm.*", "psu.*"}, out = "logs/", flush_ms = 1000 }
