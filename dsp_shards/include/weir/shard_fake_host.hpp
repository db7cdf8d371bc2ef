#pragma once
// A stand-in for the shard host, for tests of one shard (built in or third party) with no arena, no
// threads and no other process:
//
//   weir::shard_test::ShardConfig b("adc0", WEIR_DTYPE_I16, 1024, 1e6, "V");
//   b.param("gain", "2");
//   auto [shard, error] = weir::shard_test::configure(*weir_shard_entry(WEIR_SHARD_ABI_VERSION), b.build());
//   weir::shard_test::FakeHost host(b.config());       // the outputs configure declared
//   const weir_shard_host table = host.table();
//   api->process(shard, &block, &table);                // then look at host.published, host.key_writes
//   CHECK(host.misuse == 0);
//
// Header-only, C++17, nothing but weir/shard.h and the standard library, and it asserts nothing
// itself: a breach of the host contract by the shard (publishing without a claim, more samples than
// claimed, an undeclared output, a claim on a key, an array key written with other than its declared
// shape's bytes, a put_vector on anything but a vector ring) is counted in `misuse` for the test to
// check. Vector puts are recorded in `vectors` with the ring index the host would write. Declared outputs, their frame shape
// and array shape included, are kept as configure left them: see output().
// Channel outputs are taken as f32, the dtype every built-in shard writes.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "weir/shard.h"

namespace weir::shard_test {

/// A weir_shard_config as a host builds it, owning its strings: instance "test0", output base the
/// input's name unless set. Thread: one owner.
class ShardConfig {
 public:
  using Params = std::vector<std::pair<std::string, std::string>>;

  ShardConfig(std::string input, std::uint32_t dtype, std::uint32_t samples_per_block, double rate_hz,
              std::string units, Params params = {})
      : input_(std::move(input)), units_(std::move(units)), params_(std::move(params)) {
    cfg_.abi_version = WEIR_SHARD_ABI_VERSION;
    cfg_.struct_size = sizeof(weir_shard_config);
    cfg_.input_dtype = dtype;
    cfg_.input_samples_per_block = samples_per_block;
    cfg_.input_rate_hz = rate_hz;
    build();
  }

  /// Adds a parameter as the host would pass it (text).
  ShardConfig& param(std::string name, std::string value) {
    params_.emplace_back(std::move(name), std::move(value));
    return *this;
  }
  ShardConfig& output_base(std::string base) {
    base_ = std::move(base);
    return *this;
  }
  /// Version 3's input fields: the input's frame size (0: plain samples) and the arena's vector dim.
  ShardConfig& input_frames(std::uint32_t frame_elements) {
    cfg_.input_frame_elements = frame_elements;
    return *this;
  }
  ShardConfig& arena_vector_dim(std::uint32_t dim) {
    cfg_.arena_vector_dim = dim;
    return *this;
  }
  ShardConfig& instance(std::string name) {
    instance_ = std::move(name);
    return *this;
  }

  /// The config with no outputs declared yet; its pointers stay valid while this object lives,
  /// unmoved and unchanged.
  weir_shard_config& build() {
    name_ptrs_.clear();
    value_ptrs_.clear();
    for (const auto& [name, value] : params_) {
      name_ptrs_.push_back(name.c_str());
      value_ptrs_.push_back(value.c_str());
    }
    cfg_.instance = instance_.c_str();
    cfg_.input_channel = input_.c_str();
    cfg_.input_units = units_.c_str();
    cfg_.output_base = base_.empty() ? input_.c_str() : base_.c_str();
    cfg_.param_count = static_cast<std::uint32_t>(params_.size());
    cfg_.param_names = name_ptrs_.data();
    cfg_.param_values = value_ptrs_.data();
    cfg_.output_count = 0;
    return cfg_;
  }

  /// The config as last built, with what configure declared into it.
  weir_shard_config& config() noexcept { return cfg_; }
  const weir_shard_config& config() const noexcept { return cfg_; }

 private:
  std::string input_, units_, base_;
  std::string instance_ = "test0";
  Params params_;
  std::vector<const char*> name_ptrs_, value_ptrs_;
  weir_shard_config cfg_{};
};

/// What configure returned: the instance (NULL on refusal) and the error text.
struct Configured {
  weir_shard* shard = nullptr;
  std::string error;
};

/// Calls api.configure with an error buffer of the host's size.
inline Configured configure(const weir_shard_api& api, weir_shard_config& cfg) {
  char error[WEIR_SHARD_ERROR_BYTES] = {};
  Configured result;
  result.shard = api.configure(&cfg, error, sizeof error);
  result.error = error;
  return result;
}

/// The index of the output called `name`, or -1.
inline int output_index(const weir_shard_config& cfg, const std::string& name) {
  for (std::uint32_t i = 0; i < cfg.output_count; ++i)
    if (name == cfg.outputs[i].name) return static_cast<int>(i);
  return -1;
}

/// Records every call a shard makes through weir_shard_host. Thread: the one calling process().
class FakeHost {
 public:
  struct Published {
    std::uint32_t output = 0;
    std::vector<float> samples;  // an 8-byte dtype's bytes, two words a sample (as_f64 reads them)
    std::uint64_t realtime_ns = 0;
    std::uint32_t flags = 0;
    [[nodiscard]] std::vector<double> as_f64() const {
      std::vector<double> out(samples.size() / 2);
      std::memcpy(out.data(), samples.data(), out.size() * sizeof(double));
      return out;
    }
  };

