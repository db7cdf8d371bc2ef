#pragma once
// A channel's min/max envelope for a server (epics "serve", tango "serve"): the samples its ring holds,
// in a fixed number of buckets, folded from the coarsest pyramid level whose entries are no wider than
// a bucket (each bucket then folds whole entries), as far back as that level reaches.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "weir/core/arena.hpp"
#include "weir/core/arena_layout.hpp"

namespace weir::controls {

class ChannelEnvelope {
 public:
  /// For channel `channel` (its index in the arena, `desc` its descriptor) in `buckets` buckets.
  ChannelEnvelope(const core::ChannelDesc& desc, std::uint32_t channel, std::uint32_t buckets);

  /// Reads the complete pyramid entries of the newest span. Returns how many (0: none yet). Thread: the
  /// server's update thread; allocates nothing.
  std::size_t read(const core::Arena& arena);

  /// Folds what read() returned into `out`'s first buckets() values (the minima, or the maxima): NaN for
  /// a bucket with no entry (an entry the writer overtook, or a gap). Returns the buckets written.
  std::size_t fold(bool minima, std::span<double> out) const;

  [[nodiscard]] std::uint32_t buckets() const noexcept { return buckets_; }
  [[nodiscard]] std::uint64_t entry_samples() const noexcept { return entry_samples_; }
  [[nodiscard]] std::uint64_t span_entries() const noexcept { return span_entries_; }

 private:
  const core::ChannelDesc* desc_;
  std::uint32_t channel_;
  std::uint32_t buckets_;
  std::uint64_t entry_samples_ = 1;  // samples per entry of the pyramid level read
  std::uint64_t span_entries_ = 1;   // entries the span covers
  std::vector<float> lo_, hi_;
  std::size_t entries_ = 0;          // read by the last read()
};

}  // namespace weir::controls
