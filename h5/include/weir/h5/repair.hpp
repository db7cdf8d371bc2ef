#pragma once
// A SWMR writer's marks: HDF5 notes in the superblock that a writer has the file open for SWMR
// writing, and only clears that when the writer closes it. A killed writer leaves the marks, and
// then HDF5 opens the file only as a SWMR reader (h5py swmr=True): h5dump, plain h5py and other
// tools refuse it. Clearing them is what `h5clear -s` does. Thread: one per process (serial HDF5).
#include <string>

#include "weir/core/error.hpp"

namespace weir::h5 {

/// Whether the file carries a SWMR writer's marks. Fails naming the file when HDF5 cannot open it
/// either way (missing, not HDF5, damaged).
[[nodiscard]] core::Result<bool> swmr_marked(const std::string& path);

/// Clears the marks, so every tool opens the file. Requires: no process writes the file (a live
/// writer's file would be corrupted by the next thing it writes).
[[nodiscard]] core::Result<void> clear_swmr_marks(const std::string& path);

}  // namespace weir::h5
