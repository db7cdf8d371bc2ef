#pragma once
// The outputs of one shard instance and the weir_shard_host table process() writes them through.
// Channel outputs: this process is the channel's one writer (claim/publish in place). Key outputs:
// a KvStore handle resolved once. Vector rings: capacity keys labelled with the partition, resolved
// once; each put writes the next key's vector row and its metadata array. Every callback is hot-path safe: no allocation, lock or log.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "weir/core/arena.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/error.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/vector_store.hpp"
#include "weir/shard.h"

namespace weir::shard_host {

class OutputSet {
 public:
  /// Creates (if missing) and opens every output cfg declares. `what` names shard and instance in
  /// messages. Fails for a malformed declaration (name, kind, dtype, rate, block size, frame size
  /// and axis, array shape), an existing
  /// channel of another dtype or block size, a channel with another live writer, a key name too
  /// long for the arena or a key larger than its value slots. Thread: control only.
  [[nodiscard]] static core::Result<std::unique_ptr<OutputSet>> open(const core::Arena& arena,
                                                                     const weir_shard_config& cfg,
                                                                     const std::string& what);
  OutputSet(const OutputSet&) = delete;
  OutputSet& operator=(const OutputSet&) = delete;

  /// The table handed to process(); self is this set. Stable for the set's lifetime.
  [[nodiscard]] const weir_shard_host* host() const noexcept { return &host_; }
  /// Output blocks and key writes since the last call. Thread: the processing thread.
  std::uint64_t take_written() noexcept { return std::exchange(written_, 0); }
  /// Vector puts since the last call (counted apart: they may come from earlier, intact blocks).
  /// Thread: the processing thread.
  std::uint64_t take_vectors() noexcept { return std::exchange(vectors_written_, 0); }
  /// Failed key writes and misused callbacks since the last call. Thread: the processing thread.
  std::uint64_t take_errors() noexcept { return std::exchange(errors_, 0); }
  [[nodiscard]] std::vector<std::string> names() const;

 private:
  struct Output {
    std::string name;
    std::uint32_t kind = 0;
    std::optional<core::ChannelWriter> writer;  // channels
    bool claimed = false;
    core::KeyHandle key{};                      // keys
    core::ValueType key_type = core::ValueType::bytes;
    std::uint64_t max_bytes = 0;
    std::uint64_t array_bytes = 0;              // array keys: exactly this many bytes per write
    core::ArrayShape array{};                   // array keys: written with KvStore::set_array
    std::vector<core::KeyHandle> ring;          // vector rings: key i of the ring is <name>/<i>
    std::uint64_t puts = 0;                     // vector rings: puts so far; the next goes to puts % size
  };

  OutputSet(const core::Arena& arena, std::string what);
  core::Result<void> open_channel(const core::Arena& arena, const weir_shard_output& o, Output& out);
  core::Result<void> open_key(const core::Arena& arena, const weir_shard_output& o, Output& out);
  core::Result<void> open_vectors(const core::Arena& arena, const weir_shard_output& o, Output& out);

  static void* claim(void* self, std::uint32_t output, std::uint32_t* capacity);
  static void publish(void* self, std::uint32_t output, std::uint32_t samples, std::uint64_t realtime_ns,
                      std::uint32_t flags);
  static int set_key(void* self, std::uint32_t output, const void* value, size_t bytes);
  static void log(void* self, int level, const char* message);
  static int put_vector(void* self, std::uint32_t output, const float* vector, const weir_vector_meta* meta);

  core::KvStore kv_;
  core::VectorStore vectors_;
  std::string what_;
  std::vector<Output> outputs_;
  weir_shard_host host_{};
  std::uint64_t written_ = 0;
  std::uint64_t vectors_written_ = 0;
  std::uint64_t errors_ = 0;
};

}  // namespace weir::shard_host
