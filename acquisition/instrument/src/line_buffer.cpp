// LineBuffer: one fixed buffer per connection; lines are found by scanning for the terminator.
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "weir/instrument/line_transport.hpp"

namespace weir::acq {

core::Result<void> validate(const LineFraming& framing) {
  for (const auto& [what, term] : {std::pair{"out_terminator", &framing.out_terminator},
                                   std::pair{"in_terminator", &framing.in_terminator}}) {
    if (term->empty() || term->size() > kMaxTerminatorBytes)
      return core::fail(core::Errc::invalid_argument, std::string(what) + " must be 1 to " +
                                                          std::to_string(kMaxTerminatorBytes) + " bytes, not \"" +
                                                          escape_text(*term) + "\"");
  }
  if (framing.max_reply_bytes == 0 || framing.max_reply_bytes > kMaxMaxReplyBytes)
    return core::fail(core::Errc::invalid_argument, "max_reply_bytes must be 1 to " +
                                                        std::to_string(kMaxMaxReplyBytes) + ", not " +
                                                        std::to_string(framing.max_reply_bytes));
  return {};
}

std::string escape_text(std::string_view text, std::size_t max_bytes) {
  std::string out;
  for (const char c : text.substr(0, max_bytes)) {
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
          char hex[8];
          std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(c));
          out += hex;
        } else {
          out += c;
        }
    }
  }
  if (text.size() > max_bytes) out += "...";
  return out;
}

LineBuffer::LineBuffer(const LineFraming& framing)
    : buf_(framing.max_reply_bytes + framing.in_terminator.size()),
      terminator_(framing.in_terminator),
      max_line_(framing.max_reply_bytes) {}

void LineBuffer::commit(std::size_t n) noexcept { end_ += std::min(n, room_bytes()); }

std::size_t LineBuffer::append(std::string_view bytes) noexcept {
  compact();
  const std::size_t n = std::min(bytes.size(), room_bytes());
  std::memcpy(room(), bytes.data(), n);
  end_ += n;
  return n;
}

void LineBuffer::compact() noexcept {
  if (begin_ == 0) return;
  std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
  end_ -= begin_;
  begin_ = 0;
}

LineStatus LineBuffer::next(std::string_view& line) noexcept {
  if (begin_ == end_) {
    begin_ = end_ = 0;
    return LineStatus::empty;
  }
  const std::string_view unread(buf_.data() + begin_, end_ - begin_);
  const std::size_t at = terminator_.empty() ? std::string_view::npos : unread.find(terminator_);
  if (at != std::string_view::npos && at <= max_line_) {
    line = unread.substr(0, at);
    begin_ += at + terminator_.size();
    return LineStatus::line;
  }
  // No terminator: the reply may still grow unless max_line_ bytes already hold none (a partial
  // terminator may sit at the very end, so only bytes past max_line_ + its length decide).
  if (unread.size() >= max_line_ + terminator_.size() || (at != std::string_view::npos && at > max_line_)) {
    clear();
    return LineStatus::too_long;
  }
  compact();  // room for the rest of the line
  return LineStatus::partial;
}

}  // namespace weir::acq
