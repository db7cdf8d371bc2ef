// The only translation unit of the embed shard that includes libtorch.
#include "torch_encoder.hpp"
#include "model_info.hpp"

#include <ATen/Parallel.h>
#include <torch/script.h>

#include <time.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <vector>

namespace weir::dsp::embed {

namespace {

// TorchScript's profiling executor profiles a graph's first runs for each input shape and then
// optimises it: configure runs these passes of a full batch so the first real batch is not slow.
constexpr int kWarmUpPasses = 3;

}  // namespace

struct TorchEncoder::Impl {
  torch::jit::script::Module module;
  std::vector<torch::jit::IValue> inputs;  // one slot, reused by every forward pass
};

TorchEncoder::TorchEncoder(std::unique_ptr<Impl> impl, std::uint32_t input_length, std::uint32_t dims) noexcept
    : impl_(std::move(impl)), input_length_(input_length), dims_(dims) {}

TorchEncoder::~TorchEncoder() = default;

std::unique_ptr<TorchEncoder> TorchEncoder::load(const std::string& path, std::uint32_t input_length,
                                                 std::uint32_t batch, int threads, std::string& error) {
  auto impl = std::make_unique<Impl>();
  try {
    at::set_num_threads(threads);
    impl->module = torch::jit::load(path, torch::kCPU);
    impl->module.eval();
  } catch (const std::exception& e) {
    error = "cannot load the model '" + path + "': " + e.what();
    return nullptr;
  }
  const std::string shape = "[1, " + std::to_string(input_length) + "]";
  try {
    c10::InferenceMode guard;
    impl->inputs.emplace_back(torch::zeros({1, static_cast<std::int64_t>(input_length)}, torch::kFloat32));
    const torch::Tensor out = impl->module.forward(impl->inputs).toTensor();
    if (out.dim() != 2 || out.size(0) != 1 || out.scalar_type() != torch::kFloat32 || out.size(1) < 1) {
      std::string sizes;
      for (const std::int64_t s : out.sizes()) sizes += (sizes.empty() ? "" : ", ") + std::to_string(s);
      error = "the model '" + path + "' maps a " + shape + " window to a " + std::string(c10::toString(out.scalar_type())) +
              " tensor of shape [" + sizes + "], not [1, dims] float32";
      return nullptr;
    }
    const auto dims = static_cast<std::uint32_t>(out.size(1));
    const torch::Tensor full = torch::zeros({static_cast<std::int64_t>(batch), static_cast<std::int64_t>(input_length)});
    for (int i = 0; i < kWarmUpPasses; ++i) {
      impl->inputs[0] = full;
      (void)impl->module.forward(impl->inputs);
    }
    impl->inputs[0] = torch::jit::IValue();
    return std::unique_ptr<TorchEncoder>(new TorchEncoder(std::move(impl), input_length, dims));
  } catch (const std::exception& e) {
    std::string what = e.what();
    if (const auto nl = what.find('\n'); nl != std::string::npos && nl > 0) what.resize(nl);  // the first line says it
    error = "the model '" + path + "' refuses a " + shape + " input (" + what +
            "): is its input length another one than " + std::to_string(input_length) + "?";
    return nullptr;
  }
}

bool TorchEncoder::forward(const float* in, std::uint32_t n, float* out) noexcept {
  try {
    c10::InferenceMode guard;
    // from_blob over the caller's reused buffer: no copy of the input.
    impl_->inputs[0] = torch::from_blob(const_cast<float*>(in),  // read only: the model does not write its input
                                        {static_cast<std::int64_t>(n), static_cast<std::int64_t>(input_length_)},
                                        torch::kFloat32);
    const torch::Tensor result = impl_->module.forward(impl_->inputs).toTensor();
    impl_->inputs[0] = torch::jit::IValue();  // drop the view of the buffer
    if (result.dim() != 2 || result.size(0) != n || result.size(1) != dims_ || result.scalar_type() != torch::kFloat32)
      return false;
    const torch::Tensor dense = result.contiguous();
    std::memcpy(out, dense.data_ptr<float>(), std::size_t{n} * dims_ * sizeof(float));
    return true;
  } catch (...) {
    return false;
  }
}

// ---- the bench's baseline ----

namespace {

double thread_cpu_s() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

}  // namespace weir::dsp::embed

/// The floor `weir bench vectors` holds the shard's forward path against: a bare libtorch loop, in
/// this plugin because libtorch is not linked into the weir binary. Loads `model` (NULL or empty:
/// the built one), then runs `windows` windows of `length` samples (a ramp, as the shard bench's
/// writer fills its blocks) through forward in batches of `batch`, one intra-op thread, under
/// InferenceMode, reading each result in place. Writes the thread's CPU seconds to *cpu_s.
/// Returns 0, or -1 with a message in error.
extern "C" __attribute__((visibility("default"))) int weir_embed_bench_bare(const char* model, std::uint32_t length,
                                                                            std::uint32_t batch, std::uint64_t windows,
                                                                            double* cpu_s, char* error,
                                                                            std::size_t error_bytes) {
  using namespace weir::dsp::embed;
  std::string path = model != nullptr ? model : "";
  if (path.empty()) path = default_model_path();
  try {
    at::set_num_threads(1);
    torch::jit::script::Module module = torch::jit::load(path, torch::kCPU);
    module.eval();
    std::vector<float> in(std::size_t{batch} * length);
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i % length) / static_cast<float>(length);
    std::vector<torch::jit::IValue> inputs(1);
    c10::InferenceMode guard;
    const auto shape = std::vector<std::int64_t>{static_cast<std::int64_t>(batch), static_cast<std::int64_t>(length)};
    float sink = 0;
    for (int i = 0; i < kWarmUpPasses; ++i) {  // as the shard's configure does: the profiling runs are not timed
      inputs[0] = torch::from_blob(in.data(), shape, torch::kFloat32);
      sink += module.forward(inputs).toTensor().data_ptr<float>()[0];
    }
    const double start = thread_cpu_s();
    for (std::uint64_t done = 0; done < windows; done += batch) {
      inputs[0] = torch::from_blob(in.data(), shape, torch::kFloat32);
      const torch::Tensor out = module.forward(inputs).toTensor();
      sink += out.data_ptr<float>()[0];
    }
    *cpu_s = thread_cpu_s() - start;
    if (sink != sink) *cpu_s = 0;  // keeps the results read
    return 0;
  } catch (const std::exception& e) {
    if (error != nullptr && error_bytes > 0) std::snprintf(error, error_bytes, "%s: %s", path.c_str(), e.what());
    return -1;
  }
}

