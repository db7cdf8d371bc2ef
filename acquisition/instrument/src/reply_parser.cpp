// The built-in reply parsers: strict numbers (std::from_chars, plus the leading '+' SCPI
// instruments send), lists of them, and text.
#include "weir/instrument/reply_parser.hpp"

#include <cctype>
#include <charconv>

namespace weir::acq {

namespace {

bool is_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'; }

std::string_view trim(std::string_view text) noexcept {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

// Parses one number at the start of text; returns the bytes used (0: none).
std::size_t number_at(std::string_view text, double& out) noexcept {
  std::size_t skip = 0;
  if (!text.empty() && text.front() == '+') {
    skip = 1;  // "+1.5E+00": SCPI's usual sign; from_chars takes only '-'
    if (text.size() > 1 && (text[1] == '-' || text[1] == '+')) return 0;
  }
  const char* first = text.data() + skip;
  const char* last = text.data() + text.size();
  const auto [end, ec] = std::from_chars(first, last, out, std::chars_format::general);
  if (ec != std::errc()) return 0;  // not a number, or out of a double's range ("1e999"): no value
  return static_cast<std::size_t>(end - text.data());
}

class NumberParser final : public ReplyParser {
 public:
  ParseStatus parse(std::string_view reply, ParsedReply& out) noexcept override {
    out.kind = ReplyKind::number;
    return parse_number(reply, out.number);
  }
};

class NumbersParser final : public ReplyParser {
 public:
  ParseStatus parse(std::string_view reply, ParsedReply& out) noexcept override {
    out.kind = ReplyKind::numbers;
    std::size_t count = 0;
    out.numbers.resize(out.numbers.capacity());  // within capacity: no allocation
    const ParseStatus status = parse_numbers(reply, out.numbers, count);
    out.numbers.resize(count);
    return status;
  }
};

class TextParser final : public ReplyParser {
 public:
  ParseStatus parse(std::string_view reply, ParsedReply& out) noexcept override {
    out.kind = ReplyKind::text;
    if (!reply.empty() && reply.back() == '\r') reply.remove_suffix(1);  // "\r\n" lines read with "\n"
    out.text = reply;
    return ParseStatus::ok;
  }
};

}  // namespace

const char* reply_kind_name(ReplyKind kind) noexcept {
  switch (kind) {
    case ReplyKind::number: return "number";
    case ReplyKind::numbers: return "numbers";
    case ReplyKind::text: return "text";
    case ReplyKind::lua: return "lua";
  }
  return "?";
}

core::Result<ReplySpec> parse_reply_spec(std::string_view text) {
  for (const ReplyKind k : {ReplyKind::number, ReplyKind::numbers, ReplyKind::text})
    if (text == reply_kind_name(k)) return ReplySpec{k, {}};
  if (text.starts_with("lua:")) {
    const std::string_view function = text.substr(4);
    const bool name_ok = !function.empty() && (std::isalpha(static_cast<unsigned char>(function[0])) != 0 || function[0] == '_');
    bool chars_ok = true;
    for (const char c : function) chars_ok = chars_ok && (std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_');
    if (!name_ok || !chars_ok)
      return core::fail(core::Errc::invalid_argument,
                        "reply 'lua:FUNCTION' needs a Lua function name, not '" + std::string(function) + "'");
    return ReplySpec{ReplyKind::lua, std::string(function)};
  }
  return core::fail(core::Errc::invalid_argument,
                    "reply must be number, numbers, text or lua:FUNCTION, not '" + std::string(text) + "'");
}

core::Result<std::unique_ptr<ReplyParser>> make_reply_parser(const ReplySpec& spec, const std::string& script,
                                                             const LuaReplyParserFactory& lua_factory) {
  switch (spec.kind) {
    case ReplyKind::number: return std::unique_ptr<ReplyParser>(std::make_unique<NumberParser>());
    case ReplyKind::numbers: return std::unique_ptr<ReplyParser>(std::make_unique<NumbersParser>());
    case ReplyKind::text: return std::unique_ptr<ReplyParser>(std::make_unique<TextParser>());
    case ReplyKind::lua:
      if (script.empty())
        return core::fail(core::Errc::invalid_argument,
                          "reply 'lua:" + spec.function + "' needs the instrument's script = \"file.lua\"");
      if (!lua_factory)
        return core::fail(core::Errc::invalid_argument,
                          "reply 'lua:" + spec.function +
                              "': Lua reply parsers are not available in this build yet; use number, numbers or text");
      return lua_factory(script, spec.function);
  }
  return core::fail(core::Errc::invalid_argument, "unknown reply kind");
}

ParseStatus parse_number(std::string_view text, double& out) noexcept {
  text = trim(text);
  if (text.empty()) return ParseStatus::mismatch;
  double value = 0;
  const std::size_t used = number_at(text, value);
  if (used == 0 || used != text.size()) return ParseStatus::mismatch;
  out = value;
  return ParseStatus::ok;
}

ParseStatus parse_numbers(std::string_view text, std::span<double> out, std::size_t& count) noexcept {
  count = 0;
  text = trim(text);
  bool need_value = false;  // after a comma a number must follow
  while (!text.empty()) {
    double value = 0;
    const std::size_t used = number_at(text, value);
    if (used == 0) return ParseStatus::mismatch;
    if (count == out.size()) return ParseStatus::too_many;
    out[count++] = value;
    text.remove_prefix(used);
    need_value = false;
    // A separator: whitespace, at most one comma, whitespace. Nothing else may follow a number.
    std::size_t i = 0;
    while (i < text.size() && is_space(text[i])) ++i;
    if (i < text.size() && text[i] == ',') {
      ++i;
      need_value = true;
      while (i < text.size() && is_space(text[i])) ++i;
    }
    if (i == 0 && !text.empty()) return ParseStatus::mismatch;  // "1x": not a separator
    text.remove_prefix(i);
  }
  return need_value ? ParseStatus::mismatch : ParseStatus::ok;
}

}  // namespace weir::acq
