#pragma once
// Detector-like i16 ADC codes for the codec and recorder benchmarks: the simulator's pulses (its
// default pulse-height spectrum, 20 kcps at 1 MS/s) on a baseline with 2 mV of noise, at +-10 V full
// scale (0.31 mV an LSB: a sigma of 6.6 LSB). Private to bench/.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace weir::bench {

/// `bytes` bytes (whole i16 samples) of detector codes; empty if the generator cannot be made.
[[nodiscard]] std::vector<std::byte> detector_codes(std::uint64_t bytes);

}  // namespace weir::bench
