#pragma once
// The page's files, embedded at build time (cmake/embed_web.cmake writes web_assets.cpp).
#include <span>
#include <string_view>

namespace weir::serve {

struct WebAsset {
  std::string_view path;          // "/index.html", "/app.js", ...
  std::string_view content_type;
  std::string_view body;
};

/// Every embedded file. Thread: any.
[[nodiscard]] std::span<const WebAsset> web_assets() noexcept;

}  // namespace weir::serve
