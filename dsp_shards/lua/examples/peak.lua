-- Peak, RMS and clipped samples of every block of one input channel.
-- Run with: outputs = "key:adc0.peak,key:adc0.rms,channel:adc0.clipped"

-- Full scale of the input's sample type: integer types clip at their limit, floats at +-1.
local full_scale = ({ i8 = 127, i16 = 32767, i32 = 2147483647, f32 = 1.0, f64 = 1.0 })[weir.dtype] or math.huge
local clipped = {}  -- refilled in place each block, so a block leaves no garbage behind

function process(block)
  local n = #block
  if n == 0 then return end
  local sumsq = 0.0
  for i = 1, n do
    local x = block[i]
    sumsq = sumsq + x * x
    clipped[i] = (x >= full_scale or x <= -full_scale) and 1 or 0
  end
  for i = n + 1, #clipped do clipped[i] = nil end  -- a short block after a longer one
  weir.set("adc0.peak", math.max(weir.max(block), -weir.min(block)))
  weir.set("adc0.rms", math.sqrt(sumsq / n))
  weir.emit("adc0.clipped", clipped)
end
