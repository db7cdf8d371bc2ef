// hs01: a frame of a channel with an axis (a spectrum, a histogram) as a 1-D event histogram.
#include <cstring>
#include <type_traits>

#include <fmt/format.h>

#include "weir/core/channel.hpp"
#include "weir/kafka/codec.hpp"
#include "weir/kafka/codec_frames.hpp"
#include "wire_hs01.hpp"

namespace weir::kafka {

namespace fb = flatbuffers;
namespace w = wire::hs01;
using core::Dtype;
using core::Errc;
using core::fail;

namespace {

constexpr std::size_t kInitialBytes = 64 * 1024 + 1024;  // a 4096-bin f64 spectrum, its edges and fields

// The frame's elements as Wire values (widened where the wire type is wider), straight into the message.
template <class Table, class Wire, class Elem>
fb::Offset<void> array(fb::FlatBufferBuilder& b, const HistogramFrame& f) {
  Wire* out = nullptr;
  const fb::Offset<fb::Vector<Wire>> values = b.CreateUninitializedVector<Wire>(f.bins, &out);
  if constexpr (std::is_same_v<Wire, Elem>) {
    if (f.bins != 0) std::memcpy(out, f.data.data(), std::size_t{f.bins} * sizeof(Elem));
  } else {
    for (std::uint32_t i = 0; i < f.bins; ++i) {
      Elem e;
      std::memcpy(&e, f.data.data() + std::size_t{i} * sizeof(Elem), sizeof e);
      out[i] = static_cast<Wire>(e);
    }
  }
  typename Table::Builder t(b);
  t.add_value(values);
  return t.Finish().Union();
}

fb::Offset<void> data_of(fb::FlatBufferBuilder& b, const HistogramFrame& f, w::Array& type) {
  switch (f.dtype) {
    case Dtype::i8: type = w::Array::ArrayInt; return array<w::ArrayInt, std::int32_t, std::int8_t>(b, f);
    case Dtype::u8: type = w::Array::ArrayInt; return array<w::ArrayInt, std::int32_t, std::uint8_t>(b, f);
    case Dtype::i16: type = w::Array::ArrayInt; return array<w::ArrayInt, std::int32_t, std::int16_t>(b, f);
    case Dtype::u16: type = w::Array::ArrayInt; return array<w::ArrayInt, std::int32_t, std::uint16_t>(b, f);
    case Dtype::i32: type = w::Array::ArrayInt; return array<w::ArrayInt, std::int32_t, std::int32_t>(b, f);
    case Dtype::u32: type = w::Array::ArrayLong; return array<w::ArrayLong, std::int64_t, std::uint32_t>(b, f);
    case Dtype::i64: type = w::Array::ArrayLong; return array<w::ArrayLong, std::int64_t, std::int64_t>(b, f);
    case Dtype::f32: type = w::Array::ArrayFloat; return array<w::ArrayFloat, float, float>(b, f);
    case Dtype::f64: type = w::Array::ArrayDouble; return array<w::ArrayDouble, double, double>(b, f);
    case Dtype::c64: break;
  }
  type = w::Array::NONE;
  return {};
}

template <class Table>
bool view_data(const w::EventHistogram& m, Dtype dtype, HistogramFrame& out) {
  const Table* t = m.data_as<Table>();
  if (t == nullptr || t->value() == nullptr) return false;
  out.dtype = dtype;
  out.data = std::as_bytes(std::span(t->value()->data(), t->value()->size()));
  return true;
}

core::Result<HistogramFrame> refuse(const HistogramFrame& f, std::string_view why) {
  return fail(Errc::invalid_argument, fmt::format("hs01 message from '{}': {}", f.source, why));
}

}  // namespace

bool hs01_carries(Dtype dtype) noexcept { return dtype != Dtype::c64 && core::dtype_bytes(dtype) != 0; }

Dtype hs01_wire_dtype(Dtype dtype) noexcept {
  switch (dtype) {
    case Dtype::i8:
    case Dtype::u8:
    case Dtype::i16:
    case Dtype::u16:
    case Dtype::i32: return Dtype::i32;
    case Dtype::u32:
    case Dtype::i64: return Dtype::i64;
    case Dtype::f32: return Dtype::f32;
    case Dtype::f64:
    case Dtype::c64: break;
  }
  return Dtype::f64;
}

void bin_boundaries(std::uint32_t bins, double start, double step, std::span<const double> values,
                    std::vector<double>& out) {
  out.assign(std::size_t{bins} + 1, 0.0);
  if (bins == 0) return;
  const bool listed = values.size() == bins;
  const auto centre = [&](std::uint32_t i) { return listed ? values[i] : start + static_cast<double>(i) * step; };
  if (bins == 1) {  // one centre: half the axis step either side
    out[0] = centre(0) - step / 2;
    out[1] = centre(0) + step / 2;
    return;
  }
  for (std::uint32_t i = 1; i < bins; ++i) out[i] = (centre(i - 1) + centre(i)) / 2;
  out[0] = centre(0) - (centre(1) - centre(0)) / 2;
  out[bins] = centre(bins - 1) + (centre(bins - 1) - centre(bins - 2)) / 2;
}

struct Hs01Encoder::Impl {
  fb::FlatBufferBuilder builder{kInitialBytes};
};

Hs01Encoder::Hs01Encoder() : impl_(std::make_unique<Impl>()) {}
Hs01Encoder::~Hs01Encoder() = default;

std::span<const std::byte> Hs01Encoder::encode(const HistogramFrame& f) {
  fb::FlatBufferBuilder& b = impl_->builder;
  b.Clear();
  w::Array data_type = w::Array::NONE;
  fb::Offset<void> data;
  fb::Offset<fb::Vector<fb::Offset<w::DimensionMetaData>>> dims;
  if (f.bins != 0) {
    data = data_of(b, f, data_type);
    double* edges = nullptr;
    const auto edge_vector = b.CreateUninitializedVector<double>(f.boundaries.size(), &edges);
    std::memcpy(edges, f.boundaries.data(), f.boundaries.size_bytes());
    w::ArrayDoubleBuilder edge_table(b);
    edge_table.add_value(edge_vector);
    const fb::Offset<void> boundaries = edge_table.Finish().Union();
    const auto unit = b.CreateString(f.unit.data(), f.unit.size());
    const auto label = b.CreateString(f.label.data(), f.label.size());
    w::DimensionMetaDataBuilder dim(b);
    dim.add_length(static_cast<std::int32_t>(f.bins));
    dim.add_unit(unit);
    dim.add_label(label);
    dim.add_bin_boundaries_type(w::Array::ArrayDouble);
    dim.add_bin_boundaries(boundaries);
    const fb::Offset<w::DimensionMetaData> one = dim.Finish();
    dims = b.CreateVector(&one, 1);
  }
  const auto shape_value = static_cast<std::int32_t>(f.bins);
  const std::int32_t zero = 0;
  const auto shape = b.CreateVector(&shape_value, 1);
  const auto offset = b.CreateVector(&zero, 1);
  const auto source = b.CreateString(f.source.data(), f.source.size());
  const auto info = b.CreateString(f.info.data(), f.info.size());
  w::EventHistogramBuilder m(b);
  m.add_source(source);
  m.add_timestamp(f.timestamp_ns);
  if (f.bins != 0) m.add_dim_metadata(dims);
  m.add_last_metadata_timestamp(f.metadata_timestamp_ns);
  m.add_current_shape(shape);
  m.add_offset(offset);
  if (f.bins != 0) {
    m.add_data_type(data_type);
    m.add_data(data);
  }
  m.add_info(info);
  w::FinishEventHistogramBuffer(b, m.Finish());
  return std::as_bytes(std::span(b.GetBufferPointer(), b.GetSize()));
}

core::Result<HistogramFrame> decode_hs01(std::span<const std::byte> message) {
  if (schema_id(message) != kHs01)
    return fail(Errc::invalid_argument, fmt::format("not an hs01 message (schema id '{}', {} bytes)",
                                                    schema_id(message), message.size()));
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(message.data());
  fb::Verifier verifier(bytes, message.size());
  if (!w::VerifyEventHistogramBuffer(verifier))
    return fail(Errc::invalid_argument, fmt::format("hs01 message of {} bytes does not verify", message.size()));
  const w::EventHistogram& m = *w::GetEventHistogram(bytes);
  HistogramFrame out;
  out.source = m.source() != nullptr ? m.source()->string_view() : std::string_view();
  out.timestamp_ns = m.timestamp();
  out.metadata_timestamp_ns = m.last_metadata_timestamp();
  out.info = m.info() != nullptr ? m.info()->string_view() : std::string_view();
  const auto* shape = m.current_shape();
  if (shape->size() != 1) return refuse(out, fmt::format("rank {} (weir reads 1-D histograms)", shape->size()));
  if (shape->Get(0) < 0) return refuse(out, fmt::format("negative shape {}", shape->Get(0)));
  if (m.offset() != nullptr && (m.offset()->size() != 1 || m.offset()->Get(0) != 0))
    return refuse(out, "a slice at an offset (weir reads whole histograms)");
  out.bins = static_cast<std::uint32_t>(shape->Get(0));
  if (out.bins == 0) return out;
  const auto* dims = m.dim_metadata();
  if (dims == nullptr || dims->size() != 1) return refuse(out, "no dim_metadata for its one dimension");
  const w::DimensionMetaData& dim = *dims->Get(0);
  if (dim.length() != shape->Get(0))
    return refuse(out, fmt::format("dimension length {} but shape {}", dim.length(), shape->Get(0)));
  out.unit = dim.unit() != nullptr ? dim.unit()->string_view() : std::string_view();
  out.label = dim.label() != nullptr ? dim.label()->string_view() : std::string_view();
  const w::ArrayDouble* edges = dim.bin_boundaries_as_ArrayDouble();
  if (edges == nullptr || edges->value() == nullptr)
    return refuse(out, fmt::format("bin boundaries of type {} (weir reads doubles)",
                                   w::EnumNameArray(dim.bin_boundaries_type())));
  if (edges->value()->size() != std::size_t{out.bins} + 1)
    return refuse(out, fmt::format("{} bin boundaries for {} bins", edges->value()->size(), out.bins));
  out.boundaries = std::span(edges->value()->data(), edges->value()->size());
  bool ok = false;
  switch (m.data_type()) {
    case w::Array::ArrayInt: ok = view_data<w::ArrayInt>(m, Dtype::i32, out); break;
    case w::Array::ArrayLong: ok = view_data<w::ArrayLong>(m, Dtype::i64, out); break;
    case w::Array::ArrayFloat: ok = view_data<w::ArrayFloat>(m, Dtype::f32, out); break;
    case w::Array::ArrayDouble: ok = view_data<w::ArrayDouble>(m, Dtype::f64, out); break;
    case w::Array::NONE: break;
  }
  if (!ok) return refuse(out, "no data");
  if (out.data.size() != std::size_t{out.bins} * core::dtype_bytes(out.dtype))
    return refuse(out, fmt::format("{} data values for {} bins", out.data.size() / core::dtype_bytes(out.dtype), out.bins));
  return out;
}

}  // namespace weir::kafka
