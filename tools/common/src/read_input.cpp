#include "weir/tools/read_input.hpp"

#include <array>
#include <cerrno>
#include <charconv>
#include <cstddef>
#include <cstring>
#include <system_error>

#include <fmt/format.h>

namespace weir::tools {

namespace {
constexpr std::size_t kReadChunkBytes = 64 * 1024;  // one fread's worth

bool is_float_separator(char c) {
  return c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
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

core::Result<std::string> read_file_or_stdin(const std::string& path, std::string_view what) {
  const bool from_stdin = path == kStdinPath;
  std::FILE* f = from_stdin ? stdin : std::fopen(path.c_str(), "rb");
  if (f == nullptr)
    return core::fail(core::Errc::io_error, fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
  auto data = read_all(f, what);
  if (!from_stdin) std::fclose(f);
  return data;
}

core::Result<std::vector<float>> parse_floats(std::string_view text, std::string_view what) {
  std::vector<float> out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (is_float_separator(text[i])) {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < text.size() && !is_float_separator(text[end])) ++end;
    std::string_view token = text.substr(i, end - i);
    if (token.size() > 1 && token.front() == '+') token.remove_prefix(1);  // from_chars takes no '+'
    float value = 0;
    const auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
    if (ec != std::errc{} || ptr != token.data() + token.size()) {
      return core::fail(core::Errc::invalid_argument,
                        fmt::format("{}: '{}' (number {}) is not a float", what, text.substr(i, end - i), out.size() + 1));
    }
    out.push_back(value);
    i = end;
  }
  return out;
}

}  // namespace weir::tools
