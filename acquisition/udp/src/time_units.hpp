#pragma once
// Nanoseconds and picoseconds per second, as reals: stream positions, rates and stamps.
namespace weir::acq {

inline constexpr double kNsPerS = 1e9;
inline constexpr double kPsPerS = 1e12;

}  // namespace weir::acq
