// Frame text for `weir scope`: header, y-axis scale, time axis, key help.
#include "weir/scope/scope_view.hpp"

#include <array>
#include <cmath>

#include <fmt/format.h>

namespace weir::scope {

namespace {

constexpr std::size_t kHeaderLines = 1;
constexpr std::size_t kFooterLines = 2;  // the time axis and the labels under it
constexpr std::size_t kMinPlotCols = 8;
constexpr std::string_view kKeyHelp = "q quit  space pause  +/- zoom  t trigger  j/k level";

struct Prefix {
  double scale;
  const char* name;
};
constexpr std::array<Prefix, 9> kPrefixes{{{1e-12, "p"}, {1e-9, "n"}, {1e-6, "u"}, {1e-3, "m"}, {1, ""},
                                           {1e3, "k"}, {1e6, "M"}, {1e9, "G"}, {1e12, "T"}}};
constexpr std::size_t kNoPrefix = 4;
constexpr double kRoundsUp = 1 - 5e-4;  // 999.5 prints as 1e+03 at three digits: take the next prefix

bool starts_code_point(char c) { return (static_cast<unsigned char>(c) & 0xC0U) != 0x80U; }

std::string pad_left(std::string_view text, std::size_t width) {
  const std::size_t w = display_width(text);
  return w >= width ? std::string(text) : std::string(width - w, ' ') + std::string(text);
}

}  // namespace

std::size_t display_width(std::string_view text) {
  std::size_t n = 0;
  for (const char c : text) n += starts_code_point(c) ? 1 : 0;
  return n;
}

std::string format_si(double value, std::string_view units) {
  const std::string space = units.empty() ? "" : " ";
  if (!std::isfinite(value)) return fmt::format("{}{}{}", value, space, units);
  std::size_t p = kNoPrefix;
  const double magnitude = std::abs(value);
  if (magnitude > 0) {
    while (p + 1 < kPrefixes.size() && magnitude >= kPrefixes[p + 1].scale * kRoundsUp) ++p;
    while (p > 0 && magnitude < kPrefixes[p].scale * kRoundsUp) --p;
  }
  const std::string number = fmt::format("{:.3g}", value / kPrefixes[p].scale);
  const bool glue = !units.empty() || p != kNoPrefix;
  return fmt::format("{}{}{}{}", number, glue ? " " : "", kPrefixes[p].name, units);
}

std::string fit_width(std::string_view line, std::size_t width) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (starts_code_point(line[i]) && n++ == width) return std::string(line.substr(0, i));
  }
  return std::string(line);
}

std::string header_line(const ScopeStatus& s, std::size_t width) {
  const double span_s = s.rate_hz > 0 ? static_cast<double>(s.span_samples) / s.rate_hz : 0;
  const char* state = s.trigger == TriggerState::triggered ? "trig'd" : "auto";
  const std::string units = s.units.empty() ? "(no units)" : s.units;
  const std::string paused = s.paused ? " | PAUSED" : "";
  std::string trigger = "trig off";
  if (s.trigger != TriggerState::off) trigger = fmt::format("trig {} rising: {}", format_si(s.trigger_level, s.units), state);
  std::string line = fmt::format("{} {} {} {} | span {} ({} samples) | {} | blocks {} written, {} dropped{}",
                                 s.channel, format_si(s.rate_hz, "Hz"), s.dtype, units, format_si(span_s, "s"),
                                 s.span_samples, trigger, s.blocks_written, s.blocks_dropped, paused);
  if (display_width(line) <= width) return line;
  // The same facts, tersely, for narrow terminals.
  trigger = s.trigger == TriggerState::off ? "trig off" : fmt::format("trig {} {}", format_si(s.trigger_level, s.units), state);
  return fmt::format("{} {} {} {} | {} | {} | {} blk {} drop{}", s.channel, format_si(s.rate_hz, "Hz"), s.dtype,
                     units, format_si(span_s, "s"), trigger, s.blocks_written, s.blocks_dropped, paused);
}

FrameLayout frame_layout(std::size_t cols, std::size_t rows, std::size_t label_width) {
  FrameLayout layout;
  layout.label_width = label_width;
  if (rows <= kHeaderLines + kFooterLines || cols < label_width + 1 + kMinPlotCols) return layout;
  layout.plot_rows = rows - kHeaderLines - kFooterLines;
  layout.plot_cols = cols - label_width - 1;
  return layout;
}

std::string axis_label(double value, std::string_view units) { return format_si(value, units); }

std::vector<std::string> compose_frame(const ScopeStatus& status, const BrailleCanvas& canvas, const YRange& range,
                                       const FrameLayout& layout, std::size_t cols, std::string_view left,
                                       std::string_view right) {
  std::vector<std::string> lines;
  lines.push_back(fit_width(header_line(status, cols), cols));
  if (layout.plot_rows == 0 || layout.plot_cols == 0) {
    lines.push_back(fit_width("(terminal too small to plot)", cols));
    return lines;
  }
  const std::size_t rows = canvas.rows();
  const std::size_t mid = rows / 2;
  const double per_row = (range.hi - range.lo) / static_cast<double>(rows);
  std::size_t trigger_row = rows;  // none
  if (status.trigger != TriggerState::off && status.trigger_level >= range.lo && status.trigger_level <= range.hi) {
    const std::size_t dot = value_to_dot_row(status.trigger_level, range, canvas.dot_height());
    trigger_row = dot / kCellDotsY;
  }
  for (std::size_t r = 0; r < rows; ++r) {
    std::string label;
    const char* axis = "│";
    if (r == 0 || r == mid || r + 1 == rows) {
      const double value = r == 0 ? range.hi : r + 1 == rows ? range.lo : range.hi - per_row * (static_cast<double>(r) + 0.5);
      label = axis_label(value, status.units);
      axis = "┤";
    }
    if (r == trigger_row) axis = "T";  // the trigger level's row
    std::string line = pad_left(fit_width(label, layout.label_width), layout.label_width);
    line += axis;
    line += canvas.row_utf8(r);
    lines.push_back(std::move(line));
  }
  std::string axis_line(layout.label_width, ' ');
  axis_line += "└";
  for (std::size_t c = 0; c < canvas.cols(); ++c) axis_line += "─";
  lines.push_back(std::move(axis_line));
  // Time labels at both ends, the key help centred between them when it fits.
  const std::size_t inner = canvas.cols() + 1;
  std::string footer(layout.label_width, ' ');
  std::string middle;
  const std::size_t used = display_width(left) + display_width(right);
  if (used + kKeyHelp.size() + 4 <= inner) {
    const std::size_t gap = inner - used - kKeyHelp.size();
    middle = std::string(gap / 2, ' ') + std::string(kKeyHelp) + std::string(gap - gap / 2, ' ');
  } else if (used + 1 <= inner) {
    middle = std::string(inner - used, ' ');
  }
  footer += std::string(left) + middle + std::string(right);
  lines.push_back(fit_width(footer, cols));
  return lines;
}

}  // namespace weir::scope
