// pl72: a run's start.
#include <fmt/format.h>

#include "weir/kafka/codec.hpp"
#include "weir/kafka/run_messages.hpp"
#include "wire_pl72.hpp"

namespace weir::kafka {

namespace fb = flatbuffers;
namespace w = wire::pl72;

namespace {

constexpr std::size_t kInitialBytes = 1024;

std::string text(const fb::String* s) { return s == nullptr ? std::string() : s->str(); }

}  // namespace

std::vector<std::byte> encode_pl72(const RunStart& s) {
  fb::FlatBufferBuilder b(kInitialBytes);
  const auto root = w::CreateRunStartDirect(b, s.start_time_ms, s.stop_time_ms, s.run_name.c_str(),
                                            s.instrument_name.c_str(), s.nexus_structure.c_str(), s.job_id.c_str(),
                                            s.broker.c_str(), s.service_id.c_str(), s.filename.c_str(), s.n_periods,
                                            0, s.metadata.c_str(), s.control_topic.c_str());
  w::FinishRunStartBuffer(b, root);
  const auto bytes = std::as_bytes(std::span(b.GetBufferPointer(), b.GetSize()));
  return {bytes.begin(), bytes.end()};
}

core::Result<RunStart> decode_pl72(std::span<const std::byte> message) {
  if (schema_id(message) != kPl72)
    return core::fail(core::Errc::invalid_argument, fmt::format("not a pl72 message (schema id '{}', {} bytes)",
                                                                schema_id(message), message.size()));
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(message.data());
  fb::Verifier verifier(bytes, message.size());
  if (!w::VerifyRunStartBuffer(verifier))
    return core::fail(core::Errc::invalid_argument, fmt::format("pl72 message of {} bytes does not verify", message.size()));
  const w::RunStart& m = *w::GetRunStart(bytes);
  RunStart out;
  out.start_time_ms = m.start_time();
  out.stop_time_ms = m.stop_time();
  out.run_name = text(m.run_name());
  out.instrument_name = text(m.instrument_name());
  out.nexus_structure = text(m.nexus_structure());
  out.job_id = text(m.job_id());
  out.broker = text(m.broker());
  out.service_id = text(m.service_id());
  out.filename = text(m.filename());
  out.n_periods = m.n_periods();
  out.metadata = text(m.metadata());
  out.control_topic = text(m.control_topic());
  if (out.job_id.empty()) return core::fail(core::Errc::invalid_argument, "pl72 message without a job_id");
  return out;
}

}  // namespace weir::kafka
