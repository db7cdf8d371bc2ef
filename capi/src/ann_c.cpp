// The C ABI: asking a partition's ann service (`weir ann ARENA PART`) for nearest vectors.
#include <memory>
#include <span>
#include <string>
#include <utility>

#include "handles.hpp"
#include "weir/ann/client.hpp"
#include "weir/ann/exact.hpp"

using weir::capi::fail;
using weir::capi::fail_null;
using weir::capi::guarded;
namespace ann = weir::ann;
namespace core = weir::core;

struct weir_ann {
  std::shared_ptr<weir::capi::ArenaState> state;  // keeps the mapping the client points into
  ann::Client client;
};

namespace {

// Copies core hits out as C hits.
void copy_hits(std::span<const core::VectorHit> in, weir_vector_hit* out) noexcept {
  for (std::size_t i = 0; i < in.size(); ++i) out[i] = weir_vector_hit{in[i].score, in[i].slot, in[i].generation};
}

template <class Ask>
weir_status ask(weir_ann* handle, const char* call, uint32_t k, uint32_t ef, int64_t timeout_ns,
                weir_vector_hit* hits, uint32_t* count, Ask&& how) {
  if (handle == nullptr) return fail_null(call, "ann");
  if (count == nullptr) return fail_null(call, "count");
  *count = 0;
  if (hits == nullptr && k > 0) return fail_null(call, "hits");
  if (k == 0 || k > WEIR_ANN_MAX_HITS)
    return fail(WEIR_E_INVALID, std::string(call) + ": k must be 1.." + std::to_string(WEIR_ANN_MAX_HITS));
  if (timeout_ns < 0) return fail(WEIR_E_INVALID, std::string(call) + ": timeout must not be negative");
  return guarded(call, [&]() -> weir_status {
    core::VectorHit found[WEIR_ANN_MAX_HITS];
    const ann::QueryOptions options{.k = k, .ef = ef, .timeout_ns = timeout_ns};
    auto n = how(handle->client, options, std::span(found, k));
    if (!n) return fail(n.error());
    copy_hits(std::span(found, *n), hits);
    *count = static_cast<uint32_t>(*n);
    return WEIR_OK;
  });
}

}  // namespace

extern "C" {

weir_status weir_ann_open(weir_arena* arena, const char* part, weir_ann** out) {
  if (out == nullptr) return fail_null("weir_ann_open", "out");
  *out = nullptr;
  if (arena == nullptr) return fail_null("weir_ann_open", "arena");
  if (part == nullptr) return fail_null("weir_ann_open", "part");
  return guarded("weir_ann_open", [&]() -> weir_status {
    auto client = ann::Client::open(arena->state->arena, part);
    if (!client) return fail(client.error());
    *out = new weir_ann{arena->state, std::move(*client)};
    return WEIR_OK;
  });
}

weir_status weir_ann_close(weir_ann* ann) {
  delete ann;  // frees the watcher row and the client's keys
  return WEIR_OK;
}

weir_status weir_ann_search(weir_ann* handle, const float* query, uint32_t n, uint32_t k, uint32_t ef,
                            int64_t timeout_ns, weir_vector_hit* hits, uint32_t* count) {
  if (query == nullptr && n > 0) return fail_null("weir_ann_search", "query");
  return ask(handle, "weir_ann_search", k, ef, timeout_ns, hits, count,
             [&](ann::Client& c, const ann::QueryOptions& o, std::span<core::VectorHit> h) {
               return c.search(std::span(query, n), o, h);
             });
}

weir_status weir_ann_search_like(weir_ann* handle, const char* key, uint32_t k, uint32_t ef, int64_t timeout_ns,
                                 weir_vector_hit* hits, uint32_t* count) {
  if (key == nullptr) return fail_null("weir_ann_search_like", "key");
  return ask(handle, "weir_ann_search_like", k, ef, timeout_ns, hits, count,
             [&](ann::Client& c, const ann::QueryOptions& o, std::span<core::VectorHit> h) {
               return c.search_like(key, o, h);
             });
}

weir_status weir_ann_exact_search(const weir_arena* arena, const char* part, const float* query, uint32_t n, uint32_t k,
                                  weir_vector_hit* hits, uint32_t* count) {
  if (arena == nullptr) return fail_null("weir_ann_exact_search", "arena");
  if (part == nullptr) return fail_null("weir_ann_exact_search", "part");
  if (query == nullptr && n > 0) return fail_null("weir_ann_exact_search", "query");
  if (count == nullptr) return fail_null("weir_ann_exact_search", "count");
  *count = 0;
  if (hits == nullptr && k > 0) return fail_null("weir_ann_exact_search", "hits");
  return guarded("weir_ann_exact_search", [&]() -> weir_status {
    auto found = ann::exact_search(arena->state->arena, part, std::span(query, n), k);
    if (!found) return fail(found.error());
    copy_hits(*found, hits);
    *count = static_cast<uint32_t>(found->size());
    return WEIR_OK;
  });
}

}  // extern "C"
