#pragma once
// Numbers in error messages: up to 15 significant digits, so 1048576 reads 1048576 and 0.1 reads 0.1.
#include <array>
#include <cstdio>
#include <string>

namespace weir::dsp::detail {

inline std::string num(double value) {
  std::array<char, 32> text{};
  std::snprintf(text.data(), text.size(), "%.15g", value);
  return text.data();
}

}  // namespace weir::dsp::detail
