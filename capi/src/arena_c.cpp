// The C ABI: library calls, errors, attaching and describing an arena.
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "handles.hpp"
#include "weir/core/clock.hpp"
#include "weir/core/label_dictionary.hpp"

namespace weir::capi {
namespace {

constexpr std::size_t kErrorBytes = 1024;  // longer messages are cut
thread_local char t_error[kErrorBytes] = {};

weir_status status_of(core::Errc code) noexcept {
  switch (code) {
    case core::Errc::invalid_argument: return WEIR_E_INVALID;
    case core::Errc::not_found: return WEIR_E_NOT_FOUND;
    case core::Errc::already_exists: return WEIR_E_INVALID;
    case core::Errc::permission_denied: return WEIR_E_PERMISSION;
    case core::Errc::shm_unavailable: return WEIR_E_SYSTEM;
    case core::Errc::layout_mismatch: return WEIR_E_LAYOUT;
    case core::Errc::not_ready: return WEIR_E_NOT_READY;
    case core::Errc::io_error: return WEIR_E_SYSTEM;
    case core::Errc::conflict: return WEIR_E_INVALID;
    case core::Errc::busy: return WEIR_E_SYSTEM;
  }
  return WEIR_E_INTERNAL;
}

weir_status status_of(core::KvStatus status) noexcept {
  switch (status) {
    case core::KvStatus::ok: return WEIR_OK;
    case core::KvStatus::not_found: return WEIR_E_NOT_FOUND;
    case core::KvStatus::busy: return WEIR_E_BUSY;
    case core::KvStatus::full: return WEIR_E_FULL;
    case core::KvStatus::torn: return WEIR_E_TORN;
    case core::KvStatus::key_too_long: return WEIR_E_INVALID;
    case core::KvStatus::key_empty: return WEIR_E_INVALID;
    case core::KvStatus::value_too_large: return WEIR_E_TOO_LARGE;
    case core::KvStatus::type_mismatch: return WEIR_E_TYPE;
    case core::KvStatus::stale_handle: return WEIR_E_NOT_FOUND;
    case core::KvStatus::read_only: return WEIR_E_PERMISSION;
  }
  return WEIR_E_INTERNAL;
}

}  // namespace

weir_status fail(weir_status status, std::string_view what) noexcept {
  const std::size_t n = std::min(what.size(), kErrorBytes - 1);
  std::memcpy(t_error, what.data(), n);
  t_error[n] = '\0';
  return status;
}

weir_status fail(const core::Error& error) noexcept { return fail(status_of(error.code), error.what); }

weir_status fail_kv(core::KvStatus status, const ArenaState& state, std::string_view key) noexcept {
  try {
    return fail(status_of(status), "key '" + std::string(key) + "' in " + state.arena.location().describe() + ": " +
                                       core::kv_status_text(status));
  } catch (...) {
    return fail(status_of(status), core::kv_status_text(status));
  }
}

weir_status fail_null(const char* call, const char* argument) noexcept {
  char text[kErrorBytes];
  std::snprintf(text, sizeof(text), "%s: %s is NULL", call, argument);
  return fail(WEIR_E_INVALID, text);
}

weir_status sliced_wait(core::Watcher& watcher, std::atomic<bool>& interrupted, std::int64_t deadline_ns) noexcept {
  for (;;) {
    // acquire/release not needed: the flag carries no data, only "stop"; exchange clears it.
    if (interrupted.exchange(false, std::memory_order_relaxed)) return WEIR_INTERRUPTED;
    const std::int64_t left = deadline_ns - core::monotonic_ns();
    if (left <= 0) return watcher.wait(0) == core::WaitStatus::pulsed ? WEIR_OK : WEIR_TIMEOUT;
    if (watcher.wait(std::min<std::int64_t>(left, WEIR_WAIT_SLICE_NS)) == core::WaitStatus::pulsed) return WEIR_OK;
  }
}

}  // namespace weir::capi

using weir::capi::fail;
using weir::capi::fail_null;
using weir::capi::guarded;
namespace core = weir::core;

