#pragma once
// weir's things as ESS streaming-data-types messages (FlatBuffers, schemas in kafka/schemas/):
//
//   a channel's block  -> se00  name = the channel, message_counter = the block's sequence,
//                               packet_timestamp = its first sample's time (ns since the epoch),
//                               time_delta = 1e9 / rate (ns between samples), location Start,
//                               values = the samples as the array of the channel's dtype
//   an arena key       -> f144  source_name = the key, timestamp = when read, value = the scalar
//                               (i64 -> Long, u64 -> ULong, f64 -> Double) or the array
//   the sender's state -> x5f2  a heartbeat with its figures as JSON
//
// Encoders keep one FlatBufferBuilder each and reuse it: after the first messages of the largest
// size they allocate nothing. What they return points into the builder until the next encode.
// Decoders verify the buffer (FlatBuffers' Verifier and the file identifier) before they read it,
// and return views into it.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "weir/core/arena_layout.hpp"
#include "weir/core/error.hpp"

namespace weir::kafka {

inline constexpr std::string_view kSe00 = "se00";
inline constexpr std::string_view kF144 = "f144";
inline constexpr std::string_view kX5f2 = "x5f2";

/// The schema id of a FlatBuffers message (its file identifier, bytes 4 to 8); "" when it is too
/// short to have one. Thread: any.
[[nodiscard]] std::string_view schema_id(std::span<const std::byte> message) noexcept;

/// Whether se00 has an array type for samples of this dtype (c64 has none). Thread: any.
[[nodiscard]] bool se00_carries(core::Dtype dtype) noexcept;

/// One block as an se00 message carries it.
struct SampleBlock {
  std::string_view name;             // the source (the channel's name)
  std::int64_t counter = 0;          // message_counter: the block's sequence
  std::int64_t packet_timestamp_ns = 0;
  double time_delta_ns = 0;
  core::Dtype dtype = core::Dtype::f32;
  std::uint32_t samples = 0;
  std::span<const std::byte> values;  // samples * dtype_bytes(dtype) bytes, native (little-endian) order
};

class Se00Encoder {
 public:
  Se00Encoder();
  ~Se00Encoder();
  Se00Encoder(const Se00Encoder&) = delete;
  Se00Encoder& operator=(const Se00Encoder&) = delete;

  /// The block as an se00 message; `block.values` is copied once, straight into the message.
  /// Requires: se00_carries(block.dtype). Hot path: no allocation once the builder has grown.
  [[nodiscard]] std::span<const std::byte> encode(const SampleBlock& block);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// An se00 message's fields, viewing `message`. Fails naming what is wrong: not se00, a buffer that
/// does not verify, a value type weir has no dtype for (u64), a negative counter. Thread: any.
[[nodiscard]] core::Result<SampleBlock> decode_se00(std::span<const std::byte> message);

/// One logged value as an f144 message carries it.
struct LogValue {
  std::string_view source;
  std::int64_t timestamp_ns = 0;
  core::ValueType type = core::ValueType::none;  // i64, u64, f64 (scalars) or array
  std::uint64_t bits = 0;                        // a scalar's 8 bytes (i64, u64 or f64 bits)
  core::Dtype elem = core::Dtype::f64;           // an array's element type
  std::uint32_t elements = 0;
  std::span<const std::byte> array;              // an array's elements
};

class F144Encoder {
 public:
  F144Encoder();
  ~F144Encoder();
  F144Encoder(const F144Encoder&) = delete;
  F144Encoder& operator=(const F144Encoder&) = delete;

  /// The value as an f144 message. Fails, naming the source, for a type f144 cannot carry (text,
  /// bytes, vector; an array of c64). Hot path: no allocation once the builder has grown.
  [[nodiscard]] core::Result<std::span<const std::byte>> encode(const LogValue& value);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// An f144 message's fields, viewing `message`; scalars of the narrower types (Byte ... Float) come
/// back widened to i64, u64 or f64. Fails naming what is wrong. Thread: any.
[[nodiscard]] core::Result<LogValue> decode_f144(std::span<const std::byte> message);

/// A status heartbeat as x5f2 carries it.
struct Status {
  std::string software_name = "weir";
  std::string software_version;
  std::string service_id;
  std::string host_name;
  std::uint32_t process_id = 0;
  std::uint32_t update_interval_ms = 0;
  std::string status_json;
};

class X5f2Encoder {
 public:
  X5f2Encoder();
  ~X5f2Encoder();
  X5f2Encoder(const X5f2Encoder&) = delete;
  X5f2Encoder& operator=(const X5f2Encoder&) = delete;
  /// The status as an x5f2 message. Cold path.
  [[nodiscard]] std::span<const std::byte> encode(const Status& status);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// An x5f2 message's fields (copied). Fails naming what is wrong. Thread: any.
[[nodiscard]] core::Result<Status> decode_x5f2(std::span<const std::byte> message);

}  // namespace weir::kafka
