#pragma once
// Whether an arena of a given size can live where it is asked to: a shm arena in /dev/shm and in
// memory, a memfd arena in memory, a file arena on its file system. Mapping more than that succeeds
// and then dies of SIGBUS at the first page that has nowhere to go, so `weir create` and `weir run`
// refuse it first, saying why.
#include <cstdint>
#include <string>
#include <string_view>

#include "weir/core/error.hpp"

namespace weir::config {

/// The most bytes an arena at `where` can hold on this machine (the smaller of physical memory and
/// the backing's size), with the reason that limit holds; 0 when it cannot be told.
struct ArenaRoom {
  std::uint64_t bytes = 0;
  std::string reason;  // "physical memory", "the size of /dev/shm", "the size of the file system at /x"
};
[[nodiscard]] ArenaRoom arena_room(std::string_view where);

/// Refuses an arena of `arena_bytes` (of which `pool_bytes` are the channel pool) larger than arena_room().
[[nodiscard]] core::Result<void> check_arena_room(std::string_view where, std::uint64_t arena_bytes,
                                                  std::uint64_t pool_bytes);

}  // namespace weir::config
