#pragma once
// Reading what a command takes in whole: a value on stdin, a file of floats.
#include <cstdio>
#include <string>
#include <string_view>

#include "weir/core/error.hpp"

namespace weir::tools {

/// Reads `stream` to its end. Fails with Errc::io_error "cannot read <what>" when the stream reports
/// an error. Does not close `stream`. Thread: any (one reader per stream).
[[nodiscard]] core::Result<std::string> read_all(std::FILE* stream, std::string_view what);

}  // namespace weir::tools
