// The cold half of WEIR_ENFORCE / WEIR_ASSERT.
#include "weir/core/assert.hpp"

#include <cstdio>
#include <cstdlib>

namespace weir::core {

void enforce_failed(const char* file, int line, const char* condition, const char* message) noexcept {
  std::fprintf(stderr, "%s:%d: enforce failed: %s: %s\n", file, line, condition, message != nullptr ? message : "");
  std::fflush(stderr);
  std::abort();
}

}  // namespace weir::core