  /// Any output index below WEIR_SHARD_MAX_OUTPUTS; every claim gets `capacity` samples (0: NULL).
  explicit FakeHost(std::uint32_t samples_per_claim = 64) : capacity(samples_per_claim) {}
  /// Only the outputs `cfg` declares, as a host does: claims on its channels get their
  /// samples_per_block, set_key only on its keys.
  explicit FakeHost(const weir_shard_config& cfg) : capacity(0), declared_(true), outputs_(cfg.output_count) {
    for (std::uint32_t i = 0; i < cfg.output_count && i < WEIR_SHARD_MAX_OUTPUTS; ++i) outputs_[i] = cfg.outputs[i];
  }

  std::uint32_t capacity;       // samples per claim when no config was given
  bool drop_all = false;        // every claim returns NULL (dropped at the source)
  int drop_claims = 0;          // the next this many claims return NULL
  bool keys_busy = false;       // set_key fails, as for a key held by another writer
  bool vectors_busy = false;    // put_vector fails, as for a ring key held by another writer
  std::uint32_t vector_dims = 0;  // floats a put_vector reads when no config was given

  int claims = 0;               // every claim call, dropped ones included
  int double_claims = 0;        // claims of an output already claimed and not yet published
  int misuse = 0;               // breaches of the host contract, see the top of this file
  std::vector<Published> published;
  std::map<std::uint32_t, std::vector<std::string>> key_writes;  // every value written, per output
  std::vector<std::string> logs;
  struct VectorPut {
    std::uint32_t output = 0;
    std::uint64_t ring_index = 0;  // the key <name>/<ring_index> the host writes: puts so far mod capacity
    std::vector<float> vector;
    weir_vector_meta meta{};
  };
  std::vector<VectorPut> vectors;  // every successful put_vector, in order

  /// The table to hand to process(); valid while this object lives unmoved.
  weir_shard_host table() noexcept {
    weir_shard_host h{};
    h.self = this;
    h.claim = [](void* self, std::uint32_t output, std::uint32_t* granted) -> void* {
      return static_cast<FakeHost*>(self)->claim(output, granted);
    };
    h.publish = [](void* self, std::uint32_t output, std::uint32_t samples, std::uint64_t realtime_ns,
                   std::uint32_t flags) { static_cast<FakeHost*>(self)->publish(output, samples, realtime_ns, flags); };
    h.set_key = [](void* self, std::uint32_t output, const void* value, std::size_t bytes) {
      return static_cast<FakeHost*>(self)->set_key(output, value, bytes);
    };
    h.log = [](void* self, int, const char* message) {
      static_cast<FakeHost*>(self)->logs.emplace_back(message != nullptr ? message : "");
    };
    h.put_vector = [](void* self, std::uint32_t output, const float* vector, const weir_vector_meta* meta) {
      return static_cast<FakeHost*>(self)->put_vector(output, vector, meta);
    };
    return h;
  }

  /// The declaration of output `output` as configure left it (frame and array fields included);
  /// all zero for an index not declared, or when no config was given.
  weir_shard_output output(std::uint32_t output) const noexcept {
    return output < outputs_.size() ? outputs_[output] : weir_shard_output{};
  }

  /// Every value written to key output `output`, in order (none: empty).
  std::vector<std::string> writes(std::uint32_t output) const {
    const auto it = key_writes.find(output);
    return it == key_writes.end() ? std::vector<std::string>() : it->second;
  }

  /// The last value of an array key as its elements (T the element type, e.g. std::uint32_t for
  /// WEIR_DTYPE_U32), assuming a little-endian host as every supported target is; empty when there
  /// is none or its size is not a whole number of T.
  template <class T>
  std::vector<T> array(std::uint32_t output) const {
    const std::string bytes = last_key(output);
    if (bytes.empty() || bytes.size() % sizeof(T) != 0) return {};
    std::vector<T> values(bytes.size() / sizeof(T));
    std::memcpy(values.data(), bytes.data(), bytes.size());
    return values;
  }

  /// The last value written to key output `output` ("" if none).
  std::string last_key(std::uint32_t output) const {
    const auto it = key_writes.find(output);
    return it == key_writes.end() || it->second.empty() ? std::string() : it->second.back();
  }
  /// The last value of an f64 key; NaN when there is none or it is not 8 bytes.
  double f64(std::uint32_t output) const {
    const std::string bytes = last_key(output);
    double v = std::numeric_limits<double>::quiet_NaN();
    if (bytes.size() == sizeof v) std::memcpy(&v, bytes.data(), sizeof v);
    return v;
  }
  /// The last value of a u64 key, little-endian as the ABI writes it; all ones when there is none
  /// or it is not 8 bytes.
  std::uint64_t u64(std::uint32_t output) const {
    const std::string bytes = last_key(output);
    if (bytes.size() != 8) return ~std::uint64_t{0};
    std::uint64_t v = 0;
    for (int b = 7; b >= 0; --b) v = (v << 8) | static_cast<unsigned char>(bytes[static_cast<std::size_t>(b)]);
    return v;
  }

