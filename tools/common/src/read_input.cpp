#include "weir/tools/read_input.hpp"

#include <array>
#include <cstddef>

#include <fmt/format.h>

namespace weir::tools {

namespace {
constexpr std::size_t kReadChunkBytes = 64 * 1024;  // one fread's worth
}  // namespace

core::Result<std::string> read_all(std::FILE* stream, std::string_view what) {
  std::string data;
  std::array<char, kReadChunkBytes> chunk{};
  for (;;) {
    const std::size_t n = std::fread(chunk.data(), 1, chunk.size(), stream);
    data.append(chunk.data(), n);
    if (n < chunk.size()) break;
  }
  if (std::ferror(stream) != 0) return core::fail(core::Errc::io_error, fmt::format("cannot read {}", what));
  return data;
}

}  // namespace weir::tools
