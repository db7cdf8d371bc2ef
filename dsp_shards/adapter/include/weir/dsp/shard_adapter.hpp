#pragma once
// Turns a C++ shard class into the weir/shard.h entry table, so a built-in shard is its algorithm,
// its parameter table and one line registering it:
//
//   class GainShard {
//    public:
//     static constexpr const char* kKind = "gain";
//     static constexpr const char* kDescription = "multiplies every sample by k";
//     static constexpr weir_shard_param kParams[] = {{"k", WEIR_PARAM_REAL, 0, "1", -1e6, 1e6, nullptr, "factor"}};
//     static constexpr std::uint32_t kInputDtypes = kRealDtypes;
//     // Cold path: validate, allocate, declare outputs into cfg. A refusal's text gets "gain: " in front.
//     static core::Result<std::unique_ptr<GainShard>> configure(weir_shard_config& cfg);
//     // Hot path: in and host are never null; samples is non-null when count > 0.
//     int process(const weir_shard_block& in, const weir_shard_host& host) noexcept;
//     // Optional: at stop, publish what is accumulated, marked partial (the table's flush).
//     int flush(const weir_shard_host& host) noexcept;
//   };
//   extern "C" const weir_shard_api* weir_builtin_gain(uint32_t v) { return weir::dsp::shard_entry<GainShard>(v); }
//
// The adapter keeps every C++ exception and every null pointer on its side of the ABI. A class may
// declare `static constexpr bool kErrorsNameKind = false` to have its refusals passed on without the
// "<kind>: " in front (the host names the shard anyway).
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <iterator>
#include <memory>
#include <new>
#include <string>
#include <string_view>

#include "weir/core/error.hpp"
#include "weir/shard.h"

namespace weir::dsp {

/// "<kind>: <message>" (only the message for an empty kind) into the host's error buffer, truncated
/// to fit and always terminated; nothing when error is NULL or error_bytes is 0. Thread: any.
void write_error(char* error, std::size_t error_bytes, std::string_view kind, std::string_view message) noexcept;

/// What ShardAdapter needs of a shard class (see the top of this file).
template <class S>
concept BuiltinShard = requires(weir_shard_config& cfg, S& shard, const weir_shard_block& in,
                                const weir_shard_host& host) {
  { S::kKind } -> std::convertible_to<const char*>;
  { S::kDescription } -> std::convertible_to<const char*>;
  { S::kInputDtypes } -> std::convertible_to<std::uint32_t>;
  { std::size(S::kParams) } -> std::convertible_to<std::size_t>;
  { S::configure(cfg) } -> std::same_as<core::Result<std::unique_ptr<S>>>;
  { shard.process(in, host) } noexcept -> std::same_as<int>;
};

/// The C entry table of shard class S and the three functions behind it.
template <BuiltinShard S>
class ShardAdapter {
  static constexpr std::string_view error_kind() noexcept {
    if constexpr (requires { S::kErrorsNameKind; }) {
      if (!S::kErrorsNameKind) return {};
    }
    return S::kKind;
  }

 public:
  /// configure for the C ABI: a refusal or any exception becomes NULL and a message naming the
  /// kind; no output stays declared. Thread: control.
  static weir_shard* configure(weir_shard_config* cfg, char* error, std::size_t error_bytes) noexcept {
    if (cfg == nullptr) {
      write_error(error, error_bytes, error_kind(), "no configuration given");
      return nullptr;
    }
    try {
      auto made = S::configure(*cfg);
      if (made) return reinterpret_cast<weir_shard*>(made->release());  // the host holds it opaque
      write_error(error, error_bytes, error_kind(), made.error().what);
    } catch (const std::bad_alloc&) {
      write_error(error, error_bytes, error_kind(), "out of memory while configuring");
    } catch (const std::exception& e) {
      write_error(error, error_bytes, error_kind(), std::string("configure failed: ") + e.what());
    } catch (...) {
      write_error(error, error_bytes, error_kind(), "configure failed");
    }
    cfg->output_count = 0;
    return nullptr;
  }

  /// process for the C ABI; -1 for a null shard, block or host, or a non-empty block without
  /// samples. Hot path.
  static int process(weir_shard* handle, const weir_shard_block* in, const weir_shard_host* host) noexcept {
    if (handle == nullptr || in == nullptr || host == nullptr || (in->count > 0 && in->samples == nullptr)) return -1;
    return reinterpret_cast<S*>(handle)->process(*in, *host);
  }

  /// flush for the C ABI (only for a class with flush); -1 for a null shard or host. Thread: the
  /// processing thread, once, before stop.
  static int flush(weir_shard* handle, const weir_shard_host* host) noexcept {
    if (handle == nullptr || host == nullptr) return -1;
    return reinterpret_cast<S*>(handle)->flush(*host);
  }

  static constexpr bool kHasFlush = requires(S& shard, const weir_shard_host& host) {
    { shard.flush(host) } noexcept -> std::same_as<int>;
  };
  using FlushFn = int (*)(weir_shard*, const weir_shard_host*);
  static constexpr FlushFn flush_entry() noexcept {
    if constexpr (kHasFlush) return &flush;
    return nullptr;
  }

  /// idle for the C ABI (only for a class with idle); -1 for a null shard or host. Thread: the
  /// processing thread, when its input has no more blocks for now.
  static int idle(weir_shard* handle, const weir_shard_host* host, std::uint32_t flags) noexcept {
    if (handle == nullptr || host == nullptr) return -1;
    return reinterpret_cast<S*>(handle)->idle(*host, flags);
  }

  static constexpr bool kHasIdle = requires(S& shard, const weir_shard_host& host, std::uint32_t flags) {
    { shard.idle(host, flags) } noexcept -> std::same_as<int>;
  };
  using IdleFn = int (*)(weir_shard*, const weir_shard_host*, std::uint32_t);
  static constexpr IdleFn idle_entry() noexcept {
    if constexpr (kHasIdle) return &idle;
    return nullptr;
  }

  /// stop for the C ABI: destroys what configure made. Thread: control.
  static void stop(weir_shard* handle) noexcept { delete reinterpret_cast<S*>(handle); }

  static constexpr weir_shard_api kApi = {
      WEIR_SHARD_ABI_VERSION,
      sizeof(weir_shard_api),
      S::kKind,
      S::kDescription,
      std::size(S::kParams) > 0 ? std::data(S::kParams) : nullptr,
      static_cast<std::uint32_t>(std::size(S::kParams)),
      S::kInputDtypes,
      &configure,
      &process,
      &stop,
      flush_entry(),
      idle_entry(),
  };
};

/// The body of a built-in's entry function: S's table for a host of this ABI version, else NULL.
template <BuiltinShard S>
const weir_shard_api* shard_entry(std::uint32_t host_abi_version) noexcept {
  return host_abi_version == WEIR_SHARD_ABI_VERSION ? &ShardAdapter<S>::kApi : nullptr;
}

/// Copies `text` into a fixed ABI field with its terminating zero, zeroing the rest; false (field
/// untouched) when it does not fit. Thread: any.
template <std::size_t N>
bool put_text(char (&field)[N], std::string_view text) noexcept {
  if (text.size() >= N) return false;
  for (std::size_t i = 0; i < N; ++i) field[i] = i < text.size() ? text[i] : '\0';
  return true;
}

}  // namespace weir::dsp
