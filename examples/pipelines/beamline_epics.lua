-- A beamline on EPICS: the detector recorded with the ring current, the motors' positions, the
-- sample's temperatures, the shutter and an MCA spectrum from the control system's IOCs (driver
-- "epics": Channel Access monitors; every update with the IOC's time, units and alarms, as NXlog), and
-- weir's own state, keys and run control served back to the control room as PVs under BL1:WEIR:
-- (epics "serve"; PV list: epics/ioc/README.md). Runs are started by any door: `caput -c
-- BL1:WEIR:Capture 1` (ophyd, Phoebus), `weir runctl start beamline`, the web page.
-- Without a beamline, the example's IOC stands in (EPICS base from scripts/epics_base.sh):
--   softIoc -S -d examples/pipelines/beamline_epics.db &
--   weir run examples/pipelines/beamline_epics.lua
--   caput -c BL1:WEIR:RunTitle "LaB6 calibration"; caput -c BL1:WEIR:Capture 1
--   caget BL1:WEIR:RunNumber_RBV BL1:WEIR:det0:Rate_RBV BL1:WEIR:ring:current
--   caput -c BL1:WEIR:Capture 0; weir runs ls runs/
-- Channel Access settings are EPICS's own environment variables (EPICS_CA_ADDR_LIST, ...), or
-- ca = { addr_list = "...", auto_addr_list = false, max_array_bytes = N } in the driver.
arena { name = "beamline", slots = 2048, channels = 8, channel_mb = 64, runs = "controlled" }

entry { title = "Beamline 1: powder diffraction", default = "det0" }
source "Storage ring" { type = "Synchrotron X-ray Source", probe = "x-ray" }

channel "det0" { dtype = "f32", rate = 1e6, block = 4096, ring = 256, units = "V", labels = {"detector"} }
driver "sim" { channels = {"det0"}, signal = "pulses", seed = 11, count_rate = 3000, tau = 50e-6, noise = 0.002 }

driver "epics" { name = "bl",
  pvs = {
    { pv = "BL1:SR:Current", key = "ring.current" },
    { pv = "BL1:MTR:X:RBV", key = "motor.x" },
    { pv = "BL1:MTR:Y:RBV", key = "motor.y" },
    { pv = "BL1:TC:Sample", key = "temp.sample" },
    { pv = "BL1:TC:Cryo", key = "temp.cryo" },
    { pv = "BL1:Shutter:Sts", key = "shutter" },
    { pv = "BL1:MCA:Spectrum", channel = "bl.mca", elements = 2048, rate = 1 },
  } }

-- Each run's files: det0, the MCA spectra, every PV update as NXlog (bl.pvlog), and every key's value
-- at the run's start.
record "hdf5" { channels = { "det0", "bl.*" }, keys = { "ring.*", "motor.*", "temp.*", "shutter" }, out = "runs/",
                flush_ms = 1000 }

epics "serve" { prefix = "BL1:WEIR:",
  keys = { "ring.current", "temp.sample", { key = "det.threshold", writable = true, units = "V", low = 0, high = 1 } },
  channels = { { channel = "det0", mode = "envelope", elements = 500 } } }
