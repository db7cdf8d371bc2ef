-- A UDP digitizer: one board streaming 16-bit samples at 10 MS/s as VITA 49 signal-data packets
-- (stream id 1, 4096 samples a packet, sample-count timestamps) to port 5000 of this host. The
-- driver puts them into channel adc0 (gaps published for lost packets, counters in digitizer.* keys),
-- an fft shard watches the spectrum (channel adc0.psd), stats feed keys adc0.*, and a lossless
-- recorder writes the samples, the spectra and the driver's keys to HDF5 under runs/.
--   weir check examples/pipelines/udp_digitizer.lua
--   weir run examples/pipelines/udp_digitizer.lua --duration 30
-- Without the board, the load generator stands in for it (same port, same stream):
--   weir udpgen --port 5000 --rate 1e7 --samples 4096 --seconds 20
arena { name = "digitizer", slots = 1024, channels = 8, channel_mb = 128, consumers = 16 }

-- Raw ADC codes are recorded as they come; the calibration (a +-1 V input range) is stored beside
-- them, so a reader computes volts = offset + scale * code.
channel "adc0" { dtype = "i16", rate = 1e7, block = 4096, ring = 2048, units = "counts", labels = {"udp"},
                 calibration = { scale = 1 / 32768, offset = 0, units = "V" } }

driver "udp" { name = "digitizer", channels = {"adc0"}, port = 5000, format = "vita49",
               streams = { {id = 1, channel = "adc0"} }, rcvbuf = 67108864, batch = 32, reorder = 2 }

shard "fft" { input = "adc0", size = 4096, window = "hann", spectrum = "psd", average = "linear", averages = 16 }
shard "stats" { input = "adc0", window = 1048576 }

record "hdf5" { channels = {"adc0", "adc0.*"}, keys = {"digitizer.*"}, out = "runs/", policy = "lossless",
                flush_ms = 1000 }
