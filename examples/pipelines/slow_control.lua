-- A slow-control logger for a data-logger box: eight slow sensor channels (10 Hz to 1 kHz), a
-- sliding-window stats shard on each (keys tempN.mean, tempN.rms, ... for displays), and one
-- recorder that rotates its HDF5 file every hour or 256 MiB. This is the pipeline the systemd unit
-- in examples/systemd/ runs at boot.
arena { name = "logger", slots = 1024, channels = 16, channel_mb = 16, consumers = 64 }

for i = 0, 3 do
  channel ("temp" .. i) { dtype = "f32", rate = 10, block = 10, ring = 64, units = "K", labels = {"slow", "temp"} }
end
for i = 0, 3 do
  channel ("vac" .. i) { dtype = "f32", rate = 1000, block = 100, ring = 64, units = "mbar", labels = {"slow", "vacuum"} }
end

driver "sim" { channels = {"temp0", "temp1", "temp2", "temp3"}, name = "thermometers", signal = "noise",
               offset = 4.2, amplitude = 0.01, seed = 1 }
driver "sim" { channels = {"vac0", "vac1", "vac2", "vac3"}, name = "gauges", signal = "sine",
               offset = 1e-6, amplitude = 1e-7, frequency = 0.05 }

for i = 0, 3 do
  shard "stats" { input = "temp" .. i, window = 600 }  -- a minute of 10 Hz samples
  shard "stats" { input = "vac" .. i, window = 6000 }  -- six seconds of 1 kHz samples
end

record "hdf5" { channels = {"temp*", "vac*"}, keys = {"temp*", "vac*"}, out = "logs/", rotate_s = 3600,
                rotate_mb = 256, flush_ms = 2000, compress = 4 }
