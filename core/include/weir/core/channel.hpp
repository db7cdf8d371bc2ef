#pragma once
// Channels: named sample streams in an arena. One writer claims block slots of a ring in place and
// publishes them; any number of readers in any process follow in place and count every block they
// miss. Protocol: docs/design/channels.md.
#include <array>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "weir/core/arena.hpp"
#include "weir/core/arena_layout.hpp"
#include "weir/core/gap_reason.hpp"
#include "weir/core/error.hpp"

namespace weir::core {

/// "f32" -> Dtype::f32; fails naming the text for an unknown dtype.
[[nodiscard]] Result<Dtype> parse_dtype(std::string_view text);
[[nodiscard]] const char* dtype_name(Dtype dtype) noexcept;
[[nodiscard]] std::uint32_t dtype_bytes(Dtype dtype) noexcept;
/// Whether samples of `dtype` are integers (ADC codes: i8 ... i64), not floats (f32, f64, c64).
[[nodiscard]] bool dtype_is_integer(Dtype dtype) noexcept;
[[nodiscard]] Result<ConsumerPolicy> parse_policy(std::string_view text);
[[nodiscard]] const char* policy_name(ConsumerPolicy policy) noexcept;

/// The axis along a frame's elements: element i sits at start + i * step (in units), or at the i-th
/// value of values_key, an f64 array key, when it is set.
struct FrameAxis {
  std::string name;         // "" for none; e.g. "frequency", "energy", "time" (at most 31 bytes)
  std::string units;        // e.g. "Hz", "keV", "s" (at most 31 bytes)
  double start = 0.0;
  double step = 1.0;
  std::string values_key;   // optional explicit values (an f64 array key), "" for none (at most 63 bytes)
  friend bool operator==(const FrameAxis&, const FrameAxis&) = default;
};

/// A frame-shaped channel: each block holds frames_per_block frames of frame_elements elements
/// (row-major), so samples_per_block == frames_per_block * frame_elements. The channel's rate_hz
/// stays elements per second: frames per second = rate_hz / frame_elements.
struct FrameShape {
  std::uint32_t frames_per_block = 0;  // 0: plain samples
  std::uint32_t frame_elements = 0;
  FrameAxis axis;
  [[nodiscard]] bool framed() const noexcept { return frames_per_block != 0; }
  friend bool operator==(const FrameShape&, const FrameShape&) = default;
};

struct ChannelSpec {
  std::string name;
  Dtype dtype = Dtype::f32;
  double rate_hz = 0;
  std::string units;
  std::vector<std::string> labels;
  std::uint32_t samples_per_block = 4096;
  std::uint32_t ring_blocks = kDefaultRingBlocks;  // a power of two
  FullPolicy full_policy = FullPolicy::wait;
  std::int64_t wait_timeout_ns = kDefaultWriterWaitNs;
  FrameShape frame;  // plain samples unless frame.framed()
};

/// Creates a channel in the arena's reserved room. Fails with a message naming the channel for a
/// duplicate name, a full channel table, a ring that does not fit the remaining data pool, a rate
/// of zero, negative or NaN, a block too large, or a ring size that is not a power of two; and for
/// a frame shape, frames_per_block * frame_elements != samples_per_block, an axis name or units
/// of 32 bytes or more, a values key of 64 or more, or a start or step that is not finite.
/// Thread: any (cold path, serialised by the channel-table lock).
[[nodiscard]] Result<std::uint32_t> create_channel(const Arena& arena, const ChannelSpec& spec);
/// Bytes of the arena's channel pool a channel of this spec takes (ring and pyramid). Pure.
[[nodiscard]] std::uint64_t channel_footprint(const ChannelSpec& spec) noexcept;
/// Index of the ready channel called name.
[[nodiscard]] Result<std::uint32_t> find_channel(const Arena& arena, std::string_view name);

struct ConsumerInfo {
  std::uint32_t row = 0;
  std::uint32_t pid = 0;
  bool alive = false;
  ConsumerPolicy policy = ConsumerPolicy::lossy;
  std::string name;
  std::uint64_t cursor = 0, blocks_read = 0, samples_read = 0, blocks_lost = 0;
  std::uint64_t lag = 0;  // blocks published but not yet read
  std::string kind;      // the part reading, "" for a plain reader
  std::uint64_t blocks_out = 0, blocks_skipped = 0, errors = 0, proc_p50_ns = 0, proc_p99_ns = 0, bytes_out = 0;
};

struct ChannelInfo {
  std::uint32_t index = 0;
  std::string name, units;
  Dtype dtype = Dtype::f32;
  double rate_hz = 0;
  std::uint32_t samples_per_block = 0, ring_blocks = 0;
  std::uint64_t blocks_written = 0, samples_written = 0, dropped_at_source = 0, writer_waits = 0;
  std::uint32_t writer_pid = 0;
  bool writer_alive = false;
  FrameShape frame;  // plain samples unless frame.framed()
  std::vector<ConsumerInfo> consumers;
};
/// The frame shape fixed in a channel descriptor at creation (plain samples: frames_per_block 0).
/// Thread: any. Requires: the descriptor is ready.
[[nodiscard]] FrameShape frame_shape(const ChannelDesc& desc);
/// Every ready channel with its counters and consumers. Thread: any.
[[nodiscard]] std::vector<ChannelInfo> list_channels(const Arena& arena);

enum class [[nodiscard]] ClaimStatus : std::uint8_t {
  ok,       // a block slot is yours to fill; publish() it
  dropped,  // a lossless consumer was full past the timeout (or the channel drops): counted at source
};

/// The one writer of a channel. Thread: one thread at a time.
class ChannelWriter {
 public:
  /// Becomes the channel's writer; fails naming the other writer's pid if a live one holds it
  /// (a dead writer's claim is taken over).
  [[nodiscard]] static Result<ChannelWriter> open(const Arena& arena, std::string_view name);
  ChannelWriter(ChannelWriter&& other) noexcept;
  ChannelWriter& operator=(ChannelWriter&&) = delete;
  ChannelWriter(const ChannelWriter&) = delete;
  ChannelWriter& operator=(const ChannelWriter&) = delete;
  ~ChannelWriter();

