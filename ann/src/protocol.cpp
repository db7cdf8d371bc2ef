// Key names and value coding of the ann protocol (weir/ann/protocol.hpp).
#include "weir/ann/protocol.hpp"

#include <signal.h>

#include <cerrno>
#include <cstring>

#include "weir/ann/service.hpp"

namespace weir::ann {

namespace {

std::string base(std::string_view part) {
  std::string out = "ann/";
  out += part;
  return out;
}

std::string numbered(std::string prefix, std::uint32_t pid, std::uint64_t n) {
  prefix += std::to_string(pid);
  prefix += '.';
  prefix += std::to_string(n);
  return prefix;
}

}  // namespace

bool pid_alive(std::uint32_t pid) noexcept {
  if (pid == 0) return false;
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

std::string status_key(std::string_view part) { return base(part) + "/service"; }
std::string request_label(std::string_view part) { return base(part) + "/q"; }
std::string answer_label(std::string_view part) { return base(part) + "/r"; }
std::string request_prefix(std::string_view part) { return base(part) + "/q/"; }
std::string answer_prefix(std::string_view part) { return base(part) + "/r/"; }

std::string request_key(std::string_view part, std::uint32_t pid, std::uint64_t n) {
  return numbered(request_prefix(part), pid, n);
}

std::string answer_key(std::string_view part, std::uint32_t pid, std::uint64_t n) {
  return numbered(answer_prefix(part), pid, n);
}

std::size_t encode_request(const Request& request, std::string_view like, std::span<std::byte> out) noexcept {
  const std::size_t bytes = sizeof(Request) + like.size();
  if (out.size() < bytes) return 0;
  Request r = request;
  r.magic = kRequestMagic;
  r.version = kProtocolVersion;
  r.reserved0 = 0;
  r.reserved1 = 0;
  r.like_bytes = static_cast<std::uint32_t>(like.size());
  std::memcpy(out.data(), &r, sizeof r);
  if (!like.empty()) std::memcpy(out.data() + sizeof r, like.data(), like.size());
  return bytes;
}

std::optional<Request> decode_request(std::span<const std::byte> bytes, std::string_view& like) noexcept {
  if (bytes.size() < sizeof(Request)) return std::nullopt;
  Request r;
  std::memcpy(&r, bytes.data(), sizeof r);
  if (r.magic != kRequestMagic || r.version != kProtocolVersion) return std::nullopt;
  const auto kind = static_cast<QueryKind>(r.kind);
  if (kind != QueryKind::vector && kind != QueryKind::like) return std::nullopt;
  if (bytes.size() != sizeof(Request) + r.like_bytes) return std::nullopt;
  if (kind == QueryKind::like && r.like_bytes == 0) return std::nullopt;
  like = std::string_view(reinterpret_cast<const char*>(bytes.data()) + sizeof r, r.like_bytes);
  return r;
}

std::optional<AnswerHeader> decode_answer(std::span<const std::byte> bytes) noexcept {
  if (bytes.size() < sizeof(AnswerHeader)) return std::nullopt;
  AnswerHeader h;
  std::memcpy(&h, bytes.data(), sizeof h);
  if (h.magic != kAnswerMagic || h.version != kProtocolVersion) return std::nullopt;
  if (h.count > kMaxHits || bytes.size() < answer_bytes(h.count)) return std::nullopt;
  return h;
}

AnswerHit answer_hit(std::span<const std::byte> bytes, std::uint32_t i) noexcept {
  AnswerHit hit;
  std::memcpy(&hit, bytes.data() + sizeof(AnswerHeader) + std::size_t{i} * sizeof(AnswerHit), sizeof hit);
  return hit;
}

std::optional<ServiceStatus> decode_status(std::span<const std::byte> bytes) noexcept {
  if (bytes.size() != sizeof(ServiceStatus)) return std::nullopt;
  ServiceStatus s;
  std::memcpy(&s, bytes.data(), sizeof s);
  if (s.magic != kStatusMagic || s.version != kProtocolVersion) return std::nullopt;
  return s;
}

const char* answer_status_name(AnswerStatus status) noexcept {
  switch (status) {
    case AnswerStatus::ok: return "ok";
    case AnswerStatus::bad_request: return "bad_request";
    case AnswerStatus::no_query: return "no_query";
    case AnswerStatus::no_vector: return "no_vector";
    case AnswerStatus::not_finite: return "not_finite";
    case AnswerStatus::failed: return "failed";
  }
  return "unknown";
}

const char* service_state_name(std::uint8_t state) noexcept {
  switch (static_cast<ServiceState>(state)) {
    case ServiceState::building: return "building";
    case ServiceState::serving: return "serving";
    case ServiceState::stopped: return "stopped";
  }
  return "unknown";
}

}  // namespace weir::ann
