// The C ABI: keys (list, typed get and set, arrays) and vectors.
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "handles.hpp"
#include "weir/core/signals.hpp"
#include "weir/core/vector_store.hpp"

using weir::capi::fail;
using weir::capi::fail_kv;
using weir::capi::fail_null;
using weir::capi::guarded;
namespace core = weir::core;

namespace {

void fill_value_info(const core::ValueInfo& info, weir_value_info& out) noexcept {
  out = weir_value_info{};
  out.version = info.version();
  out.type = static_cast<std::uint32_t>(info.type);
  out.length = info.length;
  if (info.type == core::ValueType::array) {
    out.elem_dtype = static_cast<std::uint32_t>(info.array.elem);
    out.rank = info.array.rank;
    out.dims[0] = info.array.dims[0];
    out.dims[1] = info.array.dims[1];
  }
}

weir_status check_writable(const weir_arena* arena, const char* call, const char* key) {
  if (arena == nullptr) return fail_null(call, "arena");
  if (key == nullptr) return fail_null(call, "key");
  return WEIR_OK;
}

// Reads an 8-byte scalar of exactly `want`; TYPE naming both types otherwise.
weir_status get_scalar(const weir_arena* arena, const char* key, core::ValueType want, void* out, const char* call) {
  if (arena == nullptr) return fail_null(call, "arena");
  if (key == nullptr) return fail_null(call, "key");
  if (out == nullptr) return fail_null(call, "out");
  const weir::capi::ArenaState& s = *arena->state;
  std::uint64_t bits = 0;
  core::ValueType type = core::ValueType::none;
  const core::KvStatus st = s.kv.get_scalar(key, bits, type);
  if (st == core::KvStatus::ok && type == want) {
    std::memcpy(out, &bits, sizeof(bits));
    return WEIR_OK;
  }
  if (st != core::KvStatus::ok && st != core::KvStatus::type_mismatch) return fail_kv(st, s, key);
  core::ValueInfo info;
  std::array<std::byte, 8> probe{};
  (void)s.kv.get(key, probe, info);
  char text[256];
  std::snprintf(text, sizeof(text), "key '%.64s': holds %s, not %s", key, core::value_type_name(info.type),
                core::value_type_name(want));
  return fail(WEIR_E_TYPE, text);
}

weir_status vector_status(core::VectorStatus st, const weir::capi::ArenaState& s, const char* key) {
  weir_status status = WEIR_E_INTERNAL;
  switch (st) {
    case core::VectorStatus::ok: return WEIR_OK;
    case core::VectorStatus::not_found: status = WEIR_E_NOT_FOUND; break;
    case core::VectorStatus::no_vector: status = WEIR_E_NOT_FOUND; break;
    case core::VectorStatus::busy: status = WEIR_E_BUSY; break;
    case core::VectorStatus::torn: status = WEIR_E_TORN; break;
    case core::VectorStatus::wrong_length: status = WEIR_E_INVALID; break;
    case core::VectorStatus::no_vectors: status = WEIR_E_UNSUPPORTED; break;
    case core::VectorStatus::not_finite: status = WEIR_E_INVALID; break;
    case core::VectorStatus::full: status = WEIR_E_FULL; break;
    case core::VectorStatus::key_too_long: status = WEIR_E_INVALID; break;
    case core::VectorStatus::key_empty: status = WEIR_E_INVALID; break;
    case core::VectorStatus::stale_handle: status = WEIR_E_NOT_FOUND; break;
    case core::VectorStatus::read_only: status = WEIR_E_PERMISSION; break;
    case core::VectorStatus::no_kernel: status = WEIR_E_UNSUPPORTED; break;
  }
  return fail(status, "vector of key '" + std::string(key != nullptr ? key : "") + "' in " +
                          s.arena.location().describe() + ": " + core::vector_status_text(st));
}

}  // namespace

