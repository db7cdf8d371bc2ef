#pragma once
// The vector face of an arena: one row of vector_dim float32 per KV slot, each row under its own
// seqlock, and a top-k similarity search that scores rows in place. Protocol: docs/design/vectors.md.
//
// A key's vector is present when its row is marked present and not torn, the row's generation equals
// the slot's insert generation, and the slot is live: a deleted key's vector disappears with it, and a
// slot reused by another key never shows the old key's vector.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "weir/core/arena.hpp"
#include "weir/core/arena_layout.hpp"
#include "weir/core/kv_store.hpp"

namespace weir::core {

enum class [[nodiscard]] VectorStatus : std::int8_t {
  ok = 0,
  not_found = 1,      // no such key (or a handle whose key was deleted)
  no_vector = 2,      // the key exists but no vector was set for it
  busy = 3,           // another writer holds the row or the key's slot; try again
  torn = 4,           // a writer died mid-write; the vector is not trustworthy until set again
  wrong_length = 5,   // the vector, query or buffer does not hold exactly dim() floats
  no_vectors = 6,     // the arena was created with vector_dim 0
  not_finite = 7,     // NaN or infinity in the vector or query, or a norm past float range
  full = 8,           // inserting the key found no free slot within the probe window
  key_too_long = 9,   // longer than the arena's key_bytes
  key_empty = 10,     // keys have at least one byte
  stale_handle = 11,  // the handle's key was deleted and its slot reused
  read_only = 12,     // the arena is mapped read-only
  no_kernel = 13,     // this CPU lacks the instructions of the search kernel asked for
};

/// "ok", "no_vector", ... for messages and JSON.
const char* vector_status_name(VectorStatus status) noexcept;
/// Human text: "the key has no vector".
const char* vector_status_text(VectorStatus status) noexcept;

/// Similarity measures. cosine and dot: larger scores are better. l2: the score is the Euclidean
/// distance, smaller is better. Results always come best first.
enum class Metric : std::uint8_t { cosine = 0, dot = 1, l2 = 2 };
const char* metric_name(Metric metric) noexcept;

/// Scoring code paths. best picks AVX-512, then AVX2+FMA, then portable, by what the CPU has.
/// The others force one path (tests compare them); search answers no_kernel if the CPU lacks it.
enum class Kernel : std::uint8_t { best = 0, portable = 1, avx2 = 2, avx512 = 3 };
const char* kernel_name(Kernel kernel) noexcept;
/// Whether this CPU (and OS) runs the kernel; best and portable always do. Thread: any.
[[nodiscard]] bool kernel_supported(Kernel kernel) noexcept;
/// The kernel that best resolves to on this CPU. Thread: any.
[[nodiscard]] Kernel best_kernel() noexcept;

/// One search result. generation pins the key's incarnation, so key_of() refuses a hit whose key was
/// deleted after the search.
struct VectorHit {
  std::uint32_t slot = 0;
  std::uint32_t generation = 0;
  float score = 0.0F;  // cosine similarity, dot product or L2 distance
};

struct SearchOptions {
  Metric metric = Metric::cosine;
  Kernel kernel = Kernel::best;
  /// Longest a search waits, after its pass, for rows whose writers are inside; past kStuckAfterNs a
  /// dead writer's row is recovered (and skipped as torn). 0: never wait, skip such rows as busy.
  std::int64_t wait_ns = kStuckAfterNs;
};

/// What one search saw. Counters only; a search is not a snapshot.
struct SearchStats {
  std::uint64_t rows_scanned = 0;  // rows looked at
  std::uint64_t rows_scored = 0;   // rows whose score counted (present, not torn, unchanged while scored)
  std::uint64_t retries = 0;       // in-place scores repeated because a writer changed the row meanwhile
  std::uint64_t skipped_busy = 0;  // rows still held by a writer when the search gave up on them
  std::uint64_t skipped_torn = 0;  // rows left torn by a dead writer
  std::uint64_t recovered = 0;     // dead writers' rows this search took over and marked torn
};

/// Zero-copy view of a vector in place. Read what you need, then call valid(): false means a writer
/// changed the row meanwhile and what you read must be discarded.
class VectorView {
 public:
  [[nodiscard]] const float* data() const noexcept { return data_; }
  [[nodiscard]] std::uint32_t size() const noexcept { return size_; }
  [[nodiscard]] float norm() const noexcept { return norm_; }
  /// The row's even epoch when viewed: it changes on every write.
  [[nodiscard]] std::uint64_t epoch() const noexcept { return epoch_; }
  /// Thread: the viewing thread. Acquire fence keeps the caller's reads before the re-check.
  [[nodiscard]] bool valid() const noexcept {
    std::atomic_thread_fence(std::memory_order_acquire);
    return epoch_word_ != nullptr && epoch_word_->load(std::memory_order_relaxed) == epoch_;
  }

