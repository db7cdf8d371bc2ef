#include "weir/dsp/shard_adapter.hpp"

#include <algorithm>
#include <cstring>

namespace weir::dsp {

void write_error(char* error, std::size_t error_bytes, std::string_view kind, std::string_view message) noexcept {
  if (error == nullptr || error_bytes == 0) return;
  std::size_t at = 0;
  const std::string_view separator = kind.empty() ? "" : ": ";
  for (const std::string_view part : {kind, separator, message}) {
    const std::size_t n = std::min(part.size(), error_bytes - 1 - at);
    std::memcpy(error + at, part.data(), n);
    at += n;
  }
  error[at] = '\0';
}

}  // namespace weir::dsp
