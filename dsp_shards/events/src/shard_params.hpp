#pragma once
// What the three event shards share across the C ABI: reading and range-checking parameters
// against their own table, checking the input, declaring outputs, converting samples, and turning
// a C++ configure into a C one that never throws.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <new>
#include <span>
#include <string>

#include "weir/core/error.hpp"
#include "weir/shard.h"

namespace weir::dsp::detail {

/// Every real dtype, as the bit mask of weir_shard_api::input_dtypes (c64 is refused).
inline constexpr std::uint32_t kRealDtypes =
    (1U << WEIR_DTYPE_I8) | (1U << WEIR_DTYPE_U8) | (1U << WEIR_DTYPE_I16) | (1U << WEIR_DTYPE_U16) |
    (1U << WEIR_DTYPE_I32) | (1U << WEIR_DTYPE_U32) | (1U << WEIR_DTYPE_I64) | (1U << WEIR_DTYPE_F32) |
    (1U << WEIR_DTYPE_F64);

/// Reads the parameters of one configure call. Values come from cfg (the host fills in defaults);
/// a parameter the host did not pass takes the table's default, so a direct caller may pass only
/// some. Every value is parsed and range-checked against the table, whatever the host did.
class ParamReader {
 public:
  ParamReader(std::span<const weir_shard_param> table, const weir_shard_config& cfg) noexcept
      : table_(table), cfg_(cfg) {}

  /// Fails naming the first parameter that the table does not declare.
  [[nodiscard]] core::Result<void> check_names() const;
  [[nodiscard]] core::Result<double> real(const char* name) const;
  [[nodiscard]] core::Result<std::int64_t> integer(const char* name) const;
  [[nodiscard]] core::Result<bool> boolean(const char* name) const;
  /// The text; for a parameter with choices, one of them.
  [[nodiscard]] core::Result<std::string> text(const char* name) const;

 private:
  [[nodiscard]] const weir_shard_param* declared(const char* name) const noexcept;
  [[nodiscard]] const char* value_of(const weir_shard_param& param) const noexcept;
  [[nodiscard]] core::Result<double> in_range(const weir_shard_param& param, const char* value, double number) const;

  std::span<const weir_shard_param> table_;
  const weir_shard_config& cfg_;
};

/// "parameter 'name' = value: allowed lo to hi" and similar; cold path.
[[nodiscard]] std::string out_of_range(const char* name, const std::string& value, const std::string& allowed);

/// Checks the ABI version and struct size, the input dtype against `dtypes`, a positive rate and
/// block size, and a non-empty output base. Empties cfg.outputs.
[[nodiscard]] core::Result<void> check_input(weir_shard_config& cfg, std::uint32_t dtypes);

/// Declares `<output_base><suffix>` as a key output; returns its index.
[[nodiscard]] core::Result<std::uint32_t> add_key(weir_shard_config& cfg, const char* suffix, std::uint32_t key_type,
                                                  std::uint64_t max_bytes);
/// Declares `<output_base><suffix>` as a channel output; returns its index.
[[nodiscard]] core::Result<std::uint32_t> add_channel(weir_shard_config& cfg, const char* suffix,
                                                      std::uint32_t dtype, double rate_hz,
                                                      std::uint32_t samples_per_block);

/// Bytes per sample of a real dtype (0 for any other).
[[nodiscard]] std::uint32_t dtype_bytes(std::uint32_t dtype) noexcept;

/// Converts samples [first, first + count) of a block of `dtype` to double. Integer dtypes give
/// their codes as they are. Requires a real dtype. Hot path.
void to_double(std::uint32_t dtype, const void* samples, std::size_t first, std::size_t count, double* out) noexcept;

/// The 8 little-endian bytes of a u64 key value.
void put_u64_le(std::uint64_t value, unsigned char (&out)[8]) noexcept;

/// "kind: message" into the host's error buffer, truncated to fit. Never throws.
void write_error(char* error, std::size_t error_bytes, const char* kind, const std::string& message) noexcept;

/// Runs a C++ configure (`make(cfg)` -> Result<std::unique_ptr<Shard>>) for the C ABI: a refusal or
/// any exception becomes NULL and a message naming the shard kind; no output stays declared.
template <class Make>
weir_shard* configure_c(const char* kind, weir_shard_config* cfg, char* error, std::size_t error_bytes,
                        Make&& make) noexcept {
  if (cfg == nullptr) {
    write_error(error, error_bytes, kind, "no configuration given");
    return nullptr;
  }
  try {
    auto made = make(*cfg);
    if (made) return reinterpret_cast<weir_shard*>(made->release());  // the host holds it opaque
    write_error(error, error_bytes, kind, made.error().what);
  } catch (const std::bad_alloc&) {
    write_error(error, error_bytes, kind, "out of memory while configuring");
  } catch (const std::exception& e) {
    write_error(error, error_bytes, kind, std::string("configure failed: ") + e.what());
  } catch (...) {
    write_error(error, error_bytes, kind, "configure failed");
  }
  cfg->output_count = 0;
  return nullptr;
}

}  // namespace weir::dsp::detail
