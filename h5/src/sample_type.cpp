#include "weir/h5/sample_type.hpp"

namespace weir::h5 {

Handle sample_type(core::Dtype dtype) {
  switch (dtype) {
    case core::Dtype::i8: return Handle(H5Tcopy(H5T_NATIVE_INT8));
    case core::Dtype::u8: return Handle(H5Tcopy(H5T_NATIVE_UINT8));
    case core::Dtype::i16: return Handle(H5Tcopy(H5T_NATIVE_INT16));
    case core::Dtype::u16: return Handle(H5Tcopy(H5T_NATIVE_UINT16));
    case core::Dtype::i32: return Handle(H5Tcopy(H5T_NATIVE_INT32));
    case core::Dtype::u32: return Handle(H5Tcopy(H5T_NATIVE_UINT32));
    case core::Dtype::i64: return Handle(H5Tcopy(H5T_NATIVE_INT64));
    case core::Dtype::f32: return Handle(H5Tcopy(H5T_NATIVE_FLOAT));
    case core::Dtype::f64: return Handle(H5Tcopy(H5T_NATIVE_DOUBLE));
    case core::Dtype::c64: {  // HDF5 matches compound fields by name on read
      Handle t(H5Tcreate(H5T_COMPOUND, 2 * sizeof(float)));
      H5Tinsert(t.get(), "r", 0, H5T_NATIVE_FLOAT);
      H5Tinsert(t.get(), "i", sizeof(float), H5T_NATIVE_FLOAT);
      return t;
    }
  }
  return Handle{};
}

}  // namespace weir::h5
