// se00: a channel's block as sampled array data.
#include <cstring>

#include <fmt/format.h>

#include "weir/core/channel.hpp"
#include "weir/kafka/codec.hpp"
#include "wire_se00.hpp"

namespace weir::kafka {

namespace fb = flatbuffers;
namespace w = wire::se00;
using core::Dtype;
using core::Errc;
using core::fail;

namespace {

constexpr std::size_t kInitialBytes = 64 * 1024 + 1024;  // a 64 KiB block and the fields around it

template <class Table, class Elem>
fb::Offset<void> array(fb::FlatBufferBuilder& b, const SampleBlock& block) {
  Elem* out = nullptr;
  const fb::Offset<fb::Vector<Elem>> values = b.CreateUninitializedVector<Elem>(block.samples, &out);
  if (block.samples != 0) std::memcpy(out, block.values.data(), std::size_t{block.samples} * sizeof(Elem));
  typename Table::Builder t(b);
  t.add_value(values);
  return t.Finish().Union();
}

// The union member for a dtype, and its array.
fb::Offset<void> values_of(fb::FlatBufferBuilder& b, const SampleBlock& block, w::ValueUnion& type) {
  switch (block.dtype) {
    case Dtype::i8: type = w::ValueUnion::Int8Array; return array<w::Int8Array, std::int8_t>(b, block);
    case Dtype::u8: type = w::ValueUnion::UInt8Array; return array<w::UInt8Array, std::uint8_t>(b, block);
    case Dtype::i16: type = w::ValueUnion::Int16Array; return array<w::Int16Array, std::int16_t>(b, block);
    case Dtype::u16: type = w::ValueUnion::UInt16Array; return array<w::UInt16Array, std::uint16_t>(b, block);
    case Dtype::i32: type = w::ValueUnion::Int32Array; return array<w::Int32Array, std::int32_t>(b, block);
    case Dtype::u32: type = w::ValueUnion::UInt32Array; return array<w::UInt32Array, std::uint32_t>(b, block);
    case Dtype::i64: type = w::ValueUnion::Int64Array; return array<w::Int64Array, std::int64_t>(b, block);
    case Dtype::f32: type = w::ValueUnion::FloatArray; return array<w::FloatArray, float>(b, block);
    case Dtype::f64: type = w::ValueUnion::DoubleArray; return array<w::DoubleArray, double>(b, block);
    case Dtype::c64: break;
  }
  type = w::ValueUnion::NONE;
  return {};
}

template <class Table>
bool view_array(const w::se00_SampleEnvironmentData& m, Dtype dtype, SampleBlock& out) {
  const Table* t = m.values_as<Table>();
  if (t == nullptr || t->value() == nullptr) return false;
  out.dtype = dtype;
  out.samples = t->value()->size();
  out.values = std::as_bytes(std::span(t->value()->data(), t->value()->size()));
  return true;
}

}  // namespace

std::string_view schema_id(std::span<const std::byte> message) noexcept {
  if (message.size() < 8) return {};
  return {reinterpret_cast<const char*>(message.data()) + 4, 4};
}

bool se00_carries(Dtype dtype) noexcept { return dtype != Dtype::c64 && core::dtype_bytes(dtype) != 0; }

struct Se00Encoder::Impl {
  fb::FlatBufferBuilder builder{kInitialBytes};
};

Se00Encoder::Se00Encoder() : impl_(std::make_unique<Impl>()) {}
Se00Encoder::~Se00Encoder() = default;

std::span<const std::byte> Se00Encoder::encode(const SampleBlock& block) {
  fb::FlatBufferBuilder& b = impl_->builder;
  b.Clear();
  w::ValueUnion type = w::ValueUnion::NONE;
  const fb::Offset<void> values = values_of(b, block, type);
  const fb::Offset<fb::String> name = b.CreateString(block.name.data(), block.name.size());
  w::se00_SampleEnvironmentDataBuilder m(b);
  m.add_name(name);
  m.add_channel(-1);
  m.add_packet_timestamp(block.packet_timestamp_ns);
  m.add_time_delta(block.time_delta_ns);
  m.add_timestamp_location(w::Location::Start);
  m.add_values_type(type);
  m.add_values(values);
  m.add_message_counter(block.counter);
  w::Finishse00_SampleEnvironmentDataBuffer(b, m.Finish());
  return std::as_bytes(std::span(b.GetBufferPointer(), b.GetSize()));
}

core::Result<SampleBlock> decode_se00(std::span<const std::byte> message) {
  if (schema_id(message) != kSe00)
    return fail(Errc::invalid_argument, fmt::format("not an se00 message (schema id '{}', {} bytes)",
                                                    schema_id(message), message.size()));
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(message.data());
  fb::Verifier verifier(bytes, message.size());
  if (!w::Verifyse00_SampleEnvironmentDataBuffer(verifier))
    return fail(Errc::invalid_argument, fmt::format("se00 message of {} bytes does not verify", message.size()));
  const w::se00_SampleEnvironmentData& m = *w::Getse00_SampleEnvironmentData(bytes);
  SampleBlock out;
  out.name = m.name()->string_view();
  out.counter = m.message_counter();
  out.packet_timestamp_ns = m.packet_timestamp();
  out.time_delta_ns = m.time_delta();
  bool ok = false;
  switch (m.values_type()) {
    case w::ValueUnion::Int8Array: ok = view_array<w::Int8Array>(m, Dtype::i8, out); break;
    case w::ValueUnion::UInt8Array: ok = view_array<w::UInt8Array>(m, Dtype::u8, out); break;
    case w::ValueUnion::Int16Array: ok = view_array<w::Int16Array>(m, Dtype::i16, out); break;
    case w::ValueUnion::UInt16Array: ok = view_array<w::UInt16Array>(m, Dtype::u16, out); break;
    case w::ValueUnion::Int32Array: ok = view_array<w::Int32Array>(m, Dtype::i32, out); break;
    case w::ValueUnion::UInt32Array: ok = view_array<w::UInt32Array>(m, Dtype::u32, out); break;
    case w::ValueUnion::Int64Array: ok = view_array<w::Int64Array>(m, Dtype::i64, out); break;
    case w::ValueUnion::FloatArray: ok = view_array<w::FloatArray>(m, Dtype::f32, out); break;
    case w::ValueUnion::DoubleArray: ok = view_array<w::DoubleArray>(m, Dtype::f64, out); break;
    case w::ValueUnion::UInt64Array:
    case w::ValueUnion::NONE: break;
  }
  if (!ok)
    return fail(Errc::invalid_argument, fmt::format("se00 message from '{}': values of type {} have no weir dtype",
                                                    out.name, w::EnumNameValueUnion(m.values_type())));
  if (out.counter < 0)
    return fail(Errc::invalid_argument, fmt::format("se00 message from '{}': negative message_counter {}", out.name,
                                                    out.counter));
  return out;
}

}  // namespace weir::kafka
