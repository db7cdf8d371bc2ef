// f144: an arena key's value as log data.
#include <bit>
#include <cstring>

#include <fmt/format.h>

#include "weir/core/channel.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/kafka/codec.hpp"
#include "wire_f144.hpp"

namespace weir::kafka {

namespace fb = flatbuffers;
namespace w = wire::f144;
using core::Dtype;
using core::Errc;
using core::fail;
using core::ValueType;

namespace {

constexpr std::size_t kInitialBytes = 1024;

template <class Table, class Elem>
fb::Offset<void> array(fb::FlatBufferBuilder& b, const LogValue& v) {
  Elem* out = nullptr;
  const fb::Offset<fb::Vector<Elem>> values = b.CreateUninitializedVector<Elem>(v.elements, &out);
  if (v.elements != 0) std::memcpy(out, v.array.data(), std::size_t{v.elements} * sizeof(Elem));
  typename Table::Builder t(b);
  t.add_value(values);
  return t.Finish().Union();
}

template <class Table, class T>
fb::Offset<void> scalar(fb::FlatBufferBuilder& b, T value) {
  typename Table::Builder t(b);
  t.add_value(value);
  return t.Finish().Union();
}

fb::Offset<void> value_of(fb::FlatBufferBuilder& b, const LogValue& v, w::Value& type) {
  type = w::Value::NONE;
  switch (v.type) {
    case ValueType::i64: type = w::Value::Long; return scalar<w::Long>(b, std::bit_cast<std::int64_t>(v.bits));
    case ValueType::u64: type = w::Value::ULong; return scalar<w::ULong>(b, v.bits);
    case ValueType::f64: type = w::Value::Double; return scalar<w::Double>(b, std::bit_cast<double>(v.bits));
    case ValueType::array: break;
    default: return {};
  }
  if (v.array.size() != std::size_t{v.elements} * core::dtype_bytes(v.elem)) return {};
  switch (v.elem) {
    case Dtype::i8: type = w::Value::ArrayByte; return array<w::ArrayByte, std::int8_t>(b, v);
    case Dtype::u8: type = w::Value::ArrayUByte; return array<w::ArrayUByte, std::uint8_t>(b, v);
    case Dtype::i16: type = w::Value::ArrayShort; return array<w::ArrayShort, std::int16_t>(b, v);
    case Dtype::u16: type = w::Value::ArrayUShort; return array<w::ArrayUShort, std::uint16_t>(b, v);
    case Dtype::i32: type = w::Value::ArrayInt; return array<w::ArrayInt, std::int32_t>(b, v);
    case Dtype::u32: type = w::Value::ArrayUInt; return array<w::ArrayUInt, std::uint32_t>(b, v);
    case Dtype::i64: type = w::Value::ArrayLong; return array<w::ArrayLong, std::int64_t>(b, v);
    case Dtype::f32: type = w::Value::ArrayFloat; return array<w::ArrayFloat, float>(b, v);
    case Dtype::f64: type = w::Value::ArrayDouble; return array<w::ArrayDouble, double>(b, v);
    case Dtype::c64: break;
  }
  type = w::Value::NONE;
  return {};
}

template <class Table>
bool view_array(const w::f144_LogData& m, Dtype elem, LogValue& out) {
  const Table* t = m.value_as<Table>();
  if (t == nullptr) return false;
  out.type = ValueType::array;
  out.elem = elem;
  if (t->value() != nullptr) {
    out.elements = t->value()->size();
    out.array = std::as_bytes(std::span(t->value()->data(), t->value()->size()));
  }
  return true;
}

template <class Table>
bool view_int(const w::f144_LogData& m, LogValue& out) {
  const Table* t = m.value_as<Table>();
  if (t == nullptr) return false;
  out.type = ValueType::i64;
  out.bits = std::bit_cast<std::uint64_t>(static_cast<std::int64_t>(t->value()));
  return true;
}

template <class Table>
bool view_uint(const w::f144_LogData& m, LogValue& out) {
  const Table* t = m.value_as<Table>();
  if (t == nullptr) return false;
  out.type = ValueType::u64;
  out.bits = static_cast<std::uint64_t>(t->value());
  return true;
}

template <class Table>
bool view_float(const w::f144_LogData& m, LogValue& out) {
  const Table* t = m.value_as<Table>();
  if (t == nullptr) return false;
  out.type = ValueType::f64;
  out.bits = std::bit_cast<std::uint64_t>(static_cast<double>(t->value()));
  return true;
}

bool view(const w::f144_LogData& m, LogValue& out) {
  switch (m.value_type()) {
    case w::Value::Byte: return view_int<w::Byte>(m, out);
    case w::Value::UByte: return view_uint<w::UByte>(m, out);
    case w::Value::Short: return view_int<w::Short>(m, out);
    case w::Value::UShort: return view_uint<w::UShort>(m, out);
    case w::Value::Int: return view_int<w::Int>(m, out);
    case w::Value::UInt: return view_uint<w::UInt>(m, out);
    case w::Value::Long: return view_int<w::Long>(m, out);
    case w::Value::ULong: return view_uint<w::ULong>(m, out);
    case w::Value::Float: return view_float<w::Float>(m, out);
    case w::Value::Double: return view_float<w::Double>(m, out);
    case w::Value::ArrayByte: return view_array<w::ArrayByte>(m, Dtype::i8, out);
    case w::Value::ArrayUByte: return view_array<w::ArrayUByte>(m, Dtype::u8, out);
    case w::Value::ArrayShort: return view_array<w::ArrayShort>(m, Dtype::i16, out);
    case w::Value::ArrayUShort: return view_array<w::ArrayUShort>(m, Dtype::u16, out);
    case w::Value::ArrayInt: return view_array<w::ArrayInt>(m, Dtype::i32, out);
    case w::Value::ArrayUInt: return view_array<w::ArrayUInt>(m, Dtype::u32, out);
    case w::Value::ArrayLong: return view_array<w::ArrayLong>(m, Dtype::i64, out);
    case w::Value::ArrayFloat: return view_array<w::ArrayFloat>(m, Dtype::f32, out);
    case w::Value::ArrayDouble: return view_array<w::ArrayDouble>(m, Dtype::f64, out);
    case w::Value::ArrayULong:  // no u64 dtype for array elements in weir
    case w::Value::NONE: return false;
  }
  return false;
}

}  // namespace

struct F144Encoder::Impl {
  fb::FlatBufferBuilder builder{kInitialBytes};
};

F144Encoder::F144Encoder() : impl_(std::make_unique<Impl>()) {}
F144Encoder::~F144Encoder() = default;

core::Result<std::span<const std::byte>> F144Encoder::encode(const LogValue& value) {
  fb::FlatBufferBuilder& b = impl_->builder;
  b.Clear();
  w::Value type = w::Value::NONE;
  const fb::Offset<void> v = value_of(b, value, type);
  if (type == w::Value::NONE)
    return fail(Errc::invalid_argument,
                fmt::format("key '{}': f144 carries no {}{}", value.source, core::value_type_name(value.type),
                            value.type == ValueType::array ? fmt::format(" of {}", core::dtype_name(value.elem)) : ""));
  const fb::Offset<fb::String> source = b.CreateString(value.source.data(), value.source.size());
  w::f144_LogDataBuilder m(b);
  m.add_source_name(source);
  m.add_timestamp(value.timestamp_ns);
  m.add_value_type(type);
  m.add_value(v);
  w::Finishf144_LogDataBuffer(b, m.Finish());
  return std::as_bytes(std::span(b.GetBufferPointer(), b.GetSize()));
}

core::Result<LogValue> decode_f144(std::span<const std::byte> message) {
  if (schema_id(message) != kF144)
    return fail(Errc::invalid_argument, fmt::format("not an f144 message (schema id '{}', {} bytes)",
                                                    schema_id(message), message.size()));
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(message.data());
  fb::Verifier verifier(bytes, message.size());
  if (!w::Verifyf144_LogDataBuffer(verifier))
    return fail(Errc::invalid_argument, fmt::format("f144 message of {} bytes does not verify", message.size()));
  const w::f144_LogData& m = *w::Getf144_LogData(bytes);
  LogValue out;
  out.source = m.source_name()->string_view();
  out.timestamp_ns = m.timestamp();
  if (!view(m, out))
    return fail(Errc::invalid_argument, fmt::format("f144 message from '{}': a value of type {} weir has no type for",
                                                    out.source, w::EnumNameValue(m.value_type())));
  return out;
}

}  // namespace weir::kafka
