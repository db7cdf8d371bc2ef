// wrdn: a file finished writing.
#include <fmt/format.h>

#include "weir/core/assert.hpp"
#include "weir/kafka/codec.hpp"
#include "weir/kafka/run_messages.hpp"
#include "wire_wrdn.hpp"

namespace weir::kafka {

namespace fb = flatbuffers;
namespace w = wire::wrdn;

namespace {

constexpr std::size_t kInitialBytes = 256;

std::string text(const fb::String* s) { return s == nullptr ? std::string() : s->str(); }

}  // namespace

std::vector<std::byte> encode_wrdn(const FinishedWriting& f) {
  WEIR_ENFORCE(!f.service_id.empty() && !f.job_id.empty() && !f.file_name.empty(),
               "wrdn needs a service_id, a job_id and a file_name");
  fb::FlatBufferBuilder b(kInitialBytes);
  b.ForceDefaults(true);  // error_encountered false is written, as python-streaming-data-types does
  const auto root = w::CreateFinishedWritingDirect(b, f.service_id.c_str(), f.job_id.c_str(), f.error_encountered,
                                                   f.file_name.c_str(), f.metadata.empty() ? nullptr : f.metadata.c_str(),
                                                   f.message.empty() ? nullptr : f.message.c_str());
  w::FinishFinishedWritingBuffer(b, root);
  const auto bytes = std::as_bytes(std::span(b.GetBufferPointer(), b.GetSize()));
  return {bytes.begin(), bytes.end()};
}

core::Result<FinishedWriting> decode_wrdn(std::span<const std::byte> message) {
  if (schema_id(message) != kWrdn)
    return core::fail(core::Errc::invalid_argument, fmt::format("not a wrdn message (schema id '{}', {} bytes)",
                                                                schema_id(message), message.size()));
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(message.data());
  fb::Verifier verifier(bytes, message.size());
  if (!w::VerifyFinishedWritingBuffer(verifier))
    return core::fail(core::Errc::invalid_argument,
                      fmt::format("wrdn message of {} bytes does not verify (or lacks a required field)", message.size()));
  const w::FinishedWriting& m = *w::GetFinishedWriting(bytes);
  FinishedWriting out;
  out.service_id = text(m.service_id());
  out.job_id = text(m.job_id());
  out.error_encountered = m.error_encountered();
  out.file_name = text(m.file_name());
  out.metadata = text(m.metadata());
  out.message = text(m.message());
  if (out.job_id.empty()) return core::fail(core::Errc::invalid_argument, "wrdn message with an empty job_id");
  if (out.file_name.empty()) return core::fail(core::Errc::invalid_argument, "wrdn message with an empty file_name");
  return out;
}

}  // namespace weir::kafka