  /// Claims the next block slot in place: `out` points at samples_per_block() samples in the arena.
  /// Lossy and latest consumers never hold the writer back; a full lossless consumer makes it wait
  /// up to the channel's timeout (or drop at once, as the channel says). Hot path: no allocation.
  ClaimStatus claim(std::span<std::byte>& out) noexcept;
  /// Publishes the claimed block: sample count, timestamps (0: now), flags; updates the pyramid and
  /// pulses the channel's signal groups. Requires: a successful claim() before.
  void publish(std::uint32_t samples, std::uint64_t realtime_ns = 0, std::uint64_t monotonic_ns = 0,
               std::uint32_t flags = 0) noexcept;

  /// Publishes a gap: the next `blocks` sequence numbers carry no data (packets the source lost, a
  /// replayed recording's lost blocks), and every reader counts each of them lost, for `reason`
  /// (the blocks' flags carry it; a run longer than the ring is found by the readers it laps as
  /// the same run). Never overwrites a block a lossless consumer has not read, unless the channel
  /// drops. Requires: no claim() outstanding. Hot path: no allocation.
  void skip(std::uint64_t blocks, GapReason reason) noexcept;

  [[nodiscard]] std::uint32_t samples_per_block() const noexcept { return desc_->samples_per_block; }
  [[nodiscard]] std::uint64_t next_sequence() const noexcept { return seq_; }
  [[nodiscard]] const ChannelDesc& desc() const noexcept { return *desc_; }

 private:
  ChannelWriter(const Arena& arena, std::uint32_t index) noexcept;
  bool wait_for_lossless(std::uint64_t seq) noexcept;
  void pulse() noexcept;
  void update_pyramid(const std::byte* samples, std::uint32_t count, std::uint64_t first_sample) noexcept;
  template <class T>
  void update_pyramid_as(const std::byte* samples, std::uint32_t count, std::uint64_t first_sample) noexcept;
  void complete_entries(std::uint64_t first_entry, const float* lo, const float* hi, std::size_t n) noexcept;
  void complete_upper(std::uint32_t level, std::uint64_t entry, float lo, float hi) noexcept;

