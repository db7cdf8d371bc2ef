#pragma once
// The exit codes of every weir command; helpers that report a failure return the matching one.
// `weir run` reads them to decide what to do with a part that ended.

namespace weir::tools {

inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;      // the command ran and failed: missing key, arena in use, I/O
inline constexpr int kExitUsage = 2;      // the command line itself is wrong (a configuration error: not retried)
inline constexpr int kExitDiskFull = 3;   // a recorder stopped on a full disk (ENOSPC, or below its reserve)
inline constexpr int kExitDiskFault = 4;  // a recorder stopped on a disk fault: EIO, a read-only remount, its
                                          // output directory gone or replaced, or its filesystem changed
inline constexpr int kExitUnaccounted = 5;  // `weir audit`: blocks duplicated or unaccounted
inline constexpr int kExitNotVerified = 6;  // `weir audit --verify`: a file changed, missing or without a manifest

}  // namespace weir::tools
