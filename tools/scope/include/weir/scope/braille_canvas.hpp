#pragma once
// Braille plotting for terminal scopes: a grid of cells, each drawn as one Unicode braille
// character holding 2x4 dots (U+2800 plus one bit per dot), and the min/max envelope plot that
// fills it with one vertical bar per dot column, so a one-sample spike is never lost.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace weir::scope {

inline constexpr char32_t kBrailleBlank = U'\u2800';  // the braille cell with no dots
inline constexpr std::size_t kCellDotsX = 2;           // dot columns per braille cell
inline constexpr std::size_t kCellDotsY = 4;           // dot rows per braille cell

/// The bit of dot (dx, dy) in a braille code point: dx 0..1 left to right, dy 0..3 top to bottom.
/// Requires: dx < kCellDotsX and dy < kCellDotsY.
[[nodiscard]] constexpr std::uint8_t braille_bit(std::size_t dx, std::size_t dy) noexcept {
  constexpr std::uint8_t kBits[kCellDotsY][kCellDotsX] = {{0x01, 0x08}, {0x02, 0x10}, {0x04, 0x20}, {0x40, 0x80}};
  return kBits[dy][dx];
}

/// Appends code point `c` to `out` as UTF-8. Thread: any.
void append_utf8(std::string& out, char32_t c);

/// A grid of cols x rows braille cells, addressed by dot: x in [0, 2 cols), y in [0, 4 rows),
/// y = 0 at the top. Thread: one owner.
class BrailleCanvas {
 public:
  BrailleCanvas(std::size_t cols, std::size_t rows);

  [[nodiscard]] std::size_t cols() const noexcept { return cols_; }
  [[nodiscard]] std::size_t rows() const noexcept { return rows_; }
  [[nodiscard]] std::size_t dot_width() const noexcept { return cols_ * kCellDotsX; }
  [[nodiscard]] std::size_t dot_height() const noexcept { return rows_ * kCellDotsY; }

  /// Turns every dot off.
  void clear() noexcept;
  /// Turns dot (x, y) on; dots outside the canvas are ignored.
  void set(std::size_t x, std::size_t y) noexcept;
  /// Turns on every dot of column x from row y0 to row y1, both included, in either order.
  void vbar(std::size_t x, std::size_t y0, std::size_t y1) noexcept;
  /// The code point of one cell: kBrailleBlank plus the bits of its dots.
  [[nodiscard]] char32_t cell(std::size_t col, std::size_t row) const noexcept;
  /// One row of cells as UTF-8; cells without dots are spaces.
  [[nodiscard]] std::string row_utf8(std::size_t row) const;

 private:
  std::size_t cols_;
  std::size_t rows_;
  std::vector<std::uint8_t> bits_;  // one byte of dot bits per cell, row-major
};

/// The vertical range a plot maps onto the canvas height; lo < hi.
struct YRange {
  double lo = -1;
  double hi = 1;
};

/// A range holding every finite value of mins and maxs, padded by a margin; a flat or empty
/// trace gets a range around its value (or [-1, 1]). Thread: any.
[[nodiscard]] YRange auto_range(std::span<const float> mins, std::span<const float> maxs);

/// The dot row of value v: hi at row 0, lo at the last row, clamped to the canvas.
[[nodiscard]] std::size_t value_to_dot_row(double v, const YRange& range, std::size_t dot_height) noexcept;

/// Draws an envelope of n buckets (mins[i] <= maxs[i], NaN for no data) across the canvas width:
/// each dot column shows the min..max of the buckets it covers as a vertical bar, stretched to
/// touch the previous column's bar so steep edges stay connected. Requires: mins.size() == maxs.size().
void plot_envelope(BrailleCanvas& canvas, std::span<const float> mins, std::span<const float> maxs,
                   const YRange& range);

}  // namespace weir::scope
