#pragma once
// Small files several processes read-modify-write beside a run's recordings (run records, the run
// numbers, the run log): an flock on "<file>.lock" held while changing them, and each write whole and
// durable (a temporary file, fsync, rename, fsync of the directory). Private to the ledger.
#include <filesystem>
#include <string>

#include "weir/core/error.hpp"
#include "weir/core/unique_fd.hpp"

namespace weir::ledger::detail {

/// "<what> <path>: <reason>: <strerror>", an io_error.
[[nodiscard]] core::Error io_failure(const std::string& what, const std::filesystem::path& path, const std::string& reason,
                                     int error_number);

/// Replaces `path` with `text` atomically and durably; `what` names the file in errors ("run record").
[[nodiscard]] core::Result<void> write_atomically(const std::filesystem::path& path, const std::string& text,
                                                  const std::string& what);

/// Takes the exclusive flock on "<path>.lock" (made when missing), waiting at most 2 s; released when
/// the returned descriptor closes.
[[nodiscard]] core::Result<core::UniqueFd> lock_file(const std::filesystem::path& path, const std::string& what);

/// The whole file, or "" when it does not exist; fails naming it otherwise.
[[nodiscard]] core::Result<std::string> read_text(const std::filesystem::path& path, const std::string& what);

}  // namespace weir::ledger::detail
