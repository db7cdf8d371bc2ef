#pragma once
// Nanoseconds per millisecond and per second, for the commands' options (ms or s, maybe fractional)
// and their clock arithmetic: defined once here, as the command files compile together (a unity build).
#include <cstdint>

namespace weir::tools {

inline constexpr std::int64_t kNsPerMs = 1'000'000;
inline constexpr std::int64_t kNsPerSecond = 1'000'000'000;

}  // namespace weir::tools
