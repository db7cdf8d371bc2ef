#pragma once
// One channel as `weir serve` shows it: its newest blocks copied out of the ring without registering
// (core::BlockCopier: the writer is never held back and no consumer row appears), kept as floats for
// triggers and fine zoom, and turned into envelope or spectrum frames for views.
#include <array>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "weir/core/block_copier.hpp"
#include "weir/core/channel.hpp"
#include "weir/scope/scope_trace.hpp"
#include "minmax_history.hpp"
#include "weir/serve/frame_codec.hpp"

namespace weir::serve {

enum class Trigger : std::uint8_t { off, rising, falling };

/// What one scope or spectrum on a page shows. Sessions asking for equal views share one encoded
/// frame per tick.
struct View {
  std::uint32_t channel = 0;
  FrameKind kind = FrameKind::envelope;
  std::uint64_t span = 0;     // samples shown (envelope)
  std::uint64_t offset = 0;   // samples back from the newest (pan; 0 = live)
  std::uint32_t columns = 0;  // envelope buckets
  Trigger trigger = Trigger::off;
  float level = 0;
  auto operator<=>(const View&) const = default;
};

/// Bounds on views, so a client cannot ask for absurd work.
inline constexpr std::uint32_t kMinColumns = 8;
inline constexpr std::uint32_t kMaxColumns = 4096;
inline constexpr std::uint64_t kMinSpanSamples = 2;

/// Thread: the server's io thread only.
class ChannelFeed {
 public:
  [[nodiscard]] static core::Result<ChannelFeed> open(const core::Arena& arena, std::uint32_t channel);

  /// Copies the blocks published since the last poll (at most a bounded number; older ones are
  /// skipped, and the history restarts after a skip). Allocates only while the history grows.
  void poll();
  /// The frame for `view`, encoded (header and float32 columns). Envelopes: between half the columns
  /// asked (or the samples covered, when fewer) and all of them; a span longer than the history
  /// starts at its oldest sample; buckets without samples or holding a gap block's place are NaN
  /// (kFrameGap). Allocates only while the buffers grow.
  [[nodiscard]] std::string frame(const View& view);
  /// The whole span the pyramid reaches back, in samples: the widest useful view.
  [[nodiscard]] std::uint64_t reach() const noexcept;
  [[nodiscard]] bool framed() const noexcept { return frame_.framed(); }

 private:
  ChannelFeed(const core::Arena& arena, std::uint32_t channel, core::BlockCopier copier);
  void poll_samples();
  void poll_frames();
  [[nodiscard]] std::string envelope_frame(const View& view);
  [[nodiscard]] std::string spectrum_frame();
  struct Grid;    // the buckets of one envelope frame (channel_envelope.cpp)
  struct Source;  // raw samples, one of mids_, or a pyramid level, and what it holds
  void fold(const Grid& grid, const Source& source, std::uint64_t from, std::uint64_t to);
  void mark_gaps(const Grid& grid);
  [[nodiscard]] std::optional<std::uint64_t> crossing(const View& view, std::uint64_t first, std::uint64_t last) const;

  const core::Arena* arena_;
  std::uint32_t channel_;
  core::BlockCopier copier_;
  core::Dtype dtype_;
  core::FrameShape frame_;
  std::uint64_t next_seq_ = 0;        // the next block to copy
  std::uint64_t newest_mono_ns_ = 0;  // acquisition time of the newest block copied
  scope::SampleHistory history_;      // raw samples, the newest few blocks
  std::vector<MinMaxHistory> mids_;   // min/max per pyramid_factor^(k+1) samples, further back
  std::array<std::uint64_t, 64> gaps_{};  // where the newest gap blocks sit in the stream (ring)
  std::uint64_t gap_count_ = 0;
  std::vector<std::byte> raw_;        // one block as copied
  std::vector<float> scratch_;
  std::vector<float> mins_, maxs_;
  std::vector<float> entry_lo_, entry_hi_;  // pyramid entries read for one part of a frame
  std::vector<float> spectrum_;       // the newest frame of a frame channel
  std::uint64_t spectrum_index_ = 0;  // its frame number in the stream
};

}  // namespace weir::serve
