-- A device read by a Lua function: a toy thermometer (thermometer.lua, beside this file) read ten
-- times a second by the lua driver, a sliding-window stats shard over its readings (keys temp.mean,
-- temp.rms, ...), and a recorder that writes the channel and every key to HDF5 under runs/.
--   weir check examples/pipelines/lua_device.lua
--   weir run examples/pipelines/lua_device.lua --duration 10
arena { name = "luadev", slots = 256, channels = 8, channel_mb = 4, consumers = 16 }

channel "temp" { dtype = "f64", rate = 10, block = 5, ring = 64, units = "K", labels = {"slow", "temp"} }

-- Errors in the script are counted in thermo.errors (and .lua_errors, .overruns, ...), never fatal.
driver "lua" { name = "thermo", channels = {"temp"}, script = "thermometer.lua", period = 0.1,
               memory_mb = 8, instructions = 100000 }

shard "stats" { input = "temp", window = 50 }  -- five seconds of readings

record "hdf5" { channels = {"temp"}, keys = {"temp.*", "thermo.*"}, out = "runs/", flush_ms = 500 }
