#pragma once
// `weir repair`: makes the files a killed recorder left open in every tool, by clearing the marks
// HDF5 keeps while a SWMR writer has a file open (what `h5clear -s` does, and what `weir record`
// does to a run it continues). docs/design/recording.md, "Crash safety".
#include <cstdint>
#include <filesystem>
#include <string>

#include "weir/core/error.hpp"

namespace weir::rec {

struct RepairResult {
  bool was_marked = false;  // the file carried a SWMR writer's marks
  bool cleared = false;     // and they are gone now
  std::uint32_t writer_pid = 0;  // the recording's recorder_pid, 0 when not a weir recording
  std::string writer_host;
};

/// Clears a file's SWMR write marks when its writer is gone: a weir recording whose recorder (host,
/// pid, start time) may still run, or a file that is not a weir recording, is refused unless
/// `force`. An unmarked file is left alone (was_marked false). Fails naming the file: missing, not
/// HDF5, unreadable, a writer that may be alive. Thread: one per process (serial HDF5).
[[nodiscard]] core::Result<RepairResult> repair_file(const std::filesystem::path& path, bool force = false);

}  // namespace weir::rec
