#pragma once
// Reading what a command takes in whole: a value on stdin, a file of floats.
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "weir/core/error.hpp"

namespace weir::tools {

/// Reads `stream` to its end. Fails with Errc::io_error "cannot read <what>" when the stream reports
/// an error. Does not close `stream`. Thread: any (one reader per stream).
[[nodiscard]] core::Result<std::string> read_all(std::FILE* stream, std::string_view what);

/// The path that names stdin to read_file_or_stdin.
inline constexpr std::string_view kStdinPath = "-";

/// Reads the whole file at `path`, or stdin for "-". Fails with Errc::io_error "cannot open 'PATH':
/// REASON", or "cannot read WHAT" (read_all). Thread: any (stdin: one reader).
[[nodiscard]] core::Result<std::string> read_file_or_stdin(const std::string& path, std::string_view what);

/// Floats separated by whitespace and/or commas: "0.1, 0.2 0.3\n-4e-3" (a leading '+' allowed).
/// Fails with Errc::invalid_argument "WHAT: 'TOKEN' (number N) is not a float". Thread: any.
[[nodiscard]] core::Result<std::vector<float>> parse_floats(std::string_view text, std::string_view what);

}  // namespace weir::tools
