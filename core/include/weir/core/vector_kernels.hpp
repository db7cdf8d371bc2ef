#pragma once
// The vector store's scoring kernels, for code that scores its own copies of vectors (the ann
// index): the same AVX-512, AVX2+FMA and portable code paths search() uses, picked at run time.
#include <cstdint>

#include "weir/core/vector_store.hpp"

namespace weir::core {

/// Dot product (dot) or squared Euclidean distance (l2sq) of a and b, n floats each.
using VectorKernel = float (*)(const float* a, const float* b, std::uint32_t n) noexcept;

struct VectorKernels {
  VectorKernel dot = nullptr;
  VectorKernel l2sq = nullptr;
  Kernel kernel = Kernel::portable;  // the code path they belong to (best resolved)
};

/// The kernels of one code path; false (out untouched) when this CPU cannot run it. Thread: any.
[[nodiscard]] bool vector_kernels(Kernel kernel, VectorKernels& out) noexcept;

}  // namespace weir::core
