#pragma once
// What the C handles hold, and the error plumbing every C entry point shares: a thread-local
// message buffer that never allocates, and a guard that turns any C++ exception into a status.
#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>

#include "weir/core/arena.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/error.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/signals.hpp"
#include "weir/weir_c.h"

namespace weir::capi {

/// One attached arena. Lives as long as its handle or any reader or watcher on it (shared_ptr): the
/// core objects hold pointers to `arena`, so it never moves.
struct ArenaState {
  explicit ArenaState(core::Arena a) noexcept : arena(std::move(a)), kv(arena) {}
  ArenaState(const ArenaState&) = delete;
  ArenaState& operator=(const ArenaState&) = delete;
  ~ArenaState() = default;
  core::Arena arena;
  core::KvStore kv;
};

/// Records `what` as this thread's last error and returns `status`. Never allocates, never throws.
weir_status fail(weir_status status, std::string_view what) noexcept;
/// The status and message of a core cold-path error.
weir_status fail(const core::Error& error) noexcept;
/// The status of a key operation that did not succeed, with "key 'K' in <arena>: <reason>".
weir_status fail_kv(core::KvStatus status, const ArenaState& state, std::string_view key) noexcept;
/// INVALID naming the argument, for a null handle or pointer.
weir_status fail_null(const char* call, const char* argument) noexcept;

/// Runs body, turning any exception (allocation failure included) into WEIR_E_INTERNAL.
template <class Body>
weir_status guarded(const char* call, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return fail(WEIR_E_INTERNAL, std::string_view(call).empty() ? "out of memory" : call);
  } catch (const std::exception& e) {
    return fail(WEIR_E_INTERNAL, e.what());
  } catch (...) {
    return fail(WEIR_E_INTERNAL, call);
  }
}

/// Sleeps on watcher until it pulses (OK), timeout_ns passes (TIMEOUT) or `interrupted` is seen set
/// (INTERRUPTED; the flag is cleared), in slices of at most WEIR_WAIT_SLICE_NS.
weir_status sliced_wait(core::Watcher& watcher, std::atomic<bool>& interrupted, std::int64_t deadline_ns) noexcept;

}  // namespace weir::capi

struct weir_arena {
  std::shared_ptr<weir::capi::ArenaState> state;
};

struct weir_reader {
  std::shared_ptr<weir::capi::ArenaState> state;
  weir::core::ChannelReader reader;
  std::string channel;
  std::uint64_t block_bytes = 0;
  std::optional<weir::core::Watcher> watcher;  // made on the first wait: watcher rows are few
  std::atomic<bool> interrupted{false};
};

struct weir_watcher {
  std::shared_ptr<weir::capi::ArenaState> state;
  weir::core::Watcher watcher;
  std::atomic<bool> interrupted{false};
};
