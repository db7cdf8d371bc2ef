// How big an arena this machine can hold at a location: physical memory for shm and memfd arenas,
// and the size (not the free space: a stale arena being replaced still counts there) of /dev/shm or
// of a file arena's file system.
#include "weir/config/arena_room.hpp"

#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "text_units.hpp"
#include "weir/core/arena.hpp"

namespace weir::config {
namespace {

std::uint64_t fs_size(const std::string& path) {
  struct statvfs st {};
  if (::statvfs(path.c_str(), &st) != 0) return 0;
  return static_cast<std::uint64_t>(st.f_blocks) * st.f_frsize;
}


}  // namespace

ArenaRoom arena_room(std::string_view where) {
  auto location = core::Location::parse(where);
  if (!location) return {};
  ArenaRoom room;
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0 && location->backing != core::Backing::file) {
    room.bytes = static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
    room.reason = "this machine's physical memory";
  }
  std::string dir;
  if (location->backing == core::Backing::shm) dir = "/dev/shm";
  if (location->backing == core::Backing::file) {
    std::error_code ec;
    const std::filesystem::path parent = std::filesystem::absolute(location->path, ec).parent_path();
    if (!ec) dir = parent.string();
  }
  if (!dir.empty()) {
    const std::uint64_t size = fs_size(dir);
    if (size > 0 && (room.bytes == 0 || size < room.bytes)) {
      room.bytes = size;
      room.reason = "the size of the file system at " + dir;
    }
  }
  return room;
}

core::Result<void> check_arena_room(std::string_view where, std::uint64_t arena_bytes, std::uint64_t pool_bytes) {
  const ArenaRoom room = arena_room(where);
  if (room.bytes == 0 || arena_bytes <= room.bytes) return {};
  return core::fail(core::Errc::invalid_argument,
                    fmt::format("the arena would take {} (a channel pool of {}) but {} is {}; make the pool smaller",
                                mib(arena_bytes), mib(pool_bytes), room.reason, mib(room.bytes)));
}

}  // namespace weir::config
