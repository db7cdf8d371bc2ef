#pragma once
// The TorchScript encoder the embed shard runs: the one part of the shard that sees libtorch, so
// that libtorch stays inside the plugin. Plain types only in this header.
#include <cstdint>
#include <memory>
#include <string>

namespace weir::dsp::embed {

/// One loaded TorchScript module mapping [n, input_length] float32 windows to [n, dims] vectors.
/// Thread: one thread at a time (the shard's processing thread).
class TorchEncoder {
 public:
  /// Loads `path` (torch::jit::load, CPU, eval), limits libtorch's intra-op threads to `threads`
  /// (process-wide: a shard host runs one embed shard per core), and probes the output shape with
  /// one forward pass of a [1, input_length] zero window, then warms up with a few passes of a
  /// [batch, input_length] one (TorchScript optimises per shape after profiling runs). Fills
  /// `error` and returns NULL when the
  /// file does not load, the forward pass refuses that input (naming the model's error), or the
  /// output is not [1, dims] float32. Thread: control only.
  static std::unique_ptr<TorchEncoder> load(const std::string& path, std::uint32_t input_length, std::uint32_t batch,
                                            int threads, std::string& error);
  ~TorchEncoder();
  TorchEncoder(const TorchEncoder&) = delete;
  TorchEncoder& operator=(const TorchEncoder&) = delete;

  [[nodiscard]] std::uint32_t dims() const noexcept { return dims_; }
  [[nodiscard]] std::uint32_t input_length() const noexcept { return input_length_; }

  /// Runs windows [0, n) of `in` (n x input_length, row-major, a buffer the caller reuses) through
  /// the model, without autograd, and copies the [n, dims] result into `out`. false when libtorch
  /// throws or the result has another shape (nothing of out is then valid). Hot path: no
  /// allocation by this code beyond libtorch's own (tensor headers, the output tensor).
  bool forward(const float* in, std::uint32_t n, float* out) noexcept;

 private:
  struct Impl;
  explicit TorchEncoder(std::unique_ptr<Impl> impl, std::uint32_t input_length, std::uint32_t dims) noexcept;
  std::unique_ptr<Impl> impl_;
  std::uint32_t input_length_ = 0;
  std::uint32_t dims_ = 0;
};

}  // namespace weir::dsp::embed
