#pragma once
// Numbers in the cold-path messages of the built-in shards: the one definition every family uses.
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace weir::dsp::detail {

/// The shortest "%g" text (6 to 17 significant digits) that reads back as `value`: 0.1 reads
/// "0.1", 1048576 reads "1048576", 0.7071067811865476 keeps all its digits. Thread: any.
inline std::string num(double value) {
  std::array<char, 40> text{};
  for (int digits = 6; digits <= 17; ++digits) {
    std::snprintf(text.data(), text.size(), "%.*g", digits, value);
    if (std::strtod(text.data(), nullptr) == value) break;
  }
  return text.data();
}

/// A whole number of samples as digits ("50000000", not "5e+07"); anything else as num(). Thread: any.
inline std::string whole(double value) {
  if (value >= 0 && value < 9.0e18 && value == static_cast<double>(static_cast<std::uint64_t>(value)))
    return std::to_string(static_cast<std::uint64_t>(value));
  return num(value);
}

}  // namespace weir::dsp::detail
