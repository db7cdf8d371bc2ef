#include "weir/h5/types.hpp"

namespace weir::h5 {

Type text_type() {
  Type t(H5Tcopy(H5T_C_S1));
  H5Tset_size(t.get(), H5T_VARIABLE);
  H5Tset_cset(t.get(), H5T_CSET_UTF8);
  return t;
}

Type fixed_text_type(std::uint32_t width, H5T_cset_t cset) {
  Type t(H5Tcopy(H5T_C_S1));
  H5Tset_size(t.get(), width);
  H5Tset_strpad(t.get(), H5T_STR_NULLPAD);
  H5Tset_cset(t.get(), cset);
  return t;
}

Type bytes_type() { return Type(H5Tvlen_create(H5T_NATIVE_UINT8)); }

Type enum_type(std::span<const char* const> names) {
  Type t(H5Tenum_create(H5T_NATIVE_UINT8));
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto value = static_cast<std::uint8_t>(i);
    H5Tenum_insert(t.get(), names[i], &value);
  }
  return t;
}

}  // namespace weir::h5
