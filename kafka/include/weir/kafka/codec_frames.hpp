#pragma once
// Frame channels as ESS streaming-data-types messages (schemas in kafka/schemas/):
//
//   a frame of a channel with an axis  -> hs01  source = the channel, timestamp = the frame's time
//     (a spectrum, a histogram)                 (ns since the epoch), one dimension: length = the
//                                               frame's elements, unit and label = the axis's,
//                                               bin_boundaries = length + 1 edges (f64), data = the
//                                               elements (i8 ... i32 widened to int, u32 and i64 as
//                                               long, f32 float, f64 double), info = the data's units
//   a block of an event channel       -> ev44  source_name = the channel, message_id = the block's
//     (core/event_record.hpp)                   sequence, reference_time = [the block's stamp],
//                                               reference_time_index = [0], time_of_flight = each
//                                               event's time_offset_ns, pixel_id = its id (int32)
//
// hs01 has no counter: the sender carries the block's sequence in a Kafka header (sender.hpp).
// ev44 has no pulse height: the event channel's heights and flags are not sent.
// Encoders keep one FlatBufferBuilder each and reuse it (no allocation once it has grown); what
// they return points into the builder until the next encode. Decoders verify the buffer before
// they read it and return views into it.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "weir/core/arena_layout.hpp"
#include "weir/core/error.hpp"

namespace weir::kafka {

inline constexpr std::string_view kHs01 = "hs01";
inline constexpr std::string_view kEv44 = "ev44";

/// Whether hs01 has an array for data of this dtype (every real dtype; c64 has none). Thread: any.
[[nodiscard]] bool hs01_carries(core::Dtype dtype) noexcept;
/// The dtype a channel's data of `dtype` has on the wire in hs01: i32 (i8 ... i32, u16), i64 (u32,
/// i64), f32, f64. Requires: hs01_carries(dtype). Thread: any.
[[nodiscard]] core::Dtype hs01_wire_dtype(core::Dtype dtype) noexcept;

/// The bin boundaries of an axis of `bins` bins (bins + 1 edges, into `out`): halfway between
/// neighbouring centres, the outer edges half a spacing out. Centres are `values` when it holds
/// `bins` values, else start + i * step. Cold path. Thread: any.
void bin_boundaries(std::uint32_t bins, double start, double step, std::span<const double> values,
                    std::vector<double>& out);

/// One 1-D histogram (a frame) as hs01 carries it. bins == 0: an empty histogram (shape [0], no
/// dimension, no data).
struct HistogramFrame {
  std::string_view source;
  std::int64_t timestamp_ns = 0;
  std::int64_t metadata_timestamp_ns = 0;  // last_metadata_timestamp: when the axis was last read
  std::string_view label, unit, info;      // the axis's name and units; the data's units
  std::uint32_t bins = 0;
  std::span<const double> boundaries;      // bins + 1 edges
  core::Dtype dtype = core::Dtype::f64;    // encode: the channel's; decode: hs01_wire_dtype's
  std::span<const std::byte> data;         // bins * dtype_bytes(dtype) bytes, native order
};

class Hs01Encoder {
 public:
  Hs01Encoder();
  ~Hs01Encoder();
  Hs01Encoder(const Hs01Encoder&) = delete;
  Hs01Encoder& operator=(const Hs01Encoder&) = delete;

  /// The frame as an hs01 message. Requires: hs01_carries(frame.dtype), boundaries.size() == bins + 1
  /// (unless bins == 0). Hot path: no allocation once the builder has grown.
  [[nodiscard]] std::span<const std::byte> encode(const HistogramFrame& frame);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// An hs01 message's fields, viewing `message`. weir reads whole 1-D histograms with f64 boundaries:
/// fails naming what is wrong for anything else (not hs01, does not verify, a rank other than 1,
/// an offset, a length or boundary count that does not match the shape, data of another size).
/// Thread: any.
[[nodiscard]] core::Result<HistogramFrame> decode_hs01(std::span<const std::byte> message);

/// One block of an event channel as ev44 carries it.
struct EventBlock {
  std::string_view source;
  std::int64_t message_id = 0;         // the block's sequence
  std::int64_t reference_time_ns = 0;  // the block's realtime stamp
  bool pulse = true;                   // false: no reference time at all (a gap carrier)
  std::span<const std::byte> records;  // events * kEventFields f64 (event_record.hpp), any alignment
};

struct Ev44Encoded {
  std::span<const std::byte> message;
  std::uint32_t events = 0;   // events in the message
  std::uint32_t dropped = 0;  // events left out: a time offset or id outside int32 (or NaN)
};

class Ev44Encoder {
 public:
  Ev44Encoder();
  ~Ev44Encoder();
  Ev44Encoder(const Ev44Encoder&) = delete;
  Ev44Encoder& operator=(const Ev44Encoder&) = delete;

  /// The block as an ev44 message. An event whose time offset or id does not fit an int32 (an offset
  /// beyond +-2.147 s of its block's stamp) is left out and counted in `dropped`; offsets and ids are
  /// rounded to the nearest integer. Requires:
  /// records.size() a multiple of kEventFields doubles. Hot path: no allocation once grown.
  [[nodiscard]] Ev44Encoded encode(const EventBlock& block);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// An ev44 message's fields, viewing it.
struct EventMessage {
  std::string_view source;
  std::int64_t message_id = 0;
  std::span<const std::int64_t> reference_time;
  std::span<const std::int32_t> reference_time_index;
  std::span<const std::int32_t> time_of_flight;
  std::span<const std::int32_t> pixel_id;  // empty, or one per time_of_flight
};

/// An ev44 message's fields, viewing `message`. Fails naming what is wrong: not ev44, does not
/// verify, reference_time and reference_time_index of different lengths, an index that decreases
/// or points past the events, pixel_id neither empty nor one per event. Thread: any.
[[nodiscard]] core::Result<EventMessage> decode_ev44(std::span<const std::byte> message);

}  // namespace weir::kafka