extern "C" {

weir_status weir_key_list(const weir_arena* arena, char* buf, size_t size, size_t* needed, uint32_t* count) {
  if (arena == nullptr) return fail_null("weir_key_list", "arena");
  if (needed == nullptr) return fail_null("weir_key_list", "needed");
  if (count == nullptr) return fail_null("weir_key_list", "count");
  if (buf == nullptr && size > 0) return fail_null("weir_key_list", "buf");
  return guarded("weir_key_list", [&]() -> weir_status {
    std::string all;
    std::uint32_t n = 0;
    arena->state->kv.for_each_key([&](std::string_view key, const core::ValueInfo&) {
      all.append(key);
      all.push_back('\0');
      ++n;
    });
    *needed = all.size();
    *count = n;
    if (all.size() > size) return fail(WEIR_E_TOO_SMALL, "weir_key_list: the key list is longer than the buffer");
    if (!all.empty()) std::memcpy(buf, all.data(), all.size());
    return WEIR_OK;
  });
}

weir_status weir_key_info(const weir_arena* arena, const char* key, weir_value_info* out) {
  if (arena == nullptr) return fail_null("weir_key_info", "arena");
  if (key == nullptr) return fail_null("weir_key_info", "key");
  if (out == nullptr) return fail_null("weir_key_info", "out");
  const weir::capi::ArenaState& s = *arena->state;
  core::ValueView view;
  const core::KvStatus st = s.kv.view(key, view);
  if (st != core::KvStatus::ok) return fail_kv(st, s, key);
  fill_value_info(view.info(), *out);
  return WEIR_OK;
}

weir_status weir_get(const weir_arena* arena, const char* key, void* dst, size_t size, weir_value_info* info) {
  if (arena == nullptr) return fail_null("weir_get", "arena");
  if (key == nullptr) return fail_null("weir_get", "key");
  if (info == nullptr) return fail_null("weir_get", "info");
  if (dst == nullptr && size > 0) return fail_null("weir_get", "dst");
  const weir::capi::ArenaState& s = *arena->state;
  core::ValueInfo vi;
  const core::KvStatus st = s.kv.get(key, std::span(static_cast<std::byte*>(dst), size), vi);
  if (st == core::KvStatus::value_too_large) {
    fill_value_info(vi, *info);
    char text[256];
    std::snprintf(text, sizeof(text), "key '%.64s': its value takes %u bytes, the buffer holds %zu", key, vi.length,
                  size);
    return fail(WEIR_E_TOO_SMALL, text);
  }
  if (st != core::KvStatus::ok) return fail_kv(st, s, key);
  fill_value_info(vi, *info);
  return WEIR_OK;
}

weir_status weir_get_f64(const weir_arena* arena, const char* key, double* out) {
  return get_scalar(arena, key, core::ValueType::f64, out, "weir_get_f64");
}
weir_status weir_get_i64(const weir_arena* arena, const char* key, int64_t* out) {
  return get_scalar(arena, key, core::ValueType::i64, out, "weir_get_i64");
}
weir_status weir_get_u64(const weir_arena* arena, const char* key, uint64_t* out) {
  return get_scalar(arena, key, core::ValueType::u64, out, "weir_get_u64");
}

weir_status weir_set(weir_arena* arena, const char* key, uint32_t type, const void* data, size_t size) {
  if (const weir_status st = check_writable(arena, "weir_set", key); st != WEIR_OK) return st;
  if (data == nullptr && size > 0) return fail_null("weir_set", "data");
  const auto t = static_cast<core::ValueType>(type);
  const bool word = t == core::ValueType::i64 || t == core::ValueType::u64 || t == core::ValueType::f64;
  if (t != core::ValueType::bytes && t != core::ValueType::text && !word)
    return fail(WEIR_E_INVALID, "weir_set: type must be bytes, text, i64, u64 or f64 (arrays: weir_set_array)");
  if (word && size != sizeof(std::uint64_t)) return fail(WEIR_E_INVALID, "weir_set: i64, u64 and f64 take 8 bytes");
  weir::capi::ArenaState& s = *arena->state;
  if (size > s.kv.value_bytes()) {
    char text[256];
    std::snprintf(text, sizeof(text), "key '%.64s': a value of %zu bytes is larger than the arena's %u", key, size,
                  s.kv.value_bytes());
    return fail(WEIR_E_TOO_LARGE, text);
  }
  const core::KvStatus st = s.kv.set_wait(key, std::span(static_cast<const std::byte*>(data), size), t);
  return st == core::KvStatus::ok ? WEIR_OK : fail_kv(st, s, key);
}

weir_status weir_set_f64(weir_arena* arena, const char* key, double value) {
  return weir_set(arena, key, WEIR_VALUE_F64, &value, sizeof(value));
}
weir_status weir_set_i64(weir_arena* arena, const char* key, int64_t value) {
  return weir_set(arena, key, WEIR_VALUE_I64, &value, sizeof(value));
}
weir_status weir_set_u64(weir_arena* arena, const char* key, uint64_t value) {
  return weir_set(arena, key, WEIR_VALUE_U64, &value, sizeof(value));
}
weir_status weir_set_text(weir_arena* arena, const char* key, const char* text) {
  if (text == nullptr) return fail_null("weir_set_text", "text");
  return weir_set(arena, key, WEIR_VALUE_TEXT, text, std::strlen(text));
}

weir_status weir_set_array(weir_arena* arena, const char* key, uint32_t dtype, uint32_t rank, const uint32_t* dims,
                           const void* data, size_t size) {
  if (const weir_status st = check_writable(arena, "weir_set_array", key); st != WEIR_OK) return st;
  if (dims == nullptr) return fail_null("weir_set_array", "dims");
  if (data == nullptr && size > 0) return fail_null("weir_set_array", "data");
  if (weir_dtype_bytes(dtype) == 0) return fail(WEIR_E_INVALID, "weir_set_array: unknown element dtype");
  if (rank != 1 && rank != 2) return fail(WEIR_E_INVALID, "weir_set_array: rank must be 1 or 2");
  core::ArrayShape shape;
  shape.elem = static_cast<core::Dtype>(dtype);
  shape.rank = rank;
  shape.dims = {dims[0], rank == 2 ? dims[1] : 0U};
  if (shape.elements() == 0 || shape.bytes() != size) {
    char text[256];
    std::snprintf(text, sizeof(text), "key '%.64s': %zu bytes do not make a %s array of that shape (%llu bytes)", key,
                  size, weir_dtype_name(dtype), static_cast<unsigned long long>(shape.bytes()));
    return fail(WEIR_E_INVALID, text);
  }
  weir::capi::ArenaState& s = *arena->state;
  const core::KvStatus st = s.kv.set_array(key, shape, std::span(static_cast<const std::byte*>(data), size));
  return st == core::KvStatus::ok ? WEIR_OK : fail_kv(st, s, key);
}

weir_status weir_del(weir_arena* arena, const char* key) {
  if (const weir_status st = check_writable(arena, "weir_del", key); st != WEIR_OK) return st;
  weir::capi::ArenaState& s = *arena->state;
  const core::KvStatus st = s.kv.del(key);
  return st == core::KvStatus::ok ? WEIR_OK : fail_kv(st, s, key);
}

weir_status weir_vector_dim(const weir_arena* arena, uint32_t* dim) {
  if (arena == nullptr) return fail_null("weir_vector_dim", "arena");
  if (dim == nullptr) return fail_null("weir_vector_dim", "dim");
  *dim = core::VectorStore(arena->state->arena).dim();
  return WEIR_OK;
}

weir_status weir_set_labels(weir_arena* arena, const char* key, const char* const* labels, uint32_t n) {
  if (const weir_status st = check_writable(arena, "weir_set_labels", key); st != WEIR_OK) return st;
  if (labels == nullptr && n > 0) return fail_null("weir_set_labels", "labels");
  for (uint32_t i = 0; i < n; ++i)
    if (labels[i] == nullptr) return fail_null("weir_set_labels", "labels[i]");
  return guarded("weir_set_labels", [&]() -> weir_status {
    std::vector<std::string> names(labels, labels + n);
    auto done = core::set_labels(arena->state->arena, key, names);
    return done ? WEIR_OK : fail(done.error());
  });
}

weir_status weir_vector_set(weir_arena* arena, const char* key, const float* v, uint32_t n) {
  if (const weir_status st = check_writable(arena, "weir_vector_set", key); st != WEIR_OK) return st;
  if (v == nullptr && n > 0) return fail_null("weir_vector_set", "v");
  return guarded("weir_vector_set", [&]() -> weir_status {
    core::VectorStore store(arena->state->arena);
    return vector_status(store.set_wait(key, std::span(v, n)), *arena->state, key);
  });
}

weir_status weir_vector_get(const weir_arena* arena, const char* key, float* out, uint32_t n) {
  if (arena == nullptr) return fail_null("weir_vector_get", "arena");
  if (key == nullptr) return fail_null("weir_vector_get", "key");
  if (out == nullptr && n > 0) return fail_null("weir_vector_get", "out");
  return guarded("weir_vector_get", [&]() -> weir_status {
    const core::VectorStore store(arena->state->arena);
    return vector_status(store.get(key, std::span(out, n)), *arena->state, key);
  });
}

weir_status weir_vector_search(const weir_arena* arena, const float* query, uint32_t n, uint32_t metric,
                               weir_vector_hit* hits, uint32_t k, uint32_t* count) {
  if (arena == nullptr) return fail_null("weir_vector_search", "arena");
  if (query == nullptr && n > 0) return fail_null("weir_vector_search", "query");
  if (hits == nullptr && k > 0) return fail_null("weir_vector_search", "hits");
  if (count == nullptr) return fail_null("weir_vector_search", "count");
  if (metric > WEIR_L2) return fail(WEIR_E_INVALID, "weir_vector_search: metric must be cosine, dot or l2");
  *count = 0;
  return guarded("weir_vector_search", [&]() -> weir_status {
    const core::VectorStore store(arena->state->arena);
    std::vector<core::VectorHit> found(k);
    core::SearchOptions options;
    options.metric = static_cast<core::Metric>(metric);
    std::size_t got = 0;
    const core::VectorStatus st = store.search(std::span(query, n), options, found, got);
    if (st != core::VectorStatus::ok) return vector_status(st, *arena->state, "(query)");
    for (std::size_t i = 0; i < got; ++i) hits[i] = weir_vector_hit{found[i].score, found[i].slot, found[i].generation};
    *count = static_cast<uint32_t>(got);
    return WEIR_OK;
  });
}

weir_status weir_vector_hit_key(const weir_arena* arena, const weir_vector_hit* hit, char* buf, size_t size) {
  if (arena == nullptr) return fail_null("weir_vector_hit_key", "arena");
  if (hit == nullptr) return fail_null("weir_vector_hit_key", "hit");
  if (buf == nullptr || size == 0) return fail_null("weir_vector_hit_key", "buf");
  return guarded("weir_vector_hit_key", [&]() -> weir_status {
    const core::VectorStore store(arena->state->arena);
    std::string key(store.key_bytes(), '\0');
    std::uint32_t length = 0;
    const core::VectorStatus st = store.key_of(core::VectorHit{hit->slot, hit->generation, hit->score}, key, length);
    if (st != core::VectorStatus::ok) return vector_status(st, *arena->state, "(hit)");
    if (length >= size) return fail(WEIR_E_TOO_SMALL, "weir_vector_hit_key: buffer too small for the key");
    std::memcpy(buf, key.data(), length);
    buf[length] = '\0';
    return WEIR_OK;
  });
}

}  // extern "C"
