#pragma once
// The command a forwarded key becomes: a printf-like format with at most one conversion, checked
// once ("VOLT %.3f", "MODE %s", "OUTP ON"), then filled from the key's value.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "weir/core/error.hpp"

namespace weir::acq {

inline constexpr std::uint32_t kMaxConversionWidth = 256;  // a width or precision past this is refused: the command would not fit anyway

class CommandFormat {
 public:
  enum class Arg : std::uint8_t { none, integer, unsigned_integer, real, text };

  /// Parses `format`: literal text, "%%", and at most one conversion of d i u x X o e E f F g G a A s
  /// with optional flags (-+ #0), width and precision (no '*', no length modifiers). Thread: any.
  [[nodiscard]] static core::Result<CommandFormat> parse(std::string_view format);

  [[nodiscard]] Arg arg() const noexcept { return arg_; }

  /// Fills the format from a number; false if it does not fit out. Thread: any; no allocation.
  bool format_number(double value, std::span<char> out, std::size_t& length) const noexcept;
  /// Fills the format from text: a %s conversion takes it as is; a numeric one needs it to be a
  /// number (false otherwise). Thread: any; no allocation.
  bool format_text(std::string_view value, std::span<char> out, std::size_t& length) const noexcept;

 private:
  std::string prefix_;  // literal text before the conversion, "%%" already folded
  std::string spec_;    // the conversion, e.g. "%.3f"; empty with Arg::none
  std::string suffix_;  // literal text after it
  Arg arg_ = Arg::none;
};

}  // namespace weir::acq