extern "C" {

uint32_t weir_abi_version(void) { return WEIR_C_ABI_VERSION; }

const char* weir_last_error(void) { return weir::capi::t_error; }

const char* weir_status_name(weir_status status) {
  switch (status) {
    case WEIR_OK: return "ok";
    case WEIR_TIMEOUT: return "timeout";
    case WEIR_EMPTY: return "empty";
    case WEIR_INTERRUPTED: return "interrupted";
    case WEIR_E_INVALID: return "invalid";
    case WEIR_E_NOT_FOUND: return "not_found";
    case WEIR_E_PERMISSION: return "permission";
    case WEIR_E_LAYOUT: return "layout";
    case WEIR_E_NOT_READY: return "not_ready";
    case WEIR_E_TOO_SMALL: return "too_small";
    case WEIR_E_TYPE: return "type";
    case WEIR_E_BUSY: return "busy";
    case WEIR_E_TORN: return "torn";
    case WEIR_E_FULL: return "full";
    case WEIR_E_TOO_LARGE: return "too_large";
    case WEIR_E_UNSUPPORTED: return "unsupported";
    case WEIR_E_SYSTEM: return "system";
    case WEIR_E_INTERNAL: return "internal";
  }
  return "unknown";
}

const char* weir_dtype_name(uint32_t dtype) {
  if (dtype < WEIR_I8 || dtype > WEIR_C64) return "?";
  return core::dtype_name(static_cast<core::Dtype>(dtype));
}

uint32_t weir_dtype_bytes(uint32_t dtype) {
  if (dtype < WEIR_I8 || dtype > WEIR_C64) return 0;
  return core::dtype_bytes(static_cast<core::Dtype>(dtype));
}

weir_status weir_attach(const char* where, uint32_t flags, weir_arena** out) {
  if (out == nullptr) return fail_null("weir_attach", "out");
  *out = nullptr;
  if (where == nullptr) return fail_null("weir_attach", "where");
  if ((flags & ~WEIR_ATTACH_READ_ONLY) != 0) return fail(WEIR_E_INVALID, "weir_attach: unknown flags");
  return guarded("weir_attach", [&]() -> weir_status {
    core::OpenOptions options;
    options.read_only = (flags & WEIR_ATTACH_READ_ONLY) != 0;
    auto arena = core::Arena::open(where, options);
    if (!arena) return fail(arena.error());
    auto handle = std::make_unique<weir_arena>();
    handle->state = std::make_shared<weir::capi::ArenaState>(std::move(*arena));
    *out = handle.release();
    return WEIR_OK;
  });
}

weir_status weir_detach(weir_arena* arena) {
  delete arena;  // the mapping stays while a reader or watcher holds the state
  return WEIR_OK;
}

weir_status weir_arena_get_info(const weir_arena* arena, weir_arena_info* out) {
  if (arena == nullptr) return fail_null("weir_arena_get_info", "arena");
  if (out == nullptr) return fail_null("weir_arena_get_info", "out");
  const core::Arena& a = arena->state->arena;
  const core::ArenaHeader& h = a.header();
  const core::Geometry& g = a.geometry();
  *out = weir_arena_info{};
  std::memcpy(out->name, h.name, std::min(sizeof(out->name) - 1, strnlen(h.name, sizeof(h.name))));
  out->bytes = a.bytes();
  out->created_ns = h.created_ns;
  out->channel_data_bytes = g.channel_data_bytes;
  out->layout_version = h.layout_version;
  out->creator_pid = h.creator_pid;
  out->slot_count = g.slot_count;
  out->key_bytes = g.key_bytes;
  out->value_bytes = g.value_bytes;
  out->channel_capacity = g.channel_capacity;
  out->consumer_capacity = g.consumer_capacity;
  out->vector_dim = g.vector_dim;
  out->read_only = a.read_only() ? 1U : 0U;
  return WEIR_OK;
}

weir_status weir_label_name(const weir_arena* arena, uint32_t id, char* buf, size_t size) {
  if (arena == nullptr) return fail_null("weir_label_name", "arena");
  if (buf == nullptr || size == 0) return fail_null("weir_label_name", "buf");
  const auto label = core::LabelDictionary(arena->state->arena).at(id);
  if (!label) {
    char text[128];
    std::snprintf(text, sizeof(text), "label %u: no such label in the arena's dictionary", id);
    return fail(WEIR_E_NOT_FOUND, text);
  }
  if (label->name.size() >= size) return fail(WEIR_E_TOO_SMALL, "weir_label_name: buffer too small for the label");
  std::memcpy(buf, label->name.data(), label->name.size());
  buf[label->name.size()] = '\0';
  return WEIR_OK;
}

}  // extern "C"
