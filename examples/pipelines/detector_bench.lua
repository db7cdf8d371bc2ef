-- A detector bench: a simulated preamplifier signal (pulses from a Cs-137 / Co-60-like spectrum,
-- 2000 counts/s) digitised at 1 MS/s; an MCA builds the pulse-height spectrum (key det0.spectrum),
-- an FFT watches the noise (channel det0.psd), stats feed slow-control keys, and a lossless
-- recorder writes everything to HDF5 under runs/.
--   weir check examples/pipelines/detector_bench.lua
--   weir run examples/pipelines/detector_bench.lua --duration 10
arena { name = "detector", slots = 1024, channels = 8, channel_mb = 64 }

-- What the recordings say of themselves (NeXus /entry/title, definition, the default plot, and
-- /entry/instrument/source): docs/design/recording.md, "NeXus metadata".
entry { title = "Detector bench: simulated Cs-137 and Co-60 lines", default = "det0" }
source "Cs-137 and Co-60 check sources" { probe = "photon" }

channel "det0" { dtype = "f32", rate = 1e6, block = 4096, ring = 256, units = "V", labels = {"detector"} }

driver "sim" { channels = {"det0"}, signal = "pulses", seed = 7, count_rate = 2000, tau = 50e-6, noise = 0.002 }

shard "mca" { input = "det0", rise = 10e-6, flat = 3e-6, tau = 50e-6, threshold = 0.05, bins = 1024, range = 1.5 }
shard "fft" { input = "det0", size = 4096, window = "hann", spectrum = "psd", average = "linear", averages = 16 }
shard "stats" { input = "det0", window = 262144 }

record "hdf5" { channels = {"det0", "det0.*"}, keys = {"det0.*"}, out = "runs/", flush_ms = 1000 }
