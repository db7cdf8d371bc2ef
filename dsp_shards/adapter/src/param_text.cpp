// Parsing is strict on purpose: the whole text must be the value, so "10 kHz" or "1,5" is refused
// rather than read as 10 or 1.
#include "weir/dsp/param_text.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "weir/core/edit_distance.hpp"

namespace weir::dsp {

std::optional<std::int64_t> parse_int(std::string_view text) {
  std::int64_t v = 0;
  const char* end = text.data() + text.size();
  const char* begin = text.data() + (text.starts_with('+') ? 1 : 0);
  const auto [ptr, ec] = std::from_chars(begin, end, v);
  if (ec != std::errc{} || ptr != end || text.empty()) return std::nullopt;
  return v;
}

std::optional<double> parse_real(std::string_view text) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text.front())) != 0) return std::nullopt;
  const std::string copy(text);  // strtod needs a terminated string
  char* end = nullptr;
  const double v = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<bool> parse_bool(std::string_view text) {
  for (const char* yes : {"true", "yes", "on", "1"})
    if (text == yes) return true;
  for (const char* no : {"false", "no", "off", "0"})
    if (text == no) return false;
  return std::nullopt;
}

bool among_choices(std::string_view text, std::string_view choices) noexcept {
  for (std::size_t start = 0;;) {
    const std::size_t bar = choices.find('|', start);
    if (choices.substr(start, bar == std::string_view::npos ? bar : bar - start) == text) return true;
    if (bar == std::string_view::npos) return false;
    start = bar + 1;
  }
}

std::string closest_name(std::string_view name, const std::vector<std::string_view>& candidates,
                         std::size_t max_distance) {
  std::string best;
  std::size_t best_distance = max_distance + 1;
  for (std::string_view c : candidates) {
    const std::size_t d = core::edit_distance(name, c);
    // A suggestion must be closer than rewriting most of the word.
    if (d < best_distance && d < std::max<std::size_t>(c.size(), name.size())) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

}  // namespace weir::dsp