 private:
  friend class VectorStore;
  const float* data_ = nullptr;
  const std::atomic<std::uint64_t>* epoch_word_ = nullptr;
  std::uint64_t epoch_ = 0;
  std::uint32_t size_ = 0;
  float norm_ = 0.0F;
};

/// Reads, writes and searches the vectors of one attached arena. Cheap to construct; holds only
/// pointers into the mapping. Thread: any number of VectorStores in any threads and processes.
class VectorStore {
 public:
  explicit VectorStore(const Arena& arena) noexcept;

  /// Float32 per vector; 0 when the arena has no vector rows (every call then answers no_vectors).
  /// Thread: any, like the two below (fixed at create).
  [[nodiscard]] std::uint32_t dim() const noexcept { return dim_; }
  /// Rows, one per KV slot (0 without vectors).
  [[nodiscard]] std::uint32_t rows() const noexcept { return rows_; }
  /// Longest key: the buffer size key_of() needs.
  [[nodiscard]] std::uint32_t key_bytes() const noexcept { return kv_.key_bytes(); }

  /// Stores the key's vector, inserting the key (type none) if missing. Returns busy at once if
  /// another writer holds the row. Thread: any. Fails with wrong_length unless v.size() == dim(),
  /// not_finite for NaN or infinity, and the KV failures of inserting the key.
  VectorStatus set(std::string_view key, std::span<const float> v) noexcept;
  /// As set, but waits for a held row until timeout_ns (and recovers a dead writer's row). Thread: any.
  VectorStatus set_wait(std::string_view key, std::span<const float> v, std::int64_t timeout_ns = kDefaultWaitNs) noexcept;
  /// Stores the vector of a resolved key: no hashing. Waits for a held row up to timeout_ns (0: busy at
  /// once). stale_handle if the key was deleted and its slot reused, not_found if it was deleted.
  /// Thread: any.
  VectorStatus set(KeyHandle handle, std::span<const float> v, std::int64_t timeout_ns = 0) noexcept;

  /// Copies the key's vector into out. Requires: out.size() == dim(), else wrong_length.
  /// no_vector when the key holds none; torn after a writer died in it. Waits, bounded, for a writer
  /// inside the row and recovers a dead one when the mapping is writable. Thread: any.
  VectorStatus get(std::string_view key, std::span<float> out) const noexcept;
  /// As get(key), for a resolved key; stale_handle once its slot holds another key. Thread: any.
  VectorStatus get(KeyHandle handle, std::span<float> out) const noexcept;
  /// Zero-copy: points into the arena, with the row's epoch and norm. Check view.valid() after using
  /// the floats. Fails as get does. Thread: any.
  VectorStatus view(std::string_view key, VectorView& out) const noexcept;
  /// As view(key), for a resolved key. Thread: any.
  VectorStatus view(KeyHandle handle, VectorView& out) const noexcept;

