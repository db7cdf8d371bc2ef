// x5f2: a status heartbeat.
#include <fmt/format.h>

#include "weir/kafka/codec.hpp"
#include "wire_x5f2.hpp"

namespace weir::kafka {

namespace fb = flatbuffers;
namespace w = wire::x5f2;

namespace {

std::string text(const fb::String* s) { return s == nullptr ? std::string() : s->str(); }

}  // namespace

struct X5f2Encoder::Impl {
  fb::FlatBufferBuilder builder{1024};
};

X5f2Encoder::X5f2Encoder() : impl_(std::make_unique<Impl>()) {}
X5f2Encoder::~X5f2Encoder() = default;

std::span<const std::byte> X5f2Encoder::encode(const Status& s) {
  fb::FlatBufferBuilder& b = impl_->builder;
  b.Clear();
  const auto root = w::CreateStatusDirect(b, s.software_name.c_str(), s.software_version.c_str(), s.service_id.c_str(),
                                          s.host_name.c_str(), s.process_id, s.update_interval_ms,
                                          s.status_json.c_str());
  w::FinishStatusBuffer(b, root);
  return std::as_bytes(std::span(b.GetBufferPointer(), b.GetSize()));
}

core::Result<Status> decode_x5f2(std::span<const std::byte> message) {
  if (schema_id(message) != kX5f2)
    return core::fail(core::Errc::invalid_argument, fmt::format("not an x5f2 message (schema id '{}', {} bytes)",
                                                                schema_id(message), message.size()));
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(message.data());
  fb::Verifier verifier(bytes, message.size());
  if (!w::VerifyStatusBuffer(verifier))
    return core::fail(core::Errc::invalid_argument, fmt::format("x5f2 message of {} bytes does not verify", message.size()));
  const w::Status& m = *w::GetStatus(bytes);
  Status out;
  out.software_name = text(m.software_name());
  out.software_version = text(m.software_version());
  out.service_id = text(m.service_id());
  out.host_name = text(m.host_name());
  out.process_id = m.process_id();
  out.update_interval_ms = m.update_interval();
  out.status_json = text(m.status_json());
  return out;
}

}  // namespace weir::kafka
