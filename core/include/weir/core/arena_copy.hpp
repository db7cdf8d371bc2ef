#pragma once
// Consistent copies of an arena's keys: snapshot to a file, restore from one.
#include <cstdint>
#include <string_view>

#include "weir/core/arena.hpp"

namespace weir::core {

struct SnapshotStats {
  std::uint64_t keys_copied = 0;
  std::uint64_t torn_skipped = 0;  // values a dead writer left torn: not copied as good data
  std::uint64_t bytes = 0;         // size of the resulting arena
};

/// Writes a file-backed arena of the same geometry holding every live key of src, each read
/// through its seqlock (never a torn value). Writes FILE.tmp then renames, so FILE is either the
/// old file or the complete new one. Writers are not stopped. Thread: any.
[[nodiscard]] Result<SnapshotStats> snapshot_arena(const Arena& src, std::string_view file_path);

/// Creates the arena `where` with the snapshot's geometry and copies its keys in. An existing
/// arena is refused unless replace is set and nobody is attached to it.
[[nodiscard]] Result<SnapshotStats> restore_arena(std::string_view file_path, std::string_view where, bool replace);

}  // namespace weir::core
