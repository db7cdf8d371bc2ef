#pragma once
// A map keyed by std::string that finds by std::string_view without making a string (no allocation
// on a lookup). Private to the kafka module.
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace weir::kafka {

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

template <class Value>
using StringMap = std::unordered_map<std::string, Value, StringHash, std::equal_to<>>;

}  // namespace weir::kafka
