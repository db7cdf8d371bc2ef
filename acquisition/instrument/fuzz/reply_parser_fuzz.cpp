// libFuzzer target: bytes from an instrument, split into lines by LineBuffer and read by every
// reply parser; the same bytes as a command format. No crash, no UB, no line past its limit, no
// numbers past their room, and a refused reply leaves the value alone.
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "weir/instrument/command_format.hpp"
#include "weir/instrument/line_transport.hpp"
#include "weir/instrument/reply_parser.hpp"

namespace {

constexpr double kUntouched = 12345.678;  // a value no parse may change when it refuses

void check(bool ok) {
  if (!ok) std::abort();
}

void parse_line(std::string_view line) {
  double v = kUntouched;
  if (weir::acq::parse_number(line, v) != weir::acq::ParseStatus::ok) check(v == kUntouched);
  std::array<double, 16> numbers{};
  std::size_t count = 0;
  const weir::acq::ParseStatus s = weir::acq::parse_numbers(line, numbers, count);
  check(count <= numbers.size());
  if (s == weir::acq::ParseStatus::ok && count == 1) {
    double one = kUntouched;
    check(weir::acq::parse_number(line, one) == weir::acq::ParseStatus::ok);
    check(std::memcmp(&one, &numbers[0], sizeof one) == 0 || (std::isnan(one) && std::isnan(numbers[0])));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 2, size - 2);
  weir::acq::LineFraming framing;
  framing.in_terminator = (data[0] & 1U) != 0 ? "\r\n" : "\n";
  framing.max_reply_bytes = 1U + data[1];
  weir::acq::LineBuffer buffer(framing);
  // Feed in chunks whose size the input decides, as reads from a socket would arrive.
  std::size_t at = 0;
  const std::size_t chunk = 1U + (data[0] >> 1U);
  while (at < bytes.size()) {
    const std::size_t taken = buffer.append(bytes.substr(at, chunk));
    at += taken;
    for (;;) {
      std::string_view line;
      const weir::acq::LineStatus status = buffer.next(line);
      if (status == weir::acq::LineStatus::line) {
        check(line.size() <= framing.max_reply_bytes);
        check(line.find(framing.in_terminator) == std::string_view::npos);
        parse_line(line);
        continue;
      }
      check(buffer.buffered() <= framing.max_reply_bytes + framing.in_terminator.size());
      break;
    }
    if (taken == 0) buffer.clear();  // cannot happen after next(): a full buffer is too_long
  }
  parse_line(bytes);

  if (auto format = weir::acq::CommandFormat::parse(bytes.substr(0, 64)); format) {
    std::array<char, 128> out{};
    std::size_t length = 0;
    if (format->format_number(1.5, out, length)) check(length <= out.size());
    if (format->format_text(bytes, out, length)) check(length <= out.size());
  }
  return 0;
}
