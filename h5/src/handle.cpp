#include "weir/h5/handle.hpp"

namespace weir::h5 {

bool Handle::reset() noexcept {
  if (id_ < 0) return true;
  const hid_t id = std::exchange(id_, H5I_INVALID_HID);
  herr_t rc = -1;
  switch (H5Iget_type(id)) {
    case H5I_FILE: rc = H5Fclose(id); break;
    case H5I_GROUP: rc = H5Gclose(id); break;
    case H5I_DATASET: rc = H5Dclose(id); break;
    case H5I_DATASPACE: rc = H5Sclose(id); break;
    case H5I_DATATYPE: rc = H5Tclose(id); break;
    case H5I_ATTR: rc = H5Aclose(id); break;
    case H5I_GENPROP_LST: rc = H5Pclose(id); break;
    default: rc = H5Idec_ref(id) < 0 ? -1 : 0; break;
  }
  return rc >= 0;
}

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
