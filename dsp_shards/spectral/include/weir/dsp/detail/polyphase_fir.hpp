#pragma once
// The FIR kernel behind FirFilter and Decimator: a streaming FIR evaluated at every `factor`-th
// input. The input is kept in one contiguous run (the last taps - 1 samples, then the chunk being
// filtered), deinterleaved into `factor` phases, and each phase's sub-filter is applied to many
// outputs at once: one tap times a contiguous run of inputs, added into one accumulator per output,
// lanes the compiler vectorises (SSE2, AVX2 or AVX-512, picked at load time). Every output sums
// its products in the same order (phase by phase, tap by tap) however the input is cut into
// blocks and whichever lanes compute it, so the output is bit-identical for any block sizes.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace weir::dsp::detail {

class PolyphaseFir {
 public:
  /// Requires: taps not empty, factor >= 1. Allocates all it will ever need. Thread: control only.
  PolyphaseFir(std::span<const float> taps, std::uint32_t factor);

  /// Consumes in.size() samples and writes an output at each input where `until_output` counts
  /// down to 0 (then it restarts at factor); returns how many. `until_output` is the caller's
  /// position in the decimation (1 .. factor). Output j is sum_i taps[i] * x[n_j - i], x the whole
  /// input so far (zeros before the first). Requires: out holds every output made. In place
  /// (out.data() == in.data()) is allowed. Hot path: no allocation. Thread: one DSP thread.
  std::size_t process(std::span<const float> in, std::span<float> out, std::size_t& until_output) noexcept;

  /// Zeroes the history, as if only zeros had ever come in.
  void clear() noexcept;

 private:
  std::size_t taps_;
  std::size_t factor_;
  std::vector<float> phase_taps_;        // phase p's taps, oldest input first, phase after phase
  std::vector<std::uint32_t> phase_len_;  // taps of each phase
  std::vector<float> line_;              // taps - 1 samples of history, then up to kFilterChunkSamples new ones
  std::vector<float> rows_;              // the chunk deinterleaved: factor rows of row_stride_ samples
  std::size_t row_stride_;
};

}  // namespace weir::dsp::detail
