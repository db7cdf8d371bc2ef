#pragma once
// The exit codes of every weir command; helpers that report a failure return the matching one.

namespace weir::tools {

inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;  // the command ran and failed: missing key, arena in use, I/O
inline constexpr int kExitUsage = 2;  // the command line itself is wrong

}  // namespace weir::tools
