#pragma once
// Contract checks. A failed check is a bug, never an error to return:
//   WEIR_ENFORCE(cond, msg)  always on: prints "file:line: enforce failed: cond: msg" to stderr and aborts
//   WEIR_ASSERT(cond, msg)   the same in debug builds; compiled out (cond not evaluated) under NDEBUG
// msg is a string literal (or any const char*). Use ENFORCE where a broken precondition would read or
// write outside the mapping; ASSERT for checks too costly to keep in release hot paths.
namespace weir::core {

/// Prints the failed check and aborts. Called only by the macros below: out of line and cold, so a
/// check costs one predicted branch where it stands. Thread: any.
[[noreturn, gnu::cold, gnu::noinline]] void enforce_failed(const char* file, int line, const char* condition,
                                                           const char* message) noexcept;

}  // namespace weir::core

#define WEIR_ENFORCE(cond, msg)                                                      \
  do {                                                                               \
    if (!(cond)) [[unlikely]]                                                        \
      ::weir::core::enforce_failed(__FILE__, __LINE__, #cond, msg);                  \
  } while (false)

#if defined(NDEBUG)
#define WEIR_ASSERT(cond, msg)            \
  do {                                    \
    if (false) static_cast<void>(cond);   \
  } while (false)
#else
#define WEIR_ASSERT(cond, msg) WEIR_ENFORCE(cond, msg)
#endif
