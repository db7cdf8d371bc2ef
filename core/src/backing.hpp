#pragma once
// System calls behind an arena's backing: shm_open, open, memfd_create, mmap. Private to core.
#include <cstdint>
#include <string>

#include "weir/core/arena.hpp"
#include "weir/core/clock.hpp"
#include "weir/core/detail/pid.hpp"

namespace weir::core::detail {

/// Opens (or with create, exclusively creates) the descriptor for a location.
[[nodiscard]] Result<int> open_backing(const Location& where, bool create, bool read_only, std::uint32_t mode);
/// Size of the object behind fd.
[[nodiscard]] Result<std::uint64_t> backing_size(int fd, const std::string& what);
/// Sets the size of a freshly created object.
[[nodiscard]] Result<void> size_backing(int fd, std::uint64_t bytes, const std::string& what);
[[nodiscard]] Result<std::byte*> map_backing(int fd, std::uint64_t bytes, bool read_only, const std::string& what);
/// Unlinks the name of a shm or file location.
[[nodiscard]] Result<void> unlink_backing(const Location& where);
/// Owner uid and permission bits of fd.
[[nodiscard]] Result<std::pair<std::uint32_t, std::uint32_t>> backing_owner(int fd, const std::string& what);
/// "open(...): No such file or directory" from errno.
[[nodiscard]] std::string errno_text(const char* call, int err);
[[nodiscard]] Errc errc_for_errno(int err) noexcept;


}  // namespace weir::core::detail
