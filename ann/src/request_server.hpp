#pragma once
// The ann service's request thread: sleeps on the ann/PART/q group, reads each request and its query
// vector, searches the index and writes the answer key. Private to ann/.
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "partition_follower.hpp"
#include "weir/ann/hnsw_index.hpp"
#include "weir/ann/protocol.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/signals.hpp"
#include "weir/core/vector_store.hpp"

namespace weir::ann::detail {

class RequestServer {
 public:
  /// watcher: subscribed to request_label(part) before the index was built, so no request is missed.
  RequestServer(const core::Arena& arena, std::string_view part, core::Watcher watcher, HnswIndex& index,
                const PartitionFollower& follower, std::uint32_t default_ef, const std::atomic<std::uint64_t>& lag);

  /// Answers requests until `stop` is set (checked at least every kStopPollNs). Thread: the request thread.
  void run(const std::atomic<bool>& stop) noexcept;

  [[nodiscard]] std::uint64_t answered() const noexcept { return answered_.load(std::memory_order_relaxed); }
  [[nodiscard]] std::uint64_t refused() const noexcept { return refused_.load(std::memory_order_relaxed); }

 private:
  void serve(std::uint32_t slot, std::uint32_t generation) noexcept;
  void rescan() noexcept;
  AnswerStatus find_query(const Request& request, core::KeyHandle handle, std::string_view like) noexcept;
  std::uint32_t search(const Request& request) noexcept;

  const core::Arena* arena_;
  core::KvStore kv_;
  core::VectorStore vectors_;
  core::Watcher watcher_;
  HnswIndex* index_;
  const PartitionFollower* follower_;
  std::uint32_t default_ef_;
  const std::atomic<std::uint64_t>* lag_;
  std::string request_prefix_;
  std::string answer_prefix_;
  std::string answer_key_;                 // built per answer in reserved capacity
  std::vector<char> key_;                  // key_bytes
  std::vector<std::byte> value_;           // value_bytes: requests in, answers out
  std::vector<float> query_, prepared_;    // dim
  std::vector<Neighbour> neighbours_;      // kMaxHits
  struct Served {
    std::uint32_t generation = 0;
    std::uint64_t epoch = 0;
  };
  std::vector<Served> served_;             // per slot: the request value last answered
  std::atomic<std::uint64_t> answered_{0}, refused_{0};
};

}  // namespace weir::ann::detail
