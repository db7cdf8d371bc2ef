// One channel the sender follows: its schema, its fixed fields, its pending gap runs, its messages.
#include "sender_channel.hpp"

#include <fnmatch.h>

#include <array>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "weir/core/clock.hpp"
#include "weir/core/event_record.hpp"
#include "weir/core/kv_store.hpp"

namespace weir::kafka {

using core::Errc;
using core::fail;

namespace {

// The axis's explicit values: an f64 array key of one value per element, else none.
std::vector<double> axis_values(const core::Arena& arena, const std::string& key, std::uint32_t elements) {
  std::vector<double> values;
  if (key.empty()) return values;
  core::KvStore kv(arena);
  std::vector<std::byte> raw(kv.value_bytes());
  core::ValueInfo info;
  if (kv.get(key, raw, info) != core::KvStatus::ok || info.type != core::ValueType::array ||
      info.array.elem != core::Dtype::f64 || info.array.elements() != elements)
    return values;
  values.resize(elements);
  std::memcpy(values.data(), raw.data(), std::size_t{elements} * sizeof(double));
  return values;
}

}  // namespace

const char* schema_name(Schema schema) noexcept {
  switch (schema) {
    case Schema::se00: return "se00";
    case Schema::hs01: return "hs01";
    case Schema::ev44: return "ev44";
  }
  return "?";
}

bool parse_schema(std::string_view text, Schema& out) noexcept {
  for (Schema s : {Schema::se00, Schema::hs01, Schema::ev44})
    if (text == schema_name(s)) {
      out = s;
      return true;
    }
  return false;
}

core::Result<Schema> pick_schema(const core::ChannelInfo& info, const std::vector<SchemaChoice>& choices) {
  const bool events = core::is_event_channel(info.dtype, info.frame);
  Schema schema = events                                              ? Schema::ev44
                  : info.frame.framed() && !info.frame.axis.name.empty() ? Schema::hs01
                                                                      : Schema::se00;
  for (const SchemaChoice& c : choices)
    if (fnmatch(c.pattern.c_str(), info.name.c_str(), 0) == 0) {
      if (!parse_schema(c.schema, schema))
        return fail(Errc::invalid_argument, fmt::format("schema '{}' for '{}': se00, hs01 or ev44", c.schema, c.pattern));
      break;
    }
  const auto refuse = [&](std::string_view why) {
    return fail(Errc::invalid_argument, fmt::format("channel '{}' ({}{}) cannot go as {}: {}", info.name,
                                                    core::dtype_name(info.dtype), info.frame.framed() ? ", framed" : "",
                                                    schema_name(schema), why));
  };
  switch (schema) {
    case Schema::se00:
      if (!se00_carries(info.dtype)) return refuse("se00 has no array of its dtype");
      break;
    case Schema::hs01:
      if (!hs01_carries(info.dtype)) return refuse("hs01 has no array of its dtype");
      if (!info.frame.framed()) return refuse("it has no frames");
      break;
    case Schema::ev44:
      if (!events) return refuse("it is not an event channel (core/event_record.hpp)");
      break;
  }
  return schema;
}

Outgoing::Outgoing(const core::Arena& arena, const core::ChannelInfo& info, Schema kind, core::ChannelReader r)
    : name(info.name), reader(std::move(r)), schema(kind) {
  const core::ChannelDesc& d = reader.desc();
  sample_bytes = d.sample_bytes;
  block.name = name;
  block.dtype = d.dtype;
  block.time_delta_ns = info.rate_hz > 0 ? 1e9 / info.rate_hz : 0.0;
  pending.reserve(kMaxGapRuns);
  report.name = info.name;
  report.schema = schema_name(kind);
  if (kind != Schema::hs01) return;
  const core::FrameAxis& axis = info.frame.axis;
  frame_elements = info.frame.frame_elements;
  frame_ns = info.rate_hz > 0 ? 1e9 * frame_elements / info.rate_hz : 0.0;
  label = axis.name;
  unit = axis.units;
  units = info.units;
  bin_boundaries(frame_elements, axis.start, axis.step, axis_values(arena, axis.values_key, frame_elements),
                 boundaries);
  metadata_ns = static_cast<std::int64_t>(core::realtime_ns());
  if (info.frame.frames_per_block > 1) scratch.resize(std::size_t{info.samples_per_block} * sample_bytes);
}

void Outgoing::add_gap(std::uint64_t first, std::uint64_t count, core::GapReason reason) {
  if (count == 0) return;
  if (pending.empty()) pending_since_ns = core::monotonic_ns();
  add_run(pending, first, count, reason);
}

std::uint32_t Outgoing::frames(std::uint32_t samples) const noexcept {
  return schema == Schema::hs01 ? samples / frame_elements : 1;
}

std::span<const std::byte> Outgoing::encode(Encoders& e, const core::BlockView& view, const std::byte* data,
                                            std::uint32_t frame, std::uint32_t& events_dropped) {
  switch (schema) {
    case Schema::se00:
      block.counter = static_cast<std::int64_t>(view.sequence);
      block.packet_timestamp_ns = static_cast<std::int64_t>(view.realtime_ns);
      block.samples = view.samples;
      block.values = std::span<const std::byte>(data, std::size_t{view.samples} * sample_bytes);
      return e.se00.encode(block);
    case Schema::hs01: {
      HistogramFrame f;
      f.source = name;
      f.timestamp_ns = static_cast<std::int64_t>(view.realtime_ns) + static_cast<std::int64_t>(frame * frame_ns);
      f.metadata_timestamp_ns = metadata_ns;
      f.label = label;
      f.unit = unit;
      f.info = units;
      f.dtype = block.dtype;
      const bool any = frames(view.samples) != 0;  // a block without a frame goes as one empty histogram
      f.bins = any ? frame_elements : 0;
      f.boundaries = boundaries;
      const std::size_t frame_bytes = std::size_t{frame_elements} * sample_bytes;
      if (any) f.data = std::span<const std::byte>(data + frame * frame_bytes, frame_bytes);
      return e.hs01.encode(f);
    }
    case Schema::ev44: {
      EventBlock b;
      b.source = name;
      b.message_id = static_cast<std::int64_t>(view.sequence);
      b.reference_time_ns = static_cast<std::int64_t>(view.realtime_ns);
      b.records = std::span<const std::byte>(data, std::size_t{view.samples} * sample_bytes);
      const Ev44Encoded out = e.ev44.encode(b);
      events_dropped += out.dropped;
      return out.message;
    }
  }
  return {};
}

std::span<const std::byte> Outgoing::encode_carrier(Encoders& e) {
  const auto last = static_cast<std::int64_t>(last_pending());
  switch (schema) {
    case Schema::se00:
      block.counter = last;
      block.packet_timestamp_ns = static_cast<std::int64_t>(core::realtime_ns());
      block.samples = 0;
      block.values = {};
      return e.se00.encode(block);
    case Schema::hs01: {
      HistogramFrame f;
      f.source = name;
      f.timestamp_ns = static_cast<std::int64_t>(core::realtime_ns());
      f.metadata_timestamp_ns = metadata_ns;
      f.info = units;
      f.dtype = block.dtype;
      return e.hs01.encode(f);
    }
    case Schema::ev44: {
      EventBlock b;
      b.source = name;
      b.message_id = last;
      b.pulse = false;
      return e.ev44.encode(b).message;
    }
  }
  return {};
}

rd_kafka_headers_t* message_headers(const std::vector<GapRun>& pending, std::string_view seq,
                                    std::uint32_t events_dropped) {
  if (pending.empty() && seq.empty() && events_dropped == 0) return nullptr;
  rd_kafka_headers_t* headers = rd_kafka_headers_new(3);
  if (!pending.empty()) {
    const std::string runs = format_runs(pending);
    (void)rd_kafka_header_add(headers, kGapHeader, -1, runs.data(), static_cast<ssize_t>(runs.size()));
  }
  if (!seq.empty()) (void)rd_kafka_header_add(headers, kSeqHeader, -1, seq.data(), static_cast<ssize_t>(seq.size()));
  if (events_dropped != 0) {
    std::array<char, 16> text{};
    const auto end = fmt::format_to_n(text.data(), text.size(), "{}", events_dropped).out;
    (void)rd_kafka_header_add(headers, kEventsDroppedHeader, -1, text.data(), end - text.data());
  }
  return headers;
}

rd_kafka_resp_err_t produce_message(rd_kafka_t* rk, rd_kafka_topic_t* topic, std::span<const std::byte> value,
                                    std::string_view key, rd_kafka_headers_t* headers, void* opaque) noexcept {
  std::array<rd_kafka_vu_t, 6> vu{};
  std::size_t n = 0;
  vu[n].vtype = RD_KAFKA_VTYPE_RKT;
  vu[n++].u.rkt = topic;
  vu[n].vtype = RD_KAFKA_VTYPE_VALUE;
  vu[n].u.mem.ptr = const_cast<std::byte*>(value.data());  // copied: RD_KAFKA_MSG_F_COPY
  vu[n++].u.mem.size = value.size();
  vu[n].vtype = RD_KAFKA_VTYPE_KEY;
  vu[n].u.mem.ptr = const_cast<char*>(key.data());
  vu[n++].u.mem.size = key.size();
  vu[n].vtype = RD_KAFKA_VTYPE_MSGFLAGS;
  vu[n++].u.i = RD_KAFKA_MSG_F_COPY;
  vu[n].vtype = RD_KAFKA_VTYPE_OPAQUE;
  vu[n++].u.ptr = opaque;
  if (headers != nullptr) {
    vu[n].vtype = RD_KAFKA_VTYPE_HEADERS;
    vu[n++].u.headers = headers;
  }
  rd_kafka_error_t* error = rd_kafka_produceva(rk, vu.data(), n);
  if (error == nullptr) return RD_KAFKA_RESP_ERR_NO_ERROR;
  const rd_kafka_resp_err_t code = rd_kafka_error_code(error);
  rd_kafka_error_destroy(error);
  if (headers != nullptr) rd_kafka_headers_destroy(headers);
  return code;
}

}  // namespace weir::kafka
