#pragma once
// What a failed call into a script leaves behind: its text, kept in a fixed buffer, and a verdict on
// whether to log it: only the first occurrence of each distinct message is logged, and at most
// kDistinctErrors of them, so a script that fails on every call logs a bounded amount.
#include <cstddef>
#include <cstdint>

#include "weir/lua_sandbox/sandbox.hpp"

namespace weir::lua_sandbox {

inline constexpr std::size_t kErrorBytes = 2048;      // last error kept: message plus traceback, truncated
inline constexpr std::uint32_t kDistinctErrors = 16;  // distinct messages a log passes on to be logged

/// The error texts of one script. Allocates nothing. Thread: the sandbox's.
class ErrorLog {
 public:
  /// Keeps the text of a failed Sandbox::call (status not ok, the error object on top of the
  /// sandbox's stack, left there): the message with its traceback, or for out_of_memory
  /// "FILE: not enough memory: the script's heap reached memory_mb = N MiB", or for a non-string
  /// error object "FILE: error object is a TYPE value". Returns true when the caller should log
  /// last_error(): its first line was not seen before and fewer than kDistinctErrors were logged.
  [[nodiscard]] bool record(const Sandbox& sandbox, CallStatus status) noexcept;

  /// Keeps `text` (truncated to kErrorBytes - 1) for a failure found outside Lua, such as a bad
  /// return value. Returns true when the caller should log it, as record does.
  [[nodiscard]] bool note(const char* text) noexcept;

  /// The last error kept; empty before the first.
  [[nodiscard]] const char* last_error() const noexcept { return last_error_; }
  /// Distinct messages passed on to be logged so far, at most kDistinctErrors.
  [[nodiscard]] std::uint32_t logged() const noexcept { return logged_; }

 private:
  bool first_time() noexcept;

  std::uint64_t seen_[kDistinctErrors] = {};  // FNV-1a of each distinct first line logged
  std::uint32_t logged_ = 0;
  char last_error_[kErrorBytes] = {};
};

}  // namespace weir::lua_sandbox
