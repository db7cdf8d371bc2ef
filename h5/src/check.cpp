#include "weir/h5/check.hpp"

#include <string>

namespace weir::h5 {

core::Error error(std::string_view call, std::string_view what) {
  std::string text = std::string(call) + " " + std::string(what);
  if (std::string reason = last_error(); !reason.empty()) text += ": " + reason;
  return core::Error{core::Errc::io_error, std::move(text)};
}

core::Result<void> check(herr_t rc, std::string_view call, std::string_view what) {
  if (rc < 0) return tl::make_unexpected(error(call, what));
  return {};
}

}  // namespace weir::h5
