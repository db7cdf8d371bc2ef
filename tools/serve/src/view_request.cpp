#include "view_request.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace weir::serve {

std::vector<ViewAsk> parse_views(std::string_view text, std::uint32_t channel_capacity, bool& ok) {
  std::vector<ViewAsk> views;
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  ok = !j.is_discarded() && j.is_object() && j.contains("views") && j["views"].is_array();
  if (!ok) return views;
  for (const auto& v : j["views"]) {
    if (!v.is_object() || views.size() >= kMaxViewsPerSession) continue;
    ViewAsk ask;
    View& view = ask.view;
    const auto number = [&](const char* key, double fallback) {
      return v.contains(key) && v[key].is_number() ? v[key].get<double>() : fallback;
    };
    if (v.contains("name") && v["name"].is_string() && !v["name"].get<std::string>().empty()) {
      ask.name = v["name"].get<std::string>();
    } else {
      const double channel = number("channel", -1);
      if (channel < 0 || channel >= channel_capacity) continue;
      view.channel = static_cast<std::uint32_t>(channel);
    }
    view.kind = v.value("kind", std::string("envelope")) == "spectrum" ? FrameKind::spectrum : FrameKind::envelope;
    if (view.kind == FrameKind::envelope) {
      view.span = static_cast<std::uint64_t>(std::clamp(number("span", 4096), 1.0, 1e18));
      view.offset = static_cast<std::uint64_t>(std::clamp(number("offset", 0), 0.0, 1e18));
      view.columns = static_cast<std::uint32_t>(std::clamp(number("columns", 1000), 1.0, double{kMaxColumns}));
      const std::string trig = v.value("trigger", std::string("off"));
      view.trigger = trig == "rising" ? Trigger::rising : trig == "falling" ? Trigger::falling : Trigger::off;
      view.level = static_cast<float>(number("level", 0));
    }
    views.push_back(std::move(ask));
  }
  return views;
}

}  // namespace weir::serve
