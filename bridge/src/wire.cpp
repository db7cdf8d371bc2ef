// The wire header's helpers.
#include "weir/bridge/wire.hpp"

#include <cstring>

namespace weir::bridge {

WireHeader make_header(MessageKind kind, std::uint64_t session) noexcept {
  WireHeader h{};
  h.magic = kWireMagic;
  h.version = kWireVersion;
  h.kind = static_cast<std::uint16_t>(kind);
  h.session = session;
  return h;
}

namespace {

HeaderCheck check_one(const std::byte* data, std::size_t bytes, WireHeader& h) noexcept {
  if (bytes < sizeof(WireHeader)) return HeaderCheck::wrong_size;
  std::memcpy(&h, data, sizeof h);
  if (h.magic != kWireMagic) return HeaderCheck::wrong_magic;
  if (h.version != kWireVersion) return HeaderCheck::wrong_version;
  switch (static_cast<MessageKind>(h.kind)) {
    case MessageKind::block:
      return h.payload_bytes <= bytes - sizeof(WireHeader) ? HeaderCheck::ok : HeaderCheck::wrong_size;
    case MessageKind::describe:
    case MessageKind::mark:
    case MessageKind::gap:
      return bytes == sizeof(WireHeader) ? HeaderCheck::ok : HeaderCheck::wrong_size;
  }
  return HeaderCheck::unknown_kind;
}

}  // namespace

HeaderCheck check_header(const void* data, std::size_t bytes) noexcept {
  const auto* at = static_cast<const std::byte*>(data);
  WireHeader h;
  if (const HeaderCheck first = check_one(at, bytes, h); first != HeaderCheck::ok) return first;
  if (static_cast<MessageKind>(h.kind) != MessageKind::block) return HeaderCheck::ok;
  // A block frame: block records back to back up to its end exactly, each checked.
  for (std::size_t off = sizeof h + h.payload_bytes; off < bytes; off += sizeof h + h.payload_bytes) {
    if (const HeaderCheck next = check_one(at + off, bytes - off, h); next != HeaderCheck::ok) return next;
    if (static_cast<MessageKind>(h.kind) != MessageKind::block) return HeaderCheck::unknown_kind;
  }
  return HeaderCheck::ok;
}

bool copy_text(char* field, std::size_t field_bytes, std::string_view text) noexcept {
  std::memset(field, 0, field_bytes);
  const bool fits = text.size() < field_bytes;
  std::memcpy(field, text.data(), fits ? text.size() : field_bytes - 1);
  return fits;
}

std::string_view field_text(const char* field, std::size_t field_bytes) noexcept {
  const void* end = std::memchr(field, '\0', field_bytes);
  return {field, end != nullptr ? static_cast<std::size_t>(static_cast<const char*>(end) - field) : field_bytes};
}

}  // namespace weir::bridge