 private:
  bool is(std::uint32_t output, std::uint32_t kind) const noexcept {
    if (output >= WEIR_SHARD_MAX_OUTPUTS) return false;
    return !declared_ || (output < outputs_.size() && outputs_[output].kind == kind);
  }

  // 4-byte words of one sample of a declared output: 2 for 8-byte dtypes (Published::samples then
  // holds their bytes, e.g. f64 values to be read with as_f64()), else 1.
  std::size_t words(std::uint32_t output) const {
    if (!declared_ || output >= outputs_.size()) return 1;
    const std::uint32_t d = outputs_[output].dtype;
    return d == WEIR_DTYPE_F64 || d == WEIR_DTYPE_C64 || d == WEIR_DTYPE_I64 ? 2 : 1;
  }

  void* claim(std::uint32_t output, std::uint32_t* granted) {
    ++claims;
    if (!is(output, WEIR_OUTPUT_CHANNEL) || granted == nullptr) {
      ++misuse;
      return nullptr;
    }
    if (drop_all) return nullptr;
    if (drop_claims > 0) {
      --drop_claims;
      return nullptr;
    }
    const std::uint32_t n = declared_ ? outputs_[output].samples_per_block : capacity;
    if (n == 0) return nullptr;
    if (claimed_.count(output) != 0) ++double_claims;
    std::vector<float>& buffer = claimed_[output];
    buffer.assign(std::size_t{n} * words(output), -12345.0F);  // stale data must never leak out
    *granted = n;
    return buffer.data();
  }

  void publish(std::uint32_t output, std::uint32_t samples, std::uint64_t realtime_ns, std::uint32_t flags) {
    const auto it = claimed_.find(output);
    const std::size_t n = std::size_t{samples} * words(output);
    if (it == claimed_.end() || n > it->second.size()) {
      ++misuse;
      return;
    }
    published.push_back({output, std::vector<float>(it->second.begin(), it->second.begin() + static_cast<std::ptrdiff_t>(n)),
                         realtime_ns, flags});
    claimed_.erase(it);
  }

  int set_key(std::uint32_t output, const void* value, std::size_t bytes) {
    if (!is(output, WEIR_OUTPUT_KEY) || (value == nullptr && bytes > 0) ||
        (declared_ && bytes > outputs_[output].max_bytes) ||
        (declared_ && outputs_[output].key_type == WEIR_KEY_ARRAY && bytes != array_bytes(outputs_[output]))) {
      ++misuse;
      return -1;
    }
    if (keys_busy) return -1;
    std::vector<std::string>& writes = key_writes[output];
    if (bytes == 0) {
      writes.emplace_back();
    } else {
      writes.emplace_back(static_cast<const char*>(value), bytes);
    }
    return 0;
  }

  int put_vector(std::uint32_t output, const float* vector, const weir_vector_meta* meta) {
    const std::uint32_t dims = declared_ && output < outputs_.size() ? outputs_[output].array_dims[0] : vector_dims;
    if (!is(output, WEIR_OUTPUT_VECTORS) || vector == nullptr || meta == nullptr || dims == 0) {
      ++misuse;
      return -1;
    }
    std::uint64_t& puts = puts_[output];
    const std::uint32_t ring = declared_ ? outputs_[output].capacity : 0;
    const std::uint64_t index = ring != 0 ? puts % ring : puts;
    ++puts;  // as the host: a failed put still moves the ring on
    if (vectors_busy) return -1;
    vectors.push_back({output, index, std::vector<float>(vector, vector + dims), *meta});
    return 0;
  }

  // The bytes of an array key's declared shape (0 for a malformed declaration).
  static std::uint64_t array_bytes(const weir_shard_output& o) noexcept {
    std::uint64_t element = 0;
    switch (o.array_dtype) {
      case WEIR_DTYPE_I8: case WEIR_DTYPE_U8: element = 1; break;
      case WEIR_DTYPE_I16: case WEIR_DTYPE_U16: element = 2; break;
      case WEIR_DTYPE_I32: case WEIR_DTYPE_U32: case WEIR_DTYPE_F32: element = 4; break;
      case WEIR_DTYPE_I64: case WEIR_DTYPE_F64: case WEIR_DTYPE_C64: element = 8; break;
      default: return 0;
    }
    if (o.array_rank == 1) return element * o.array_dims[0];
    if (o.array_rank == 2) return element * o.array_dims[0] * o.array_dims[1];
    return 0;
  }

  bool declared_ = false;
  std::vector<weir_shard_output> outputs_;
  std::map<std::uint32_t, std::vector<float>> claimed_;  // outputs claimed and not yet published
  std::map<std::uint32_t, std::uint64_t> puts_;           // put_vector calls per vector ring
};

}  // namespace weir::shard_test
