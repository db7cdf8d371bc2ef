-- A day at the instrument: the detector, its shards and every scope stay up while runs come and go.
-- The recorder records only inside runs, each run into its own files (runs = "controlled"). Runs are
-- started and stopped by any door: the schedule below (five runs of exactly 250 blocks of det0, one
-- after the other), `weir runctl`, `weir serve --allow-control` (the page's Start/Stop), or experiment
-- control's pl72/6s4t through `weir kafka control`.
--   weir run examples/pipelines/beamtime_runs.lua
--   weir runctl start beamtime --title "background" --operator "A. Physicist" --sample "empty can"
--   weir runctl stop beamtime
--   weir runs ls runs/            # one line per run; runs/beamtime_runs.csv for pandas
--   weir audit runs/ --all-runs   # every run exact, and the blocks published between runs
arena { name = "beamtime", slots = 1024, channels = 8, channel_mb = 64, runs = "controlled",
        schedule = { start = true, stop_after_blocks = 250, restart = true, runs = 5 } }

entry { title = "Beamtime: pulses from a check source", default = "det0" }

channel "det0" { dtype = "f32", rate = 1e6, block = 4096, ring = 256, units = "V", labels = {"detector"} }

driver "sim" { channels = {"det0"}, signal = "pulses", seed = 7, count_rate = 2000, tau = 50e-6, noise = 0.002 }

shard "stats" { input = "det0", window = 262144 }

record "hdf5" { channels = {"det0"}, out = "runs/", flush_ms = 1000 }
