// Braille canvas and envelope plot: pure code, no terminal and no arena.
#include "weir/scope/braille_canvas.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace weir::scope {

namespace {

constexpr double kRangeMargin = 0.05;    // each side of auto_range gets this fraction of the span
constexpr double kFlatHalfSpan = 0.1;    // a flat trace at v gets v +- this fraction of |v|
constexpr double kFlatZeroHalfSpan = 1;  // ... or +- this when v is 0

}  // namespace

void append_utf8(std::string& out, char32_t c) {
  const auto u = static_cast<std::uint32_t>(c);
  const auto byte = [&out](std::uint32_t b) { out.push_back(static_cast<char>(static_cast<unsigned char>(b))); };
  if (u < 0x80U) {
    byte(u);
  } else if (u < 0x800U) {
    byte(0xC0U | (u >> 6));
    byte(0x80U | (u & 0x3FU));
  } else if (u < 0x10000U) {
    byte(0xE0U | (u >> 12));
    byte(0x80U | ((u >> 6) & 0x3FU));
    byte(0x80U | (u & 0x3FU));
  } else {
    byte(0xF0U | (u >> 18));
    byte(0x80U | ((u >> 12) & 0x3FU));
    byte(0x80U | ((u >> 6) & 0x3FU));
    byte(0x80U | (u & 0x3FU));
  }
}

BrailleCanvas::BrailleCanvas(std::size_t cols, std::size_t rows) : cols_(cols), rows_(rows), bits_(cols * rows, 0) {}

void BrailleCanvas::clear() noexcept { std::fill(bits_.begin(), bits_.end(), std::uint8_t{0}); }

void BrailleCanvas::set(std::size_t x, std::size_t y) noexcept {
  if (x >= dot_width() || y >= dot_height()) return;
  bits_[(y / kCellDotsY) * cols_ + x / kCellDotsX] |= braille_bit(x % kCellDotsX, y % kCellDotsY);
}

void BrailleCanvas::vbar(std::size_t x, std::size_t y0, std::size_t y1) noexcept {
  if (y0 > y1) std::swap(y0, y1);
  y1 = std::min(y1, dot_height() == 0 ? 0 : dot_height() - 1);
  for (std::size_t y = y0; y <= y1; ++y) set(x, y);
}

char32_t BrailleCanvas::cell(std::size_t col, std::size_t row) const noexcept {
  if (col >= cols_ || row >= rows_) return kBrailleBlank;
  return kBrailleBlank + bits_[row * cols_ + col];
}

std::string BrailleCanvas::row_utf8(std::size_t row) const {
  std::string out;
  out.reserve(cols_ * 3);
  for (std::size_t col = 0; col < cols_; ++col) {
    const char32_t c = cell(col, row);
    append_utf8(out, c == kBrailleBlank ? U' ' : c);
  }
  return out;
}

YRange auto_range(std::span<const float> mins, std::span<const float> maxs) {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  for (const float v : mins)
    if (std::isfinite(v)) lo = std::min(lo, double{v}), hi = std::max(hi, double{v});
  for (const float v : maxs)
    if (std::isfinite(v)) lo = std::min(lo, double{v}), hi = std::max(hi, double{v});
  if (!(lo <= hi)) return YRange{};  // no data at all
  if (lo == hi) {
    const double half = lo == 0 ? kFlatZeroHalfSpan : std::abs(lo) * kFlatHalfSpan;
    return YRange{lo - half, hi + half};
  }
  const double margin = (hi - lo) * kRangeMargin;
  return YRange{lo - margin, hi + margin};
}

std::size_t value_to_dot_row(double v, const YRange& range, std::size_t dot_height) noexcept {
  if (dot_height == 0) return 0;
  const double last = static_cast<double>(dot_height - 1);
  const double row = std::round((range.hi - v) / (range.hi - range.lo) * last);
  if (!(row > 0)) return 0;  // also NaN
  return row >= last ? dot_height - 1 : static_cast<std::size_t>(row);
}

void plot_envelope(BrailleCanvas& canvas, std::span<const float> mins, std::span<const float> maxs,
                   const YRange& range) {
  const std::size_t n = std::min(mins.size(), maxs.size());
  const std::size_t width = canvas.dot_width();
  if (n == 0 || width == 0) return;
  bool have_prev = false;
  double prev_lo = 0;
  double prev_hi = 0;
  for (std::size_t x = 0; x < width; ++x) {
    // Buckets [b0, b1) fall in this column: one bucket spread over several columns when zoomed in,
    // several folded into one when there are more buckets than columns.
    const std::size_t b0 = x * n / width;
    const std::size_t b1 = std::max(b0 + 1, (x + 1) * n / width);
    double lo = std::numeric_limits<double>::infinity();
    double hi = -std::numeric_limits<double>::infinity();
    for (std::size_t b = b0; b < b1 && b < n; ++b) {
      if (std::isnan(mins[b]) || std::isnan(maxs[b])) continue;
      lo = std::min(lo, double{mins[b]});
      hi = std::max(hi, double{maxs[b]});
    }
    if (!(lo <= hi)) {
      have_prev = false;  // a gap in the data stays a gap on screen
      continue;
    }
    double top = hi;
    double bottom = lo;
    if (have_prev) {  // reach the previous bar, so a jump between columns is drawn as an edge
      top = std::max(top, prev_lo);
      bottom = std::min(bottom, prev_hi);
    }
    canvas.vbar(x, value_to_dot_row(top, range, canvas.dot_height()),
                value_to_dot_row(bottom, range, canvas.dot_height()));
    have_prev = true;
    prev_lo = lo;
    prev_hi = hi;
  }
}

}  // namespace weir::scope
