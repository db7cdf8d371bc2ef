#include "weir/h5/sample_type.hpp"

#include "weir/core/channel.hpp"

namespace weir::h5 {

Type sample_type(core::Dtype dtype) {
  switch (dtype) {
    case core::Dtype::i8: return Type(H5Tcopy(H5T_NATIVE_INT8));
    case core::Dtype::u8: return Type(H5Tcopy(H5T_NATIVE_UINT8));
    case core::Dtype::i16: return Type(H5Tcopy(H5T_NATIVE_INT16));
    case core::Dtype::u16: return Type(H5Tcopy(H5T_NATIVE_UINT16));
    case core::Dtype::i32: return Type(H5Tcopy(H5T_NATIVE_INT32));
    case core::Dtype::u32: return Type(H5Tcopy(H5T_NATIVE_UINT32));
    case core::Dtype::i64: return Type(H5Tcopy(H5T_NATIVE_INT64));
    case core::Dtype::f32: return Type(H5Tcopy(H5T_NATIVE_FLOAT));
    case core::Dtype::f64: return Type(H5Tcopy(H5T_NATIVE_DOUBLE));
    case core::Dtype::c64: {  // HDF5 matches compound fields by name on read
      Type t(H5Tcreate(H5T_COMPOUND, 2 * sizeof(float)));
      H5Tinsert(t.get(), "r", 0, H5T_NATIVE_FLOAT);
      H5Tinsert(t.get(), "i", sizeof(float), H5T_NATIVE_FLOAT);
      return t;
    }
  }
  return Type{};
}

bool holds_dtype(hid_t type, core::Dtype dtype) {
  const H5T_class_t cls = H5Tget_class(type);
  const std::size_t size = H5Tget_size(type);
  if (dtype == core::Dtype::c64) {
    if (cls != H5T_COMPOUND || size != 2 * sizeof(float) || H5Tget_nmembers(type) != 2) return false;
    for (unsigned i = 0; i < 2; ++i) {
      const Type member(H5Tget_member_type(type, i));
      if (H5Tget_class(member.get()) != H5T_FLOAT || H5Tget_size(member.get()) != sizeof(float)) return false;
    }
    return true;
  }
  if (size != core::dtype_bytes(dtype)) return false;
  switch (dtype) {
    case core::Dtype::f32:
    case core::Dtype::f64: return cls == H5T_FLOAT;
    case core::Dtype::i8:
    case core::Dtype::i16:
    case core::Dtype::i32:
    case core::Dtype::i64: return cls == H5T_INTEGER && H5Tget_sign(type) == H5T_SGN_2;
    case core::Dtype::u8:
    case core::Dtype::u16:
    case core::Dtype::u32: return cls == H5T_INTEGER && H5Tget_sign(type) == H5T_SGN_NONE;
    case core::Dtype::c64: break;
  }
  return false;
}

}  // namespace weir::h5
