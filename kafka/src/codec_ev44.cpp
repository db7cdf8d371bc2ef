// ev44: a block of an event channel (core/event_record.hpp) as one pulse of detection events.
#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "weir/core/event_record.hpp"
#include "weir/kafka/codec.hpp"
#include "weir/kafka/codec_frames.hpp"
#include "wire_ev44.hpp"

namespace weir::kafka {

namespace fb = flatbuffers;
namespace w = wire::ev44;
using core::Errc;
using core::EventField;
using core::fail;

namespace {

constexpr std::size_t kInitialBytes = 16 * 1024;
constexpr std::size_t kRecordBytes = std::size_t{core::kEventFields} * sizeof(double);

double field(std::span<const std::byte> records, std::size_t event, EventField f) noexcept {
  double v = 0;
  std::memcpy(&v, records.data() + event * kRecordBytes + static_cast<std::size_t>(f) * sizeof v, sizeof v);
  return v;
}

// An f64 field as an int32, rounded to the nearest integer; false when it does not fit (or is NaN).
bool to_int32(double v, std::int32_t& out) noexcept {
  const double r = std::nearbyint(v);
  if (!(r >= static_cast<double>(std::numeric_limits<std::int32_t>::min()) &&
        r <= static_cast<double>(std::numeric_limits<std::int32_t>::max())))
    return false;
  out = static_cast<std::int32_t>(r);
  return true;
}

bool fits(std::span<const std::byte> records, std::size_t e) noexcept {
  std::int32_t ignored = 0;
  return to_int32(field(records, e, EventField::time_offset_ns), ignored) &&
         to_int32(field(records, e, EventField::id), ignored);
}

template <class T>
std::span<const T> view(const fb::Vector<T>* v) noexcept {
  return v == nullptr ? std::span<const T>() : std::span<const T>(v->data(), v->size());
}

}  // namespace

struct Ev44Encoder::Impl {
  fb::FlatBufferBuilder builder{kInitialBytes};
};

Ev44Encoder::Ev44Encoder() : impl_(std::make_unique<Impl>()) {}
Ev44Encoder::~Ev44Encoder() = default;

Ev44Encoded Ev44Encoder::encode(const EventBlock& block) {
  fb::FlatBufferBuilder& b = impl_->builder;
  b.Clear();
  const std::size_t events = block.records.size() / kRecordBytes;
  std::size_t kept = 0;
  for (std::size_t e = 0; e < events; ++e) kept += fits(block.records, e) ? 1 : 0;
  // Each vector is filled right after it is made: the next one may move the builder's buffer.
  std::int32_t* out = nullptr;
  const auto pixels = b.CreateUninitializedVector<std::int32_t>(kept, &out);
  for (std::size_t e = 0, i = 0; e < events; ++e)
    if (fits(block.records, e)) (void)to_int32(field(block.records, e, EventField::id), out[i++]);
  const auto tof = b.CreateUninitializedVector<std::int32_t>(kept, &out);
  for (std::size_t e = 0, i = 0; e < events; ++e)
    if (fits(block.records, e)) (void)to_int32(field(block.records, e, EventField::time_offset_ns), out[i++]);
  const std::int32_t first = 0;
  const auto index = b.CreateVector(&first, block.pulse ? 1 : 0);
  const auto reference = b.CreateVector(&block.reference_time_ns, block.pulse ? 1 : 0);
  const auto source = b.CreateString(block.source.data(), block.source.size());
  w::Event44MessageBuilder m(b);
  m.add_source_name(source);
  m.add_message_id(block.message_id);
  m.add_reference_time(reference);
  m.add_reference_time_index(index);
  m.add_time_of_flight(tof);
  m.add_pixel_id(pixels);
  w::FinishEvent44MessageBuffer(b, m.Finish());
  Ev44Encoded r;
  r.message = std::as_bytes(std::span(b.GetBufferPointer(), b.GetSize()));
  r.events = static_cast<std::uint32_t>(kept);
  r.dropped = static_cast<std::uint32_t>(events - kept);
  return r;
}

core::Result<EventMessage> decode_ev44(std::span<const std::byte> message) {
  if (schema_id(message) != kEv44)
    return fail(Errc::invalid_argument, fmt::format("not an ev44 message (schema id '{}', {} bytes)",
                                                    schema_id(message), message.size()));
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(message.data());
  fb::Verifier verifier(bytes, message.size());
  if (!w::VerifyEvent44MessageBuffer(verifier))
    return fail(Errc::invalid_argument, fmt::format("ev44 message of {} bytes does not verify", message.size()));
  const w::Event44Message& m = *w::GetEvent44Message(bytes);
  EventMessage out;
  out.source = m.source_name()->string_view();
  out.message_id = m.message_id();
  out.reference_time = view(m.reference_time());
  out.reference_time_index = view(m.reference_time_index());
  out.time_of_flight = view(m.time_of_flight());
  out.pixel_id = view(m.pixel_id());
  const auto refuse = [&](const std::string& why) {
    return fail(Errc::invalid_argument, fmt::format("ev44 message from '{}': {}", out.source, why));
  };
  if (out.reference_time.size() != out.reference_time_index.size())
    return refuse(fmt::format("{} reference times but {} indices", out.reference_time.size(),
                              out.reference_time_index.size()));
  std::int64_t previous = 0;
  for (const std::int32_t i : out.reference_time_index) {
    if (i < previous || static_cast<std::size_t>(i) > out.time_of_flight.size())
      return refuse(fmt::format("reference_time_index {} out of order or past its {} events", i,
                                out.time_of_flight.size()));
    previous = i;
  }
  if (!out.pixel_id.empty() && out.pixel_id.size() != out.time_of_flight.size())
    return refuse(fmt::format("{} pixel ids for {} events", out.pixel_id.size(), out.time_of_flight.size()));
  return out;
}

}  // namespace weir::kafka
