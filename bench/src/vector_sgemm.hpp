#pragma once
// The batched search's floor in `weir bench vectors`: OpenBLAS cblas_sgemm of the same shapes (the
// batch's queries against every stored vector) over a plain contiguous copy of the vectors, one thread.
#include <cstdint>
#include <span>
#include <vector>

namespace weir::bench {

class SgemmFloor {
 public:
  /// Copies the rows (dim floats each) into one contiguous matrix and the queries (n x dim, back to
  /// back); sets OpenBLAS to one thread, as the search runs on one.
  SgemmFloor(std::span<const float* const> rows, std::uint32_t dim, std::span<const float> queries);

  /// One product: scores[q][r] = queries[q] . rows[r]. Returns one of them, for the optimiser.
  float run() noexcept;
  /// Query q against row r, from the last run.
  [[nodiscard]] float score(std::uint32_t q, std::uint32_t r) const noexcept {
    return scores_[std::size_t{q} * rows_ + r];
  }
  [[nodiscard]] std::uint32_t queries() const noexcept { return queries_; }
  /// The kernel set OpenBLAS chose for this CPU ("Haswell", "SkylakeX", ...).
  [[nodiscard]] static const char* core_name() noexcept;

 private:
  std::uint32_t rows_;
  std::uint32_t dim_;
  std::uint32_t queries_;
  std::vector<float> matrix_;  // rows x dim
  std::vector<float> query_matrix_;
  std::vector<float> scores_;  // queries x rows
};

}  // namespace weir::bench
