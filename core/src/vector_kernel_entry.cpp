// The public entry to the scoring kernels (weir/core/vector_kernels.hpp).
#include "vector_rows.hpp"
#include "weir/core/vector_kernels.hpp"

namespace weir::core {

bool vector_kernels(Kernel kernel, VectorKernels& out) noexcept {
  const detail::KernelTable* table = detail::kernel_table(kernel);
  if (table == nullptr) return false;
  out.dot = table->dot;
  out.l2sq = table->l2sq;
  out.kernel = kernel == Kernel::best ? best_kernel() : kernel;
  return true;
}

}  // namespace weir::core
