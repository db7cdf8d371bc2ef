#include "weir/config/fields.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <fmt/core.h>

#include "weir/core/edit_distance.hpp"

namespace weir::config {

core::Error error_at(const Origin& origin, const std::string& message) {
  return core::Error{core::Errc::invalid_argument, origin.where() + ": " + message};
}

using core::Result;

std::string Setting::as_text() const {
  switch (type) {
    case Type::integer: return std::to_string(integer);
    case Type::number: {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%.17g", number);
      return buf;
    }
    case Type::boolean: return boolean ? "true" : "false";
    case Type::text: return text;
    case Type::table: break;
  }
  std::string joined;
  for (const auto& item : items) joined += (joined.empty() ? "" : ",") + item.as_text();
  return joined;
}

bool Setting::is_name_list() const noexcept {
  if (type != Type::table || !fields.empty()) return false;
  for (const auto& item : items)
    if (item.type != Type::text && item.type != Type::number && item.type != Type::integer) return false;
  return true;
}

const char* Setting::type_name() const noexcept {
  switch (type) {
    case Type::number: return "a number";
    case Type::integer: return "an integer";
    case Type::text: return "a string";
    case Type::boolean: return "a boolean";
    case Type::table: return "a table";
  }
  return "a value";
}

std::string did_you_mean(const std::string& word, std::span<const char* const> known) {
  const char* best = nullptr;
  std::size_t best_distance = 3;
  for (const char* k : known) {
    const std::size_t d = core::edit_distance(word, k);
    if (d < best_distance) best = k, best_distance = d;
  }
  return best != nullptr ? std::string(" (did you mean '") + best + "'?)" : std::string{};
}

core::Error Fields::error(const std::string& message) const { return error_at(origin_, what_ + ": " + message); }

std::optional<Setting> Fields::take(const std::string& key) {
  const auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  Setting taken = std::move(it->second);
  values_.erase(it);
  return taken;
}

Result<std::string> Fields::text(const std::string& key, std::optional<std::string> fallback) {
  const std::optional<Setting> v = take(key);
  if (!v) {
    if (fallback) return *fallback;
    return tl::make_unexpected(error("'" + key + "' is required"));
  }
  if (v->type != Setting::Type::text)
    return tl::make_unexpected(error("'" + key + "' must be a string, not " + v->type_name()));
  return v->text;
}

Result<long long> Fields::integer(const std::string& key, long long lo, long long hi, std::optional<long long> fallback) {
  const std::optional<Setting> v = take(key);
  if (!v) {
    if (fallback) return *fallback;
    return tl::make_unexpected(error("'" + key + "' is required"));
  }
  long long n = 0;
  if (v->type == Setting::Type::integer) {
    n = v->integer;
  } else if (v->type == Setting::Type::number && std::floor(v->number) == v->number && std::abs(v->number) < 9e18) {
    n = static_cast<long long>(v->number);
  } else {
    return tl::make_unexpected(error("'" + key + "' must be a whole number, not " +
                                     (v->type == Setting::Type::number ? v->as_text() : std::string(v->type_name()))));
  }
  if (n < lo || n > hi)
    return tl::make_unexpected(error(fmt::format("'{}' = {} is out of range {} to {}", key, n, lo, hi)));
  return n;
}

Result<double> Fields::number(const std::string& key, std::optional<double> fallback) {
  const std::optional<Setting> v = take(key);
  if (!v) {
    if (fallback) return *fallback;
    return tl::make_unexpected(error("'" + key + "' is required"));
  }
  if (v->type == Setting::Type::integer) return static_cast<double>(v->integer);
  if (v->type != Setting::Type::number)
    return tl::make_unexpected(error("'" + key + "' must be a number, not " + v->type_name()));
  return v->number;
}

Result<bool> Fields::boolean(const std::string& key, std::optional<bool> fallback) {
  const std::optional<Setting> v = take(key);
  if (!v) {
    if (fallback) return *fallback;
    return tl::make_unexpected(error("'" + key + "' is required"));
  }
  if (v->type != Setting::Type::boolean)
    return tl::make_unexpected(error("'" + key + "' must be true or false, not " + v->type_name()));
  return v->boolean;
}

Result<std::vector<std::string>> Fields::list(const std::string& key, bool required) {
  const std::optional<Setting> v = take(key);
  if (!v) {
    if (required) return tl::make_unexpected(error("'" + key + "' is required"));
    return std::vector<std::string>{};
  }
  if (v->type == Setting::Type::text) return std::vector<std::string>{v->text};  // one name alone is a list of one
  if (!v->is_name_list())
    return tl::make_unexpected(error("'" + key + "' must be a list of names, not " + v->type_name() +
                                     (v->type == Setting::Type::table ? " with other things in it" : "")));
  std::vector<std::string> names;
  for (const auto& item : v->items) names.push_back(item.as_text());
  return names;
}

Result<Fields> Fields::table(const std::string& key, bool required) {
  std::optional<Setting> v = take(key);
  const std::string name = what_ + "." + key;
  if (!v) {
    if (required) return tl::make_unexpected(error("'" + key + "' is required"));
    return Fields(name, origin_, {});
  }
  if (v->type != Setting::Type::table || !v->items.empty())
    return tl::make_unexpected(error("'" + key + "' must be a table of name = value, not " +
                                     (v->type == Setting::Type::table ? std::string("a list") : v->type_name())));
  return Fields(name, origin_, std::move(v->fields));
}

Result<std::vector<Fields>> Fields::items(const std::string& key, bool required) {
  std::optional<Setting> v = take(key);
  std::vector<Fields> out;
  if (!v) {
    if (required) return tl::make_unexpected(error("'" + key + "' is required"));
    return out;
  }
  if (v->type != Setting::Type::table || !v->fields.empty())
    return tl::make_unexpected(error("'" + key + "' must be a list of tables { {...}, {...} }, not " +
                                     (v->type == Setting::Type::table ? std::string("a table with named entries")
                                                                      : v->type_name())));
  for (std::size_t i = 0; i < v->items.size(); ++i) {
    Setting& item = v->items[i];
    const std::string name = fmt::format("{}.{}[{}]", what_, key, i + 1);
    if (item.type != Setting::Type::table || !item.items.empty())
      return tl::make_unexpected(error_at(origin_, name + ": must be a table of name = value, not " +
                                                       (item.type == Setting::Type::table ? std::string("a list")
                                                                                          : item.type_name())));
    out.emplace_back(name, origin_, std::move(item.fields));
  }
  return out;
}

Result<std::map<std::string, std::string>> Fields::rest(std::span<const char* const> allowed) {
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : values_) {
    if (!allowed.empty() &&
        std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return key == a; }))
      return tl::make_unexpected(error("unknown key '" + key + "'" + did_you_mean(key, allowed)));
    if (value.type == Setting::Type::table && !value.is_name_list())
      return tl::make_unexpected(error("'" + key + "' must be a value or a list of names, not a table with tables or "
                                       "named entries in it"));
    out[key] = value.as_text();
  }
  values_.clear();
  return out;
}

std::map<std::string, Setting> Fields::take_rest() {
  std::map<std::string, Setting> out;
  out.swap(values_);
  return out;
}

Fields driver_fields(const DriverDecl& driver) {
  return Fields("driver \"" + driver.name + "\"", driver.origin, driver.settings);
}

Result<void> Fields::no_other_keys(std::span<const char* const> known) {
  if (values_.empty()) return {};
  const std::string& key = values_.begin()->first;
  return tl::make_unexpected(error("unknown key '" + key + "'" + did_you_mean(key, known)));
}

}  // namespace weir::config
