-- A toy thermometer for the lua driver (acquisition/lua/README.md): a PT100 in a cryostat that
-- warms slowly from 290 K with a little noise. A real script would read a device here (a file under
-- /sys, a pipe a helper fills); this one computes its reading.
--
-- acquire(n, t) is called every `period` seconds; it returns one sample for the channel "temp" and
-- three keys: the sensor's resistance (f64), a status text and the last two readings (f64 array).
-- The same keys every call, from the first: a recorder sees their types when it opens its file.

local A = 3.9083e-3        -- PT100 (IEC 60751) above 0 degC: R = R0 (1 + A T + B T^2)
local B = -5.775e-7
local R0 = 100.0
local seed = 12345         -- a small linear congruential generator: the same run every time
local previous = nil

local function noise()
  seed = (seed * 1103515245 + 12345) % 2147483648
  return (seed / 2147483648 - 0.5) * 0.02   -- +-10 mK
end

function acquire(n, t)
  local kelvin = 290.0 + 0.5 * t + noise()
  local celsius = kelvin - 273.15
  local ohms = R0 * (1 + A * celsius + B * celsius * celsius)
  local out = {
    temp = kelvin,
    ["thermo.resistance"] = ohms,
    ["thermo.status"] = kelvin < 300 and "cold" or "warm",
    ["thermo.recent"] = {previous or kelvin, kelvin},
  }
  previous = kelvin
  return out
end
