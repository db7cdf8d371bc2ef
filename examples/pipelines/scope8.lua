-- An 8-channel scope pipeline: eight 1 MS/s channels of mixed test signals for `weir scope`, each
-- with a decimating low-pass filter (8x) feeding a slower channel a long-span view can follow.
--   weir run examples/pipelines/scope8.lua &
--   weir scope scope8 ch0
arena { name = "scope8", channels = 16, channel_mb = 96, consumers = 64 }

local signals = {"sine", "square", "chirp", "noise", "pulses", "sine", "square", "chirp"}
for i = 0, 7 do
  channel ("ch" .. i) { dtype = "f32", rate = 1e6, block = 4096, ring = 64, units = "V", labels = {"scope"} }
  driver "sim" { channels = {"ch" .. i}, name = "sim" .. i, signal = signals[i + 1], seed = i,
                 frequency = 1000 * (i + 1) }
  shard "filter" { input = "ch" .. i, type = "lowpass", cutoff = 40e3, taps = 63, decimate = 8, policy = "lossy" }
end
