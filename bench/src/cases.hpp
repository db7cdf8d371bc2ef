#pragma once
// The benchmark cases, grouped by what they need. Private to bench/.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "harness.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/kv_store.hpp"

namespace weir::bench {

/// Remembers the last unexpected outcome of a case's calls; each call returns whether it was expected.
class Check {
 public:
  [[nodiscard]] bool operator()(core::KvStatus status, core::KvStatus expected = core::KvStatus::ok) noexcept {
    if (status == expected) [[likely]]
      return true;
    what_ = core::kv_status_name(status);
    return false;
  }
  /// For checks on what a successful call returned (a length, a counter).
  [[nodiscard]] bool that(bool ok, const char* what) noexcept {
    if (ok) [[likely]]
      return true;
    what_ = what;
    return false;
  }
  [[nodiscard]] std::string_view what() const noexcept { return what_; }

 private:
  const char* what_ = "none";
};

/// "key.000", "key.001", ...: count keys numbered from first, all of one length.
[[nodiscard]] std::vector<std::string> make_keys(std::string_view prefix, std::uint32_t first, std::uint32_t count);

/// Single-threaded KvStore cases: set/get by key and by handle, miss, view, incr.
void run_kv_cases(const Config& config, const core::Arena& arena, Results& results);
/// The bare seqlock and memcpy floors.
void run_baseline_cases(const Config& config, Results& results);
/// One writer (this process) and one reader (a forked child), on the KV store and on the bare seqlock.
void run_xproc_cases(const Config& config, const core::Arena& arena, const std::string& arena_name,
                     Results& results);

}  // namespace weir::bench
