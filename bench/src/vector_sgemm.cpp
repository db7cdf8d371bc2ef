// The batched search's sgemm floor (vector_sgemm.hpp).
#include "vector_sgemm.hpp"

#include <cblas.h>

#include <algorithm>

namespace weir::bench {

SgemmFloor::SgemmFloor(std::span<const float* const> rows, std::uint32_t dim, std::span<const float> queries)
    : rows_(static_cast<std::uint32_t>(rows.size())),
      dim_(dim),
      queries_(static_cast<std::uint32_t>(queries.size() / dim)),
      matrix_(rows.size() * dim),
      query_matrix_(queries.begin(), queries.end()),
      scores_(std::size_t{queries_} * rows.size()) {
  openblas_set_num_threads(1);
  for (std::size_t r = 0; r < rows.size(); ++r) std::copy_n(rows[r], dim, matrix_.begin() + static_cast<std::ptrdiff_t>(r * dim));
}

float SgemmFloor::run() noexcept {
  const auto m = static_cast<int>(queries_);
  const auto n = static_cast<int>(rows_);
  const auto k = static_cast<int>(dim_);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0F, query_matrix_.data(), k, matrix_.data(), k, 0.0F,
              scores_.data(), n);
  return scores_.empty() ? 0.0F : scores_.back();
}

const char* SgemmFloor::core_name() noexcept { return openblas_get_corename(); }

}  // namespace weir::bench
