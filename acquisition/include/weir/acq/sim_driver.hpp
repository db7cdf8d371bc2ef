#pragma once
// The simulator driver: feeds generated signals into arena channels, block by block, either paced
// in real time like a clocked ADC or as fast as the machine allows.
//
// Pacing: block k (from 0) of every channel is published at the absolute deadline
// start + (k + 1) * block / rate on CLOCK_MONOTONIC (clock_nanosleep with TIMER_ABSTIME): the moment
// its last sample would have been digitised. Deadlines never depend on when earlier blocks finished,
// so lateness does not accumulate into drift; a late block is published at once and the schedule
// catches up, as an ADC's FIFO would. Paced blocks carry the nominal time of their first sample
// (start + k * block / rate, on both clocks); fast blocks carry the time they were published.
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "weir/acq/signal_generator.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/arena_layout.hpp"
#include "weir/core/error.hpp"
#include "weir/core/limits.hpp"

namespace weir::acq {

inline constexpr double kDefaultFullScaleV = 10.0;          // integer dtypes: +-10 V spans the code range
inline constexpr std::int64_t kStopPollNs = 100'000'000;    // a paced wait looks at the stop flag this often

/// What to simulate and where. Channel i's generator is seeded with signal.seed + i, so channels
/// are independent streams and a run is reproduced exactly by the same options.
struct SimOptions {
  std::vector<std::string> channels;  // one generator each; created if missing
  double rate_hz = 0;                 // samples per second, per channel
  std::uint32_t block_samples = 0;
  core::Dtype dtype = core::Dtype::f32;
  SignalConfig signal;                // sample_rate_hz is taken from rate_hz
  std::uint64_t max_blocks = 0;       // stop after this many blocks per channel (0: no limit)
  double duration_s = 0;              // stop after this much wall time (0: no limit)
  bool fast = false;                  // no pacing: as fast as possible
  double full_scale_v = kDefaultFullScaleV;  // integer dtypes only; see SignalGenerator::fill
  // Used only for channels this run creates:
  std::uint32_t ring_blocks = core::kDefaultRingBlocks;
  std::string units;                  // empty: "V" for float dtypes, "counts" for integer ones
  std::vector<std::string> labels{"sim"};
  core::FullPolicy full_policy = core::FullPolicy::wait;
  std::int64_t wait_timeout_ns = core::kDefaultWriterWaitNs;
};

/// What one channel got.
struct SimChannelReport {
  std::string name;
  bool created = false;                 // this run created it (else it attached to an existing one)
  std::uint64_t blocks_published = 0;
  std::uint64_t samples_published = 0;
  std::uint64_t blocks_dropped = 0;     // a lossless reader was full: dropped at the source, counted
  std::uint64_t samples_saturated = 0;  // integer dtypes: samples clipped at the end codes
};

/// What a run produced, for people and for tests.
struct SimReport {
  std::vector<SimChannelReport> channels;
  std::uint64_t ticks = 0;              // block periods run; each offers one block to every channel
  std::uint64_t blocks_attempted = 0;   // ticks * channels = published + dropped
  std::uint64_t blocks_published = 0;
  std::uint64_t samples_published = 0;
  std::uint64_t blocks_dropped = 0;
  std::uint64_t samples_saturated = 0;
  double elapsed_s = 0;                 // from start to the end of the last tick
  double requested_rate_hz = 0;         // samples per second per channel asked for
  double achieved_rate_hz = 0;          // samples per second per channel the source produced (published or dropped)
  std::int64_t max_lateness_ns = 0;     // paced: the latest a tick finished publishing after its deadline
  std::uint64_t overruns = 0;           // paced: ticks that finished more than one block period late
  bool fast = false;
  bool stopped = false;                 // ended by the stop flag rather than a block or time limit
};

/// Checks the options without touching an arena: channels named and distinct, rate, block size,
/// full scale, ring, limits, and the signal (via SignalGenerator::create). Thread: any.
[[nodiscard]] core::Result<void> validate(const SimOptions& options);

/// Runs the simulator until max_blocks, duration_s or `stop` (checked once per block period, and at
/// least every kStopPollNs while waiting for a deadline). First attaches to every named channel that
/// exists, refusing (before creating anything) one whose dtype, block size or sample rate differs,
/// naming the channel and both values; then creates the missing ones with the options' ring, units,
/// labels and full policy; then becomes the writer of each (failing if another live process writes
/// one). Samples are generated straight into the claimed block slots. A claim that a lossless reader
/// makes fail is counted as dropped, and the generator skips that block so later samples stay on
/// time. Returns what was produced, or the first cold-path failure (nothing is published then).
/// Thread: any one thread; `stop` may be set from any thread or a signal handler.
[[nodiscard]] core::Result<SimReport> run_sim(const core::Arena& arena, const SimOptions& options,
                                              const std::atomic<bool>& stop);

}  // namespace weir::acq
