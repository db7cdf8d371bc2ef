#pragma once
// Cold-path errors: a code for programs, text for people. Hot paths return small enums instead.
#include <cstdint>
#include <string>
#include <utility>

#include <tl/expected.hpp>

namespace weir::core {

enum class Errc : std::uint16_t {
  invalid_argument = 1,  // a name, size or option the caller gave is unusable
  not_found,             // no arena by that name or path
  already_exists,        // create over an existing arena without replace
  permission_denied,     // another user's arena, or a mode that forbids us
  shm_unavailable,       // shm_open / memfd / mmap / ftruncate failed
  layout_mismatch,       // foreign, corrupted, truncated or newer-version arena
  not_ready,             // creator never finished publishing the header
  io_error,              // read, write, rename or msync failed
  conflict,              // the state forbids it: a run start while one runs, a stop while idle
  busy,                  // a shared lock held past the wait's deadline, or every shared row taken
};

struct Error {
  Errc code;
  std::string what;  // "arena 'daq1': layout version 9 is newer than this build's 1"
};

template <class T>
using Result = tl::expected<T, Error>;

inline tl::unexpected<Error> fail(Errc code, std::string what) {
  return tl::make_unexpected(Error{code, std::move(what)});
}

/// Prefixes context to an error as it moves up: "snapshot run.arena: " + "open: ...".
inline Error with_context(Error e, const std::string& context) {
  e.what = context + ": " + e.what;
  return e;
}

const char* errc_name(Errc code) noexcept;

}  // namespace weir::core
