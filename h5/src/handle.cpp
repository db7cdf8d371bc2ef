#include "weir/h5/handle.hpp"

namespace weir::h5 {

void quiet_errors() noexcept { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

namespace {

herr_t collect(unsigned n, const H5E_error2_t* e, void* out) {
  auto* text = static_cast<std::string*>(out);
  if (e->desc == nullptr || e->desc[0] == '\0') return 0;
  if (n > 0) text->append("; ");
  text->append(e->desc);
  return 0;
}

}  // namespace

std::string last_error() {
  std::string text;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, collect, &text);
  H5Eclear2(H5E_DEFAULT);
  return text;
}

}  // namespace weir::h5