  struct Accumulator {  // a pyramid entry being built, per level
    float lo = std::numeric_limits<float>::infinity();
    float hi = -std::numeric_limits<float>::infinity();
  };
  const Arena* arena_;
  ChannelDesc* desc_;
  std::uint32_t index_;
  std::uint64_t seq_ = 0;
  bool claimed_ = false;
  std::array<Accumulator, kPyramidLevels> acc_{};
  // The writer's own copies, so a publish only stores to the descriptor line readers poll:
  std::uint64_t samples_written_ = 0;           // desc.samples_written
  std::uint64_t groups_version_seen_ = ~0ULL;   // the header's groups_version group_bits_ is for
  std::uint64_t group_bits_ = 0;                // the signal groups a publish pulses
  // Blocks below this sequence fit every lossless reader's room, as of lossless epoch room_epoch_.
  std::uint64_t room_until_ = 0;
  std::uint32_t room_epoch_ = 0;
};

/// A validated in-place view of one block. Use the samples, then call valid(): false means the
/// writer reused the slot meanwhile and what was read must be discarded (count it as lost).
struct BlockView {
  const std::byte* data = nullptr;
  std::uint32_t samples = 0;
  std::uint32_t flags = 0;
  std::uint64_t sequence = 0;
  std::uint64_t realtime_ns = 0;
  std::uint64_t monotonic_ns = 0;
  std::uint64_t first_sample = 0;  // index of the block's first sample in the channel's stream
  const std::atomic<std::uint64_t>* state = nullptr;
  std::uint64_t expected_state = 0;
  [[nodiscard]] bool valid() const noexcept {
    std::atomic_thread_fence(std::memory_order_acquire);  // the caller's reads happen before the re-check
    return state != nullptr && state->load(std::memory_order_relaxed) == expected_state;
  }
};

enum class [[nodiscard]] NextStatus : std::uint8_t {
  ok,     // `out` is the next block
  empty,  // nothing new yet
  lost,   // `lost` blocks are gone, the cursor moved past them; call again. out.flags says why: 0, the
          // writer lapped us; kBlockGapFlag | reason, the writer published them as a gap (skip())
};

/// Why the blocks of a NextStatus::lost are missing, from out.flags: the writer's reason for a gap it
/// published, else lapped. Thread: any.
[[nodiscard]] constexpr GapReason lost_reason(std::uint32_t flags) noexcept {
  return (flags & kBlockGapFlag) != 0 ? static_cast<GapReason>(flags & kBlockGapReasonMask) : GapReason::lapped;
}

enum class StartAt : std::uint8_t { oldest, newest, sequence };

/// A registered consumer of one channel. Thread: one thread at a time.
class ChannelReader {
 public:
  /// Registers in the consumer table (reaping rows of dead processes) and positions the cursor.
  [[nodiscard]] static Result<ChannelReader> open(const Arena& arena, std::string_view channel, ConsumerPolicy policy,
                                                  std::string_view consumer_name, StartAt start = StartAt::newest,
                                                  std::uint64_t sequence = 0);
  ChannelReader(ChannelReader&& other) noexcept;
  ChannelReader& operator=(ChannelReader&&) = delete;
  ChannelReader(const ChannelReader&) = delete;
  ChannelReader& operator=(const ChannelReader&) = delete;
  ~ChannelReader();

  /// The next block in place (latest policy: the newest block, skipping older ones without counting
  /// them lost). Hot path. After using out, call out.valid() and then done(out).
  NextStatus next(BlockView& out, std::uint64_t& lost) noexcept;
  /// Marks the block read: advances the cursor (releasing a lossless writer) if the view was valid,
  /// counts it lost if not. Returns out.valid(). The row's heartbeat moves every 64 reads, and on
  /// every next() that finds nothing new.
  bool done(const BlockView& out) noexcept;
  /// next() + copy + done(): copies the samples into dst (at most dst.size() bytes).
  NextStatus read_copy(std::span<std::byte> dst, BlockView& meta, std::uint64_t& lost) noexcept;

  [[nodiscard]] std::uint64_t cursor() const noexcept;
  [[nodiscard]] const ChannelDesc& desc() const noexcept { return *desc_; }
  [[nodiscard]] std::uint32_t channel_index() const noexcept { return index_; }
  [[nodiscard]] const ConsumerRow& row() const noexcept { return *row_; }
  /// The part-level counters of this consumer's row (blocks_out, errors, proc_p50_ns, ...), which
  /// the consuming part keeps itself so `weir ls` shows them. Store with relaxed order.
  [[nodiscard]] ConsumerRow& counters() noexcept { return *row_; }
  /// Names the part reading ("shard:fft", "record:hdf5"), shown by `weir ls`. Cold path.
  void set_kind(std::string_view kind) noexcept;

 private:
  ChannelReader(const Arena& arena, std::uint32_t index, ConsumerRow* row) noexcept;
  void beat() noexcept;
  const Arena* arena_;
  ChannelDesc* desc_;
  ConsumerRow* row_;
  std::uint32_t index_;
  std::uint32_t reads_since_beat_ = 0;  // the heartbeat is stamped every kBeatEvery reads, and when idle
};

/// Min/max of samples [first, first + count) from the channel's pyramid, split into `columns`
/// buckets: what a scope draws. Uses the coarsest level no wider than a column that still reaches
/// back to `first`. Buckets where no pyramid entry starts are NaN (columns finer than a level-0 entry,
/// pyramid_factor samples: draw those from the raw blocks), and so are buckets the writer has already
/// overwritten or not yet completed. Thread: any.
void envelope(const Arena& arena, std::uint32_t channel, std::uint64_t first_sample, std::uint64_t count,
              std::span<float> mins, std::span<float> maxs) noexcept;

}  // namespace weir::core
