#pragma once
// The ann service of one vector partition (`weir ann ARENA PART`): builds an HNSW index over the
// vectors of the keys labelled PART, follows their changes through the label's change log, and
// answers requests posted through the arena (weir/ann/protocol.hpp, docs/design/ann.md).
#include <atomic>
#include <cstdint>
#include <functional>
#include <string_view>

#include "weir/core/arena.hpp"
#include "weir/core/error.hpp"
#include "weir/core/vector_store.hpp"

namespace weir::ann {

struct ServiceOptions {
  std::uint32_t m = 16;                 // HNSW links per node
  std::uint32_t ef_construction = 100;  // HNSW build breadth
  std::uint32_t ef = 64;                // default search breadth (a request may ask for another)
  core::Metric metric = core::Metric::cosine;
  std::uint32_t threads = 0;            // build threads; 0: one per CPU this process may use
  std::int64_t duration_ns = 0;         // stop after this long; 0: until stopped
};

struct ServiceReport {
  std::uint64_t indexed = 0;   // live vectors in the index (at the moment of the report)
  std::uint64_t built = 0;     // vectors indexed by the initial build
  std::int64_t build_ns = 0;   // the initial build: scan, copy and link
  std::uint64_t inserts = 0;   // vectors added or replaced after the build
  std::uint64_t deletes = 0;   // vectors removed
  std::uint64_t rescans = 0;   // full rescans after lost change-log entries
  std::uint64_t lost = 0;      // change-log entries lost (each loss costs one rescan)
  std::uint64_t queries = 0;   // requests answered
  std::uint64_t refused = 0;   // requests answered with a status other than ok
  std::uint32_t threads = 0;   // build threads used
  core::Kernel kernel = core::Kernel::portable;
};

/// Runs the service of `part` in `arena` until `stop` is set or options.duration_ns passes.
/// on_serving is called once, from this thread, when the build is done and requests are answered.
/// Fails (before serving) when the arena has no vectors, the names do not fit its key_bytes, or a
/// live service of the same partition is registered. Thread: one call per process and partition;
/// runs a request thread of its own besides the calling thread (which follows changes).
[[nodiscard]] core::Result<ServiceReport> run_service(const core::Arena& arena, std::string_view part,
                                                      const ServiceOptions& options, const std::atomic<bool>& stop,
                                                      const std::function<void(const ServiceReport&)>& on_serving = {});

/// Whether a process with this pid exists (kill(pid, 0)). Thread: any.
[[nodiscard]] bool pid_alive(std::uint32_t pid) noexcept;

}  // namespace weir::ann
