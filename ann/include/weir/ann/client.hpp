#pragma once
// Asking an ann service (`weir ann ARENA PART`) for the nearest vectors of a partition, through the
// arena: the question is a key's value (and, for a query vector, that key's vector row), the answer
// another key's value, and the asker sleeps on a signal group until the answer is written. No polling.
// Protocol and layouts: docs/design/ann.md and weir/ann/protocol.hpp.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "weir/core/arena.hpp"
#include "weir/core/error.hpp"
#include "weir/core/vector_store.hpp"

namespace weir::ann {

struct QueryOptions {
  std::uint32_t k = 10;                     // hits wanted, 1..kMaxHits
  std::uint32_t ef = 0;                     // HNSW search breadth; 0: the service's default
  std::int64_t timeout_ns = 1'000'000'000;  // longest wait for the answer
};

/// What the service said besides the hits.
struct AnswerInfo {
  std::uint64_t indexed = 0;  // vectors in the index when it answered
  std::uint64_t lag = 0;      // changes of the partition it knew of but had not indexed yet
  std::int64_t service_ns = 0;  // time the service spent on this query
};

/// One asker of one partition's service. Holds a watcher row of the arena while open.
/// Thread: one thread at a time per Client; open one per thread.
class Client {
 public:
  /// Finds the service of `part` in the arena (it must be running: its pid alive), claims a watcher
  /// row and this client's request and answer keys. Cold path.
  [[nodiscard]] static core::Result<Client> open(const core::Arena& arena, std::string_view part);
  Client(Client&&) noexcept;
  Client& operator=(Client&&) noexcept;
  ~Client();

  /// The nearest vectors of `query` (dim floats), best first. count: hits written (<= out.size()).
  /// Allocates nothing. Fails with invalid_argument (wrong length, k, non-finite), not_found (the
  /// service is gone), io_error (timed out, saying after how long).
  [[nodiscard]] core::Result<std::size_t> search(std::span<const float> query, const QueryOptions& options,
                                                 std::span<core::VectorHit> out, AnswerInfo* info = nullptr);
  /// The nearest vectors of the vector of key `like` (the key itself is among them).
  [[nodiscard]] core::Result<std::size_t> search_like(std::string_view like, const QueryOptions& options,
                                                      std::span<core::VectorHit> out, AnswerInfo* info = nullptr);

  /// The partition's label, the arena's vector dim.
  [[nodiscard]] const std::string& part() const noexcept;
  [[nodiscard]] std::uint32_t dim() const noexcept;

 private:
  struct State;
  explicit Client(std::unique_ptr<State> state) noexcept;
  std::unique_ptr<State> state_;
};

}  // namespace weir::ann
