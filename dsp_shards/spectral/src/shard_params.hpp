#pragma once
// What the fft and filter shards share at configure time: reading their parameters by name,
// checking the input, naming outputs, and writing errors into the host's buffer.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "weir/core/error.hpp"
#include "weir/shard.h"

namespace weir::dsp::detail {

/// The parameters the host passed, read by name. A name the host left out falls back to the
/// declared default; every failure reads "<kind>: parameter <name> = '<value>': <why>".
class ShardParams {
 public:
  ShardParams(const char* kind, const weir_shard_config& cfg, std::span<const weir_shard_param> declared) noexcept
      : kind_(kind), cfg_(cfg), declared_(declared) {}

  /// A text parameter, checked against its declared choices.
  [[nodiscard]] core::Result<std::string_view> text(std::string_view name) const;
  /// A number, checked against its declared [min, max].
  [[nodiscard]] core::Result<double> real(std::string_view name) const;
  [[nodiscard]] core::Result<std::int64_t> integer(std::string_view name) const;
  /// true/false, 1/0, yes/no, on/off.
  [[nodiscard]] core::Result<bool> boolean(std::string_view name) const;

  /// An error about one parameter's value, for relations configure checks itself.
  [[nodiscard]] core::Error bad(std::string_view name, std::string_view value, const std::string& why) const;
  [[nodiscard]] const char* kind() const noexcept { return kind_; }

 private:
  [[nodiscard]] const weir_shard_param* declared(std::string_view name) const noexcept;
  [[nodiscard]] core::Result<std::string_view> raw(std::string_view name) const;
  [[nodiscard]] core::Result<double> in_range(std::string_view name, std::string_view value, double number) const;

  const char* kind_;
  const weir_shard_config& cfg_;
  std::span<const weir_shard_param> declared_;
};

/// Checks what every shard of the family needs: the host's ABI and struct size, a real input
/// dtype, a positive rate, a non-zero block size. Errors name the kind and the input channel.
[[nodiscard]] core::Result<void> check_input(const char* kind, const weir_shard_config& cfg);

/// "<input>.<suffix>", or output_base as given when the host passed one other than the input's name.
[[nodiscard]] std::string output_name(const weir_shard_config& cfg, const char* suffix);

/// Declares channel output 0 (f32). Fails naming the kind when name or units do not fit.
[[nodiscard]] core::Result<void> declare_channel(const char* kind, weir_shard_config& cfg, const std::string& name,
                                                 double rate_hz, std::uint32_t samples_per_block,
                                                 const std::string& units);

/// Copies message into the host's error buffer, truncated and always terminated.
void write_error(char* error, std::size_t error_bytes, std::string_view message) noexcept;

}  // namespace weir::dsp::detail
