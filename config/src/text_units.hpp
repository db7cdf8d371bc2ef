#pragma once
// Sizes as people read them in the pipeline checker's messages.
#include <cstdint>
#include <string>

#include <fmt/format.h>

namespace weir::config {

/// "12.5 MiB".
inline std::string mib(std::uint64_t bytes) { return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / 1048576.0); }

}  // namespace weir::config
