#include "weir/tools/arena_access.hpp"

#include <string>

#include <fmt/format.h>

#include "weir/tools/exit_codes.hpp"
#include "weir/tools/output.hpp"

namespace weir::tools {

std::optional<core::Arena> open_arena(std::string_view where, Access access) {
  core::OpenOptions options;
  options.read_only = access == Access::read_only;
  auto arena = core::Arena::open(where, options);
  if (!arena && access == Access::prefer_write && arena.error().code == core::Errc::permission_denied) {
    options.read_only = true;
    arena = core::Arena::open(where, options);
  }
  if (!arena) {
    report_error(fmt::format("cannot open '{}'", where), arena.error());
    return std::nullopt;
  }
  return std::move(*arena);
}

int report_error(std::string_view context, const core::Error& error) {
  if (context.empty()) {
    print_error(error.what);
  } else {
    print_error(fmt::format("{}: {}", context, error.what));
  }
  return kExitError;
}

int report_usage(std::string_view message) {
  print_error(message);
  fmt::print(stderr, "Run with --help for more information.\n");
  return kExitUsage;
}

int report_kv_failure(core::KvStatus status, const KeyContext& context, std::string_view verb,
                      std::uint64_t value_bytes) {
  using core::KvStatus;
  const std::string arena = context.arena.location().describe();
  const std::string_view key = context.key;
  const char* reason = core::kv_status_text(status);
  std::string message;
  switch (status) {
    case KvStatus::not_found:
      message = fmt::format("key '{}' not found in {}", key, arena);
      break;
    case KvStatus::torn:
      message = fmt::format("key '{}' in {} is torn ({}); set the key again to repair it", key, arena, reason);
      break;
    case KvStatus::key_too_long:
      message = fmt::format("cannot {} key '{}': it is {} bytes and {} allows keys of at most {} bytes", verb, key,
                            key.size(), arena, context.kv.key_bytes());
      break;
    case KvStatus::key_empty:
      message = fmt::format("cannot {} an empty key in {}: {}", verb, arena, reason);
      break;
    case KvStatus::value_too_large:
      message = fmt::format("cannot {} key '{}': the value is {} bytes and {} allows values of at most {} bytes",
                            verb, key, value_bytes, arena, context.kv.value_bytes());
      break;
    case KvStatus::type_mismatch:
      message = fmt::format("cannot {} key '{}' in {}: {} (integer operations need an i64 or u64 key)", verb, key,
                            arena, reason);
      break;
    case KvStatus::ok:
    case KvStatus::busy:
    case KvStatus::full:
    case KvStatus::stale_handle:
    case KvStatus::read_only:
      message = fmt::format("cannot {} key '{}' in {}: {} ({})", verb, key, arena, reason,
                            core::kv_status_name(status));
      break;
  }
  print_error(message);
  return kExitError;
}

}  // namespace weir::tools
