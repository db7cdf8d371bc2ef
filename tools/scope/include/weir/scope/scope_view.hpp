#pragma once
// The text of one `weir scope` frame: the header line, the y-axis scale beside the braille plot,
// the time axis and the key help. Pure: no terminal, no arena.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "weir/scope/braille_canvas.hpp"

namespace weir::scope {

enum class TriggerState : std::uint8_t { off, triggered, free_running };

/// What the header line says about the channel and the scope.
struct ScopeStatus {
  std::string channel;
  double rate_hz = 0;
  std::string units;
  std::string dtype;
  std::uint64_t span_samples = 0;
  TriggerState trigger = TriggerState::off;
  double trigger_level = 0;
  std::uint64_t blocks_written = 0;
  std::uint64_t blocks_dropped = 0;  // dropped at the source; what the scope skips is not a loss
  bool paused = false;
};

/// `value` with an SI prefix and three significant digits: "20 kHz", "-250 mV", "40 ms".
[[nodiscard]] std::string format_si(double value, std::string_view units);
/// Characters (code points) in a UTF-8 line; each takes one terminal column here.
[[nodiscard]] std::size_t display_width(std::string_view line);
/// The first `width` characters (code points) of a UTF-8 line.
[[nodiscard]] std::string fit_width(std::string_view line, std::size_t width);
/// The header line: channel, rate, dtype, units, span, trigger, blocks written and dropped;
/// a terser form of the same when the full one is wider than `width`.
[[nodiscard]] std::string header_line(const ScopeStatus& status, std::size_t width);

/// The plot's geometry in a terminal of cols x rows: a header line, the plot rows, a time axis
/// line and a footer line. Too small a terminal gives zero plot rows or columns.
struct FrameLayout {
  std::size_t label_width = 0;  // y-axis labels, then one axis character
  std::size_t plot_cols = 0;    // braille cells across
  std::size_t plot_rows = 0;    // braille cells down
};
[[nodiscard]] FrameLayout frame_layout(std::size_t cols, std::size_t rows, std::size_t label_width);

/// The lines of one frame. Marks the trigger level on the axis when `status.trigger` is not off;
/// `left` and `right` label the time axis ends. Every line fits `cols` characters.
[[nodiscard]] std::vector<std::string> compose_frame(const ScopeStatus& status, const BrailleCanvas& canvas,
                                                     const YRange& range, const FrameLayout& layout, std::size_t cols,
                                                     std::string_view left, std::string_view right);

/// The y-axis label of a value, as wide as it needs to be.
[[nodiscard]] std::string axis_label(double value, std::string_view units);

}  // namespace weir::scope
