// Arena lifetime: create, open, close, remove. The header protocol is in arena_layout.hpp.
#include "weir/core/arena.hpp"

#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cstring>
#include <utility>

#include "backing.hpp"
#include "weir/core/numa.hpp"

namespace weir::core {

namespace {

void close_fd(int fd) noexcept {
  if (fd >= 0) ::close(fd);
}

void pause_briefly() noexcept {
  const timespec ts{0, 1'000'000};  // 1 ms between looks at an unfinished arena
  nanosleep(&ts, nullptr);
}

// Explains why an existing arena blocks a create, or says it is stale and may be replaced.
Result<bool> existing_is_replaceable(const Location& where, bool replace_stale) {
  const std::string what = where.describe();
  auto status = inspect(where.backing == Backing::file ? where.path : where.name);
  if (!status) {
    if (status.error().code == Errc::not_found) return true;  // vanished meanwhile: retry
    if (status.error().code == Errc::not_ready && replace_stale) return true;  // its creator died mid-create
    return fail(Errc::already_exists, what + " already exists and cannot be read (" + status.error().what +
                                          "); remove it first");
  }
  if (!status->error.empty())
    return fail(Errc::already_exists, what + " already exists but is not a valid arena (" + status->error +
                                          "); remove it first");
  if (!status->stale) {
    std::string users;
    for (const auto pid : status->attached) users += (users.empty() ? "" : ", ") + std::to_string(pid);
    if (users.empty()) users = std::to_string(status->creator_pid) + " (creator)";
    return fail(Errc::already_exists, what + " already exists and is in use by pid " + users);
  }
  if (!replace_stale)
    return fail(Errc::already_exists, what + " already exists and is stale (creator pid " +
                                          std::to_string(status->creator_pid) +
                                          " is gone, nobody attached); remove it or ask to replace it");
  return true;
}

}  // namespace

Arena::Arena(Location location, int fd, std::byte* base, std::uint64_t bytes, bool read_only) noexcept
    : location_(std::move(location)), fd_(fd), base_(base), bytes_(bytes), read_only_(read_only) {}

Arena::Arena(Arena&& other) noexcept
    : location_(std::move(other.location_)),
      fd_(std::exchange(other.fd_, -1)),
      base_(std::exchange(other.base_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      read_only_(other.read_only_),
      attach_row_(std::exchange(other.attach_row_, -1)) {}

Arena& Arena::operator=(Arena&& other) noexcept {
  if (this != &other) {
    close();
    location_ = std::move(other.location_);
    fd_ = std::exchange(other.fd_, -1);
    base_ = std::exchange(other.base_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    read_only_ = other.read_only_;
    attach_row_ = std::exchange(other.attach_row_, -1);
  }
  return *this;
}

Arena::~Arena() { close(); }

void Arena::close() noexcept {
  if (base_ != nullptr) {
    detach();
    munmap(base_, bytes_);
    base_ = nullptr;
    bytes_ = 0;
  }
  close_fd(std::exchange(fd_, -1));
}

Result<void> Arena::sync() const {
  if (base_ == nullptr) return fail(Errc::invalid_argument, location_.describe() + ": not open");
  if (msync(base_, bytes_, MS_SYNC) != 0)
    return fail(Errc::io_error, location_.describe() + ": " + detail::errno_text("msync", errno));
  return {};
}

Result<Arena> Arena::create(std::string_view where, const ArenaOptions& options) {
  auto loc = Location::parse(where);
  if (!loc) return tl::make_unexpected(loc.error());
  const std::string what = loc->describe();
  ArenaHeader planned{};
  if (auto r = plan_layout(options, planned); !r) return fail(Errc::invalid_argument, what + ": " + r.error().what);

  auto fd = detail::open_backing(*loc, true, false, options.mode);
  if (!fd && fd.error().code == Errc::already_exists) {
    auto replaceable = existing_is_replaceable(*loc, options.replace_stale);
    if (!replaceable) return tl::make_unexpected(replaceable.error());
    (void)detail::unlink_backing(*loc);  // a concurrent replacer may have removed it first
    fd = detail::open_backing(*loc, true, false, options.mode);
  }
  if (!fd) return tl::make_unexpected(fd.error());
  const auto abandon = [&](Error e) {
    close_fd(*fd);
    if (loc->backing == Backing::shm || loc->backing == Backing::file) (void)detail::unlink_backing(*loc);
    return tl::make_unexpected(std::move(e));
  };
  if (auto r = detail::size_backing(*fd, planned.arena_bytes, what); !r) return abandon(r.error());
  auto base = detail::map_backing(*fd, planned.arena_bytes, false, what);
  if (!base) return abandon(base.error());
  if (options.numa_node >= 0) {  // before the first touch below, so every page lands on the node
    if (auto bound = numa_bind(*base, planned.arena_bytes, options.numa_node); !bound) {
      munmap(*base, planned.arena_bytes);
      return abandon(with_context(bound.error(), what));
    }
  }
  const bool prefaulted = options.prefault || options.numa_node >= 0;
  if (prefaulted) prefault(*base, planned.arena_bytes);  // the hot path never page-faults

  // A new object reads as zeros: every index entry is empty and every slot epoch even.
  auto& h = *reinterpret_cast<ArenaHeader*>(*base);
  h.layout_version = planned.layout_version;
  h.header_bytes = planned.header_bytes;
  h.arena_bytes = planned.arena_bytes;
  h.creator_pid = static_cast<std::uint32_t>(getpid());
  h.mode = planned.mode;
  h.created_ns = static_cast<std::uint64_t>(core::realtime_ns());
  h.numa_node = options.numa_node;
  h.create_flags = prefaulted ? kCreatePrefaulted : 0U;
  h.geometry = planned.geometry;
  std::memcpy(h.regions, planned.regions, sizeof(h.regions));
  std::memset(h.name, 0, sizeof(h.name));
  std::memcpy(h.name, loc->name.data(), std::min<std::size_t>(loc->name.size(), kMaxNameBytes));
  h.header_checksum = header_checksum(h);
  h.ready_magic.store(kArenaMagic, std::memory_order_release);  // publishes every field above

  Arena arena(std::move(*loc), *fd, *base, planned.arena_bytes, false);
  arena.attach();
  return arena;
}

Result<Arena> Arena::open(std::string_view where, const OpenOptions& options) {
  auto loc = Location::parse(where);
  if (!loc) return tl::make_unexpected(loc.error());
  const std::string what = loc->describe();
  auto fd = detail::open_backing(*loc, false, options.read_only, 0);
  if (!fd) {
    if (fd.error().code == Errc::not_found) return fail(Errc::not_found, what + " does not exist");
    return tl::make_unexpected(fd.error());
  }
  const std::int64_t deadline = core::monotonic_ns() + options.ready_timeout_ns;
  for (;;) {
    auto size = detail::backing_size(*fd, what);
    if (!size) {
      close_fd(*fd);
      return tl::make_unexpected(size.error());
    }
    const bool being_created = *size == 0;  // between the creator's open and its ftruncate
    if (!being_created) {
      if (*size < kHeaderBytes) {
        close_fd(*fd);
        return fail(Errc::layout_mismatch, what + ": truncated: " + std::to_string(*size) + " bytes, smaller than the " +
                                               std::to_string(kHeaderBytes) + "-byte header");
      }
      auto base = detail::map_backing(*fd, *size, options.read_only, what);
      if (!base) {
        close_fd(*fd);
        return tl::make_unexpected(base.error());
      }
      auto valid = validate_header(*base, *size, what);
      if (valid) {
        Arena arena(std::move(*loc), *fd, *base, *size, options.read_only);
        if (!options.read_only) arena.attach();
        return arena;
      }
      munmap(*base, *size);
      if (valid.error().code != Errc::not_ready || core::monotonic_ns() >= deadline) {
        close_fd(*fd);
        return tl::make_unexpected(valid.error());
      }
    } else if (core::monotonic_ns() >= deadline) {
      close_fd(*fd);
      return fail(Errc::not_ready, what + ": still empty: its creator never sized it");
    }
    pause_briefly();
  }
}

Result<void> Arena::remove(std::string_view where) {
  auto loc = Location::parse(where);
  if (!loc) return tl::make_unexpected(loc.error());
  auto r = detail::unlink_backing(*loc);
  if (!r && r.error().code == Errc::not_found) return fail(Errc::not_found, loc->describe() + " does not exist");
  return r;
}

}  // namespace weir::core
