#pragma once
// FFTW wisdom on disk: plans measured once are reused by every later process. Import before
// planning, export after. A missing or unreadable file only means planning from scratch.
#include <string>

#include "weir/core/error.hpp"

namespace weir::dsp {

/// $XDG_CACHE_HOME/weir/fftw3f.wisdom, else $HOME/.cache/weir/fftw3f.wisdom (a relative
/// XDG_CACHE_HOME is ignored, as the XDG spec asks). Fails when neither variable is usable.
/// Thread: control only (reads the environment).
[[nodiscard]] core::Result<std::string> default_wisdom_path();

/// Adds the wisdom in `path` to this process's. False when the file is missing, unreadable or not
/// wisdom; nothing is changed then. Thread: any (serialised with planning).
bool import_wisdom(const std::string& path) noexcept;

/// Writes this process's wisdom to `path` atomically: creates the directory, writes a temporary
/// file beside it, renames it over `path`. Fails naming the path and the step.
/// Thread: any (serialised with planning).
[[nodiscard]] core::Result<void> export_wisdom(const std::string& path);

}  // namespace weir::dsp
