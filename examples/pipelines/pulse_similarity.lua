-- Find pulses like this one: the detector bench's simulated preamplifier (Cs-137 / Co-60-like lines,
-- 2000 counts/s at 1 MS/s), a trigger that captures every pulse (64 samples before, 192 after), an
-- embed shard that turns each capture into a 32-float vector with the encoder the build trains, and
-- an ann service that keeps an HNSW index over them. While it runs, ask for the 10 nearest pulses
-- of one of them:
--   weir run examples/pipelines/pulse_similarity.lua --duration 60 &
--   weir vector search pulses pulses --like pulses/det0.events/17 -k 10   # key, score, time, sequence
-- or from Python: weir.Arena("pulses").vectors("pulses").search(like="pulses/det0.events/17")
arena { name = "pulses", vectors = 20000, vector_dim = 32, channels = 8 }

channel "det0" { dtype = "f32", rate = 1e6, block = 4096, ring = 256, units = "V", labels = {"detector"} }

driver "sim" { channels = {"det0"}, signal = "pulses", seed = 7, count_rate = 2000, tau = 50e-6, noise = 0.002 }

shard "trigger" { input = "det0", level = 0.05, hysteresis = 0.01, pre = 64, post = 192, holdoff = 64 }
-- A ring of 16384 keys pulses/det0.events/<i>: the newest 16384 pulses, each with its time and sequence.
shard "embed" { input = "det0.events", part = "pulses", capacity = 16384, batch = 16, policy = "lossless" }
ann "pulses" { m = 16, ef = 64, ef_construction = 100 }
