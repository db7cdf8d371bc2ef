#pragma once
// Parameter values as text, read one way everywhere: by the shard host when it resolves --param,
// and by the built-in shards when configure reads them again. A value the host accepted, a shard
// accepts.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace weir::dsp {

/// A whole decimal number, optionally signed ("+5", "-3"); the whole text, no blanks. Thread: any.
[[nodiscard]] std::optional<std::int64_t> parse_int(std::string_view text);

/// A finite number in strtod's syntax, the whole text, no leading blank. Thread: any.
[[nodiscard]] std::optional<double> parse_real(std::string_view text);

/// true/yes/on/1 or false/no/off/0. Thread: any.
[[nodiscard]] std::optional<bool> parse_bool(std::string_view text);

/// Whether text is one of the '|'-separated words of choices. Thread: any.
[[nodiscard]] bool among_choices(std::string_view text, std::string_view choices) noexcept;

/// The candidate closest to `name` by edit distance, or "" when none is close: a suggestion must be
/// within `max_distance` edits and closer than rewriting most of the word. Thread: any.
[[nodiscard]] std::string closest_name(std::string_view name, const std::vector<std::string_view>& candidates,
                                       std::size_t max_distance);

}  // namespace weir::dsp
