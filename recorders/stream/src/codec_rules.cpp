// --codec: which codec each recorded channel's data chunks go through (recorder.hpp).
#include <fnmatch.h>

#include <string>

#include "weir/recorder/recorder.hpp"

namespace weir::rec {

namespace {

core::Result<CodecChoice> parse_choice(std::string_view name) {
  if (name == "auto") return CodecChoice{{}, true};
  auto chosen = codec::parse(name);
  if (!chosen) return tl::make_unexpected(chosen.error());
  return CodecChoice{*chosen, false};
}

bool is_integer(core::Dtype dtype) noexcept {
  return dtype != core::Dtype::f32 && dtype != core::Dtype::f64 && dtype != core::Dtype::c64;
}

}  // namespace

core::Result<void> parse_codecs(std::string_view text, RecordOptions& options) {
  RecordOptions parsed;
  std::size_t from = 0;
  while (from <= text.size()) {
    const std::size_t comma = std::min(text.find(',', from), text.size());
    const std::string_view item = text.substr(from, comma - from);
    from = comma + 1;
    if (item.empty()) return core::fail(core::Errc::invalid_argument, "--codec '" + std::string(text) + "': an empty item");
    const std::size_t eq = item.find('=');
    auto chosen = parse_choice(eq == std::string_view::npos ? item : item.substr(eq + 1));
    if (!chosen) return tl::make_unexpected(core::with_context(chosen.error(), "--codec " + std::string(item)));
    if (eq == std::string_view::npos) {
      parsed.codec = *chosen;
      continue;
    }
    if (eq == 0) return core::fail(core::Errc::invalid_argument, "--codec " + std::string(item) + ": no channel pattern before '='");
    parsed.codecs.push_back(CodecRule{std::string(item.substr(0, eq)), *chosen});
  }
  options.codec = parsed.codec;
  options.codecs = std::move(parsed.codecs);
  return {};
}

codec::Codec codec_for(const RecordOptions& options, std::string_view name, core::Dtype dtype) {
  const std::string channel(name);
  CodecChoice choice = options.codec;
  for (const CodecRule& rule : options.codecs)
    if (fnmatch(rule.pattern.c_str(), channel.c_str(), 0) == 0) {
      choice = rule.choice;
      break;
    }
  if (!choice.automatic) return choice.codec;
  return is_integer(dtype) ? kAutoIntegerCodec : codec::Codec{};
}

}  // namespace weir::rec