  /// Top-k search over every present vector, best first; k = out.size(). count is how many hits were
  /// written (fewer than k when fewer vectors are present). Scores each row in place inside its
  /// seqlock window, so a vector that changes while scored is rescored or skipped, never counted torn.
  /// Allocates nothing. Fails with wrong_length unless query.size() == dim(), not_finite, no_kernel.
  /// Thread: any; recovers dead writers' rows only when the mapping is writable.
  VectorStatus search(std::span<const float> query, const SearchOptions& options, std::span<VectorHit> out,
                      std::size_t& count, SearchStats* stats = nullptr) const noexcept;

  /// Top-k search of a batch of queries, each answered exactly as search() would answer it alone (the
  /// same hits, scores and order, ties included), in one pass over the rows: a block of
  /// kSearchBatchRows rows is scored against every query while it stays in cache, so memory is read
  /// once per kSearchBatchQueries queries instead of once per query. With AVX-512, sixteen queries at a
  /// time are estimated by a panel kernel and only pairs that can still enter a query's top k are
  /// scored again by search()'s kernel (docs/design/vectors.md). A batch of one is search(). queries holds n = queries.size()
  /// / dim() queries back to back; counts.size() must be n; out holds n runs of k = out.size() / n hits,
  /// query q's at [q * k, q * k + k), with counts[q] of them written. stats counts rows once per pass
  /// (rows_scored: rows whose scores counted, for every query of the pass). Allocates nothing.
  /// Fails, writing no hits, with wrong_length unless n > 0, queries.size() == n * dim(),
  /// counts.size() == n and out.size() a multiple of n; not_finite if any query is not; no_kernel.
  /// Thread: any; recovers dead writers' rows only when the mapping is writable.
  VectorStatus search_batch(std::span<const float> queries, const SearchOptions& options, std::span<VectorHit> out,
                            std::span<std::size_t> counts, SearchStats* stats = nullptr) const noexcept;

  /// Reads a hit's key into out (at least key_bytes() long). not_found when the key was deleted (or its
  /// slot reused) since the search. Thread: any.
  VectorStatus key_of(const VectorHit& hit, std::span<char> out, std::uint32_t& length) const noexcept;

 private:
  [[nodiscard]] VectorRowHeader& row(std::uint32_t i) const noexcept {
    return *reinterpret_cast<VectorRowHeader*>(rows_base_ + std::uint64_t{i} * row_stride_);
  }
  [[nodiscard]] float* row_data(std::uint32_t i) const noexcept {
    return reinterpret_cast<float*>(rows_base_ + std::uint64_t{i} * row_stride_ + sizeof(VectorRowHeader));
  }
  [[nodiscard]] const SlotHeader& slot(std::uint32_t i) const noexcept {
    return *reinterpret_cast<const SlotHeader*>(slots_base_ + std::uint64_t{i} * slot_stride_);
  }
  [[nodiscard]] bool slot_holds(std::uint32_t i, std::uint32_t generation) const noexcept;
  VectorStatus check_vector(std::span<const float> v, float& norm) const noexcept;
  VectorStatus write_row(KeyHandle handle, std::span<const float> v, float norm, std::int64_t deadline_ns) noexcept;
  VectorStatus read_row(KeyHandle handle, std::span<float> out, VectorView* view) const noexcept;
  VectorStatus set_impl(std::string_view key, std::span<const float> v, std::int64_t deadline_ns) noexcept;
  VectorStatus lookup(std::string_view key, KeyHandle& out) const noexcept;

  mutable KvStore kv_;  // mutable: resolve() without create only reads, but is not const
  ArenaHeader* header_ = nullptr;
  std::byte* rows_base_ = nullptr;
  const std::byte* slots_base_ = nullptr;
  std::uint64_t row_stride_ = 0;
  std::uint64_t slot_stride_ = 0;
  std::uint32_t rows_ = 0;
  std::uint32_t dim_ = 0;
  bool read_only_ = false;
};

}  // namespace weir::core
