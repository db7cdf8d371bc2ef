#pragma once
// The one place where commands open arenas and turn core failures into messages and exit codes.
#include <cstdint>
#include <optional>
#include <string_view>

#include "weir/core/arena.hpp"
#include "weir/core/error.hpp"
#include "weir/core/kv_store.hpp"

namespace weir::tools {

enum class Access : std::uint8_t {
  read_only,     // PROT_READ: no attach row, no repairs
  read_write,    // needed to write keys
  prefer_write,  // writable when permitted, so a read can repair a dead writer's slot and report it
                 // torn instead of busy; read-only when the arena's mode forbids writing
};

/// Opens the arena named by `where` (a weir::core::Location string). On failure prints the reason to
/// stderr, naming the arena, and returns an empty optional; the caller then exits with kExitError.
[[nodiscard]] std::optional<core::Arena> open_arena(std::string_view where, Access access);

/// Prints "weir: <context>: <error>" (or just the error when context is empty) to stderr.
/// Returns kExitError so handlers can `return report_error(...)`.
int report_error(std::string_view context, const core::Error& error);

/// Prints a usage problem that CLI11 cannot see (it depends on several options) to stderr.
/// Returns kExitUsage.
int report_usage(std::string_view message);

/// The key a KvStore call was about, and where it lives, for error messages.
struct KeyContext {
  const core::Arena& arena;
  const core::KvStore& kv;
  std::string_view key;
};

/// Prints a KvStore failure as one sentence naming the key, the arena and the reason, with the
/// arena's limits for key_too_long and value_too_large. `verb` says what was tried ("set", "read").
/// `value_bytes` is the size of the value that was written, for value_too_large. Returns kExitError.
/// Requires: status != KvStatus::ok.
int report_kv_failure(core::KvStatus status, const KeyContext& context, std::string_view verb,
                      std::uint64_t value_bytes = 0);

}  // namespace weir::tools
