#pragma once
// HDF5 snapshots for `weir snapshot NAME FILE.h5` and periodic ones for `weir snapshot NAME DIR/
// --every S` (recorders/snapshot); the raw key copy of other FILE names stays in cmd_arena.cpp.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

namespace weir::tools {

struct H5SnapshotArgs {
  std::uint64_t blocks = 0;  // last blocks per channel; 0: the whole ring
  bool force = false;        // overwrite FILE.h5
  double every_s = 0;        // periodic into a directory
  std::uint64_t count = 0;   // periodic: stop after this many files (0: until SIGINT or SIGTERM)
};

/// Adds --blocks, --force, --every and --count to `weir snapshot`. Thread: main only.
void add_h5_snapshot_options(CLI::App& sub, H5SnapshotArgs& args);

/// Whether the command line asks for an HDF5 snapshot: FILE ends in ".h5" or "/", or an HDF5-only
/// option was given (run_h5_snapshot then explains what FILE must be).
[[nodiscard]] bool wants_h5_snapshot(const std::string& file, const H5SnapshotArgs& args);

/// Writes FILE.h5, one numbered file into DIR/, or (with --every) numbered files until SIGINT,
/// SIGTERM or --count. Returns the exit code; errors are printed. Thread: main only.
[[nodiscard]] int run_h5_snapshot(const std::string& where, const std::string& file, const H5SnapshotArgs& args,
                                  bool json);

}  // namespace weir::tools
