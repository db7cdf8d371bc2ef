// CommandFormat: one checked printf conversion, filled with snprintf into a caller buffer.
#include "weir/instrument/command_format.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "weir/instrument/reply_parser.hpp"

namespace weir::acq {

namespace {

// strchr would also find the terminating NUL: a '\0' in a format must not pass as a flag or letter.
bool one_of(std::string_view set, char c) noexcept { return set.find(c) != std::string_view::npos; }

bool append(std::span<char> out, std::size_t& at, std::string_view text) noexcept {
  if (at + text.size() > out.size()) return false;
  std::memcpy(out.data() + at, text.data(), text.size());
  at += text.size();
  return true;
}

}  // namespace

core::Result<CommandFormat> CommandFormat::parse(std::string_view format) {
  CommandFormat f;
  const auto bad = [&](const std::string& why) {
    return core::fail(core::Errc::invalid_argument, "command format \"" + std::string(format) + "\": " + why);
  };
  if (format.find('\0') != std::string_view::npos) return bad("a NUL byte in a command");
  bool seen = false;
  for (std::size_t i = 0; i < format.size(); ++i) {
    std::string& literal = seen ? f.suffix_ : f.prefix_;
    if (format[i] != '%') {
      literal += format[i];
      continue;
    }
    if (i + 1 < format.size() && format[i + 1] == '%') {
      literal += '%';
      ++i;
      continue;
    }
    if (seen) return bad("more than one conversion; a key gives one value");
    std::size_t j = i + 1;
    while (j < format.size() && one_of("-+ #0", format[j])) ++j;
    // A width or precision is capped: snprintf would spend its time padding to a huge one.
    const auto digits = [&](const char* what) -> core::Result<void> {
      std::uint32_t value = 0;
      for (; j < format.size() && format[j] >= '0' && format[j] <= '9'; ++j) {
        value = value * 10 + static_cast<std::uint32_t>(format[j] - '0');
        if (value > kMaxConversionWidth) return bad(std::string(what) + " larger than " + std::to_string(kMaxConversionWidth));
      }
      return {};
    };
    if (auto ok = digits("a field width"); !ok) return tl::make_unexpected(ok.error());
    if (j < format.size() && format[j] == '.') {
      ++j;
      if (auto ok = digits("a precision"); !ok) return tl::make_unexpected(ok.error());
    }
    if (j >= format.size()) return bad("a conversion without its letter at the end");
    const char c = format[j];
    if (one_of("di", c)) {
      f.arg_ = Arg::integer;
    } else if (one_of("uxXo", c)) {
      f.arg_ = Arg::unsigned_integer;
    } else if (one_of("eEfFgGaA", c)) {
      f.arg_ = Arg::real;
    } else if (c == 's') {
      f.arg_ = Arg::text;
    } else {
      return bad(std::string("unsupported conversion '%") + std::string(format.substr(i + 1, j - i)) +
                 "' (use d i u x X o e E f F g G a A or s)");
    }
    f.spec_ = std::string(format.substr(i, j - i + 1));
    if (c == 'd' || c == 'i') f.spec_.insert(f.spec_.size() - 1, "ll");
    if (f.arg_ == Arg::unsigned_integer) f.spec_.insert(f.spec_.size() - 1, "ll");
    seen = true;
    i = j;
  }
  return f;
}

bool CommandFormat::format_number(double value, std::span<char> out, std::size_t& length) const noexcept {
  std::size_t at = 0;
  if (!append(out, at, prefix_)) return false;
  int n = 0;
  const std::size_t room = out.size() - at;
  switch (arg_) {
    case Arg::none: break;
    case Arg::integer:
      if (!std::isfinite(value) || std::fabs(value) > 9.2e18) return false;
      n = std::snprintf(out.data() + at, room, spec_.c_str(), static_cast<long long>(std::llround(value)));
      break;
    case Arg::unsigned_integer:
      if (!std::isfinite(value) || value < 0 || value > 1.8e19) return false;
      n = std::snprintf(out.data() + at, room, spec_.c_str(), static_cast<unsigned long long>(std::llround(value)));
      break;
    case Arg::real: n = std::snprintf(out.data() + at, room, spec_.c_str(), value); break;
    case Arg::text: {
      char text[32];
      std::snprintf(text, sizeof text, "%.17g", value);
      n = std::snprintf(out.data() + at, room, spec_.c_str(), text);
      break;
    }
  }
  if (n < 0 || static_cast<std::size_t>(n) >= room) return false;
  at += static_cast<std::size_t>(n);
  if (!append(out, at, suffix_)) return false;
  length = at;
  return true;
}

bool CommandFormat::format_text(std::string_view value, std::span<char> out, std::size_t& length) const noexcept {
  if (arg_ != Arg::text) {
    double number = 0;
    if (arg_ != Arg::none && parse_number(value, number) != ParseStatus::ok) return false;
    return format_number(number, out, length);
  }
  std::size_t at = 0;
  if (!append(out, at, prefix_)) return false;
  // A %s with width or precision: format a bounded copy; a plain %s: the text as it is.
  if (spec_ == "%s") {
    if (!append(out, at, value)) return false;
  } else {
    char text[256];
    if (value.size() >= sizeof text) return false;
    std::memcpy(text, value.data(), value.size());
    text[value.size()] = '\0';
    const std::size_t room = out.size() - at;
    const int n = std::snprintf(out.data() + at, room, spec_.c_str(), text);
    if (n < 0 || static_cast<std::size_t>(n) >= room) return false;
    at += static_cast<std::size_t>(n);
  }
  if (!append(out, at, suffix_)) return false;
  length = at;
  return true;
}

}  // namespace weir::acq
