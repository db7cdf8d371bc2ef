// 6s4t: a run's stop.
#include <fmt/format.h>

#include "weir/kafka/codec.hpp"
#include "weir/kafka/run_messages.hpp"
#include "wire_6s4t.hpp"

namespace weir::kafka {

namespace fb = flatbuffers;
namespace w = wire::s6s4t;

namespace {

constexpr std::size_t kInitialBytes = 256;

std::string text(const fb::String* s) { return s == nullptr ? std::string() : s->str(); }

}  // namespace

std::vector<std::byte> encode_6s4t(const RunStop& s) {
  fb::FlatBufferBuilder b(kInitialBytes);
  const auto root = w::CreateRunStopDirect(b, s.stop_time_ms, s.run_name.c_str(), s.job_id.c_str(),
                                           s.service_id.c_str(), s.command_id.c_str());
  w::FinishRunStopBuffer(b, root);
  const auto bytes = std::as_bytes(std::span(b.GetBufferPointer(), b.GetSize()));
  return {bytes.begin(), bytes.end()};
}

core::Result<RunStop> decode_6s4t(std::span<const std::byte> message) {
  if (schema_id(message) != k6s4t)
    return core::fail(core::Errc::invalid_argument, fmt::format("not a 6s4t message (schema id '{}', {} bytes)",
                                                                schema_id(message), message.size()));
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(message.data());
  fb::Verifier verifier(bytes, message.size());
  if (!w::VerifyRunStopBuffer(verifier))
    return core::fail(core::Errc::invalid_argument, fmt::format("6s4t message of {} bytes does not verify", message.size()));
  const w::RunStop& m = *w::GetRunStop(bytes);
  RunStop out;
  out.stop_time_ms = m.stop_time();
  out.run_name = text(m.run_name());
  out.job_id = text(m.job_id());
  out.service_id = text(m.service_id());
  out.command_id = text(m.command_id());
  if (out.job_id.empty()) return core::fail(core::Errc::invalid_argument, "6s4t message without a job_id");
  return out;
}

}  // namespace weir::kafka
