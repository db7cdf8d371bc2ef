// The C ABI: watchers on signal groups, and waiting for a key to change.
#include <memory>
#include <string>

#include "handles.hpp"
#include "weir/core/clock.hpp"

using weir::capi::fail;
using weir::capi::fail_null;
using weir::capi::guarded;
namespace core = weir::core;

namespace {

template <class Subscribe>
weir_status subscribe(weir_watcher* watcher, const char* name, const char* call, Subscribe&& how) {
  if (watcher == nullptr) return fail_null(call, "watcher");
  if (name == nullptr) return fail_null(call, "name");
  return guarded(call, [&]() -> weir_status {
    auto group = how(watcher->watcher, std::string_view(name));
    return group ? WEIR_OK : fail(group.error());
  });
}

}  // namespace

extern "C" {

weir_status weir_watcher_open(weir_arena* arena, weir_watcher** out) {
  if (out == nullptr) return fail_null("weir_watcher_open", "out");
  *out = nullptr;
  if (arena == nullptr) return fail_null("weir_watcher_open", "arena");
  return guarded("weir_watcher_open", [&]() -> weir_status {
    auto watcher = core::Watcher::create(arena->state->arena);
    if (!watcher) return fail(watcher.error());
    *out = new weir_watcher{arena->state, std::move(*watcher), {false}};
    return WEIR_OK;
  });
}

weir_status weir_watcher_close(weir_watcher* watcher) {
  delete watcher;  // frees the watcher row and its subscriptions
  return WEIR_OK;
}

weir_status weir_watcher_add_key(weir_watcher* watcher, const char* key) {
  return subscribe(watcher, key, "weir_watcher_add_key",
                   [](core::Watcher& w, std::string_view n) { return w.subscribe_key(n); });
}

weir_status weir_watcher_add_label(weir_watcher* watcher, const char* label) {
  return subscribe(watcher, label, "weir_watcher_add_label",
                   [](core::Watcher& w, std::string_view n) { return w.subscribe_label(n); });
}

weir_status weir_watcher_add_channel(weir_watcher* watcher, const char* channel) {
  if (watcher != nullptr && channel != nullptr) {  // a channel that does not exist is an error, not a silent group
    auto found = core::find_channel(watcher->state->arena, channel);
    if (!found) return fail(found.error());
  }
  return subscribe(watcher, channel, "weir_watcher_add_channel",
                   [](core::Watcher& w, std::string_view n) { return w.subscribe_channel(n); });
}

weir_status weir_watcher_wait(weir_watcher* watcher, int64_t timeout_ns) {
  if (watcher == nullptr) return fail_null("weir_watcher_wait", "watcher");
  if (watcher->watcher.groups() == 0) return fail(WEIR_E_INVALID, "weir_watcher_wait: the watcher has no subscriptions");
  const std::int64_t deadline = core::monotonic_ns() + (timeout_ns > 0 ? timeout_ns : 0);
  return weir::capi::sliced_wait(watcher->watcher, watcher->interrupted, deadline);
}

weir_status weir_watcher_wait_key(weir_watcher* watcher, const char* key, uint64_t version, int64_t timeout_ns,
                                  weir_value_info* info) {
  if (watcher == nullptr) return fail_null("weir_watcher_wait_key", "watcher");
  if (key == nullptr) return fail_null("weir_watcher_wait_key", "key");
  if (info == nullptr) return fail_null("weir_watcher_wait_key", "info");
  // Idempotent: a key already watched keeps its one subscription.
  if (const weir_status st = weir_watcher_add_key(watcher, key); st != WEIR_OK) return st;
  const std::int64_t deadline = core::monotonic_ns() + (timeout_ns > 0 ? timeout_ns : 0);
  weir_arena view{watcher->state};
  for (;;) {
    weir_value_info now{};
    const weir_status st = weir_key_info(&view, key, &now);
    if (st != WEIR_OK && st != WEIR_E_NOT_FOUND) return st;
    if (now.version != version) {
      *info = now;
      return WEIR_OK;
    }
    const weir_status waited = weir::capi::sliced_wait(watcher->watcher, watcher->interrupted, deadline);
    if (waited == WEIR_INTERRUPTED) return waited;
    if (waited == WEIR_TIMEOUT) {
      if (weir_key_info(&view, key, &now) == WEIR_OK && now.version != version) {
        *info = now;
        return WEIR_OK;
      }
      return WEIR_TIMEOUT;
    }
  }
}

weir_status weir_watcher_interrupt(weir_watcher* watcher) {
  if (watcher == nullptr) return WEIR_E_INVALID;  // no message: a signal handler may call this
  watcher->interrupted.store(true, std::memory_order_relaxed);  // only a flag; see sliced_wait
  return WEIR_OK;
}

}  // extern "C"
