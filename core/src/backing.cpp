#include "backing.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <ctime>

namespace weir::core {

namespace {

constexpr std::string_view kShmPrefix = "/weir.";
constexpr std::string_view kShmDir = "/dev/shm";

bool valid_name(std::string_view name) noexcept {
  if (name.empty() || name.size() > kMaxNameBytes || name.front() == '.') return false;
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string base_name(std::string_view path) {
  const auto slash = path.find_last_of('/');
  std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  if (base.size() > kMaxNameBytes) base = base.substr(0, kMaxNameBytes);
  return std::string(base);
}

}  // namespace

Result<Location> Location::parse(std::string_view where) {
  Location loc;
  if (where.starts_with("fd:")) {
    const std::string_view digits = where.substr(3);
    int fd = -1;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), fd);
    if (ec != std::errc{} || end != digits.data() + digits.size() || fd < 0)
      return fail(Errc::invalid_argument, "arena location '" + std::string(where) + "': fd:N needs a descriptor number");
    loc.backing = Backing::fd;
    loc.fd = fd;
    loc.name = std::string(where);
    return loc;
  }
  if (where.starts_with("memfd:")) {
    loc.backing = Backing::memfd;
    loc.name = std::string(where.substr(6));
    if (!valid_name(loc.name))
      return fail(Errc::invalid_argument, "arena name '" + loc.name +
                                              "': use 1-63 characters of A-Z a-z 0-9 . _ - (not starting with '.')");
    return loc;
  }
  if (where.find('/') != std::string_view::npos) {
    loc.backing = Backing::file;
    loc.path = std::string(where);
    loc.name = base_name(where);
    return loc;
  }
  if (!valid_name(where))
    return fail(Errc::invalid_argument, "arena name '" + std::string(where) +
                                            "': use 1-63 characters of A-Z a-z 0-9 . _ - (not starting with '.')");
  loc.backing = Backing::shm;
  loc.name = std::string(where);
  loc.path = std::string(kShmDir) + std::string(kShmPrefix) + loc.name;
  return loc;
}

std::string Location::describe() const {
  switch (backing) {
    case Backing::shm: return "arena '" + name + "'";
    case Backing::file: return "arena file '" + path + "'";
    case Backing::memfd: return "memfd arena '" + name + "'";
    case Backing::fd: return "arena on descriptor " + std::to_string(fd);
  }
  return "arena";
}

const char* errc_name(Errc code) noexcept {
  switch (code) {
    case Errc::invalid_argument: return "invalid_argument";
    case Errc::not_found: return "not_found";
    case Errc::already_exists: return "already_exists";
    case Errc::permission_denied: return "permission_denied";
    case Errc::shm_unavailable: return "shm_unavailable";
    case Errc::layout_mismatch: return "layout_mismatch";
    case Errc::not_ready: return "not_ready";
    case Errc::io_error: return "io_error";
    case Errc::conflict: return "conflict";
    case Errc::busy: return "busy";
  }
  return "unknown";
}

namespace detail {

std::string errno_text(const char* call, int err) { return std::string(call) + ": " + std::strerror(err); }

Errc errc_for_errno(int err) noexcept {
  switch (err) {
    case ENOENT: return Errc::not_found;
    case EEXIST: return Errc::already_exists;
    case EACCES:
    case EPERM: return Errc::permission_denied;
    default: return Errc::shm_unavailable;
  }
}

std::atomic<std::uint32_t> g_cached_pid{0};

namespace {
void forget_pid() noexcept { g_cached_pid.store(0, std::memory_order_relaxed); }
}  // namespace

std::uint32_t fill_pid_cache() noexcept {
  static const int registered = pthread_atfork(nullptr, nullptr, forget_pid);
  (void)registered;
  const auto pid = static_cast<std::uint32_t>(getpid());
  g_cached_pid.store(pid, std::memory_order_relaxed);
  return pid;
}

Result<int> open_backing(const Location& where, bool create, bool read_only, std::uint32_t mode) {
  const std::string what = where.describe();
  int fd = -1;
  const int access = read_only ? O_RDONLY : O_RDWR;
  const int flags = access | O_CLOEXEC | (create ? O_CREAT | O_EXCL : 0);
  switch (where.backing) {
    case Backing::shm: {
      const std::string shm_name = std::string(kShmPrefix) + where.name;
      fd = shm_open(shm_name.c_str(), flags, static_cast<mode_t>(mode));
      if (fd < 0) return fail(errc_for_errno(errno), what + ": " + errno_text("shm_open", errno));
      break;
    }
    case Backing::file:
      fd = ::open(where.path.c_str(), flags, static_cast<mode_t>(mode));
      if (fd < 0) return fail(errc_for_errno(errno), what + ": " + errno_text("open", errno));
      break;
    case Backing::memfd:
      if (!create) return fail(Errc::invalid_argument, what + ": a memfd arena has no name to open; pass fd:N");
      fd = memfd_create(("weir." + where.name).c_str(), 0);  // inherited across exec on purpose
      if (fd < 0) return fail(errc_for_errno(errno), what + ": " + errno_text("memfd_create", errno));
      break;
    case Backing::fd:
      if (create) return fail(Errc::invalid_argument, what + ": cannot create on an inherited descriptor");
      fd = fcntl(where.fd, F_DUPFD_CLOEXEC, 0);
      if (fd < 0) return fail(errc_for_errno(errno), what + ": " + errno_text("fcntl(F_DUPFD)", errno));
      break;
  }
  if (create && (where.backing == Backing::shm || where.backing == Backing::file)) {
    // The umask may have narrowed the mode; set exactly what was asked.
    if (fchmod(fd, static_cast<mode_t>(mode)) != 0) {
      const int err = errno;
      ::close(fd);
      return fail(errc_for_errno(err), what + ": " + errno_text("fchmod", err));
    }
  }
  return fd;
}

Result<std::uint64_t> backing_size(int fd, const std::string& what) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return fail(Errc::shm_unavailable, what + ": " + errno_text("fstat", errno));
  return static_cast<std::uint64_t>(st.st_size);
}

Result<std::pair<std::uint32_t, std::uint32_t>> backing_owner(int fd, const std::string& what) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return fail(Errc::shm_unavailable, what + ": " + errno_text("fstat", errno));
  return std::pair<std::uint32_t, std::uint32_t>{st.st_uid, st.st_mode & 07777U};
}

Result<void> size_backing(int fd, std::uint64_t bytes, const std::string& what) {
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0)
    return fail(Errc::shm_unavailable, what + ": " + errno_text("ftruncate", errno));
  return {};
}

Result<std::byte*> map_backing(int fd, std::uint64_t bytes, bool read_only, const std::string& what) {
  const int prot = read_only ? PROT_READ : PROT_READ | PROT_WRITE;
  void* p = mmap(nullptr, bytes, prot, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return fail(Errc::shm_unavailable, what + ": " + errno_text("mmap", errno));
  return static_cast<std::byte*>(p);
}

Result<void> unlink_backing(const Location& where) {
  const std::string what = where.describe();
  switch (where.backing) {
    case Backing::shm:
      if (shm_unlink((std::string(kShmPrefix) + where.name).c_str()) != 0)
        return fail(errc_for_errno(errno), what + ": " + errno_text("shm_unlink", errno));
      return {};
    case Backing::file:
      if (::unlink(where.path.c_str()) != 0)
        return fail(errc_for_errno(errno), what + ": " + errno_text("unlink", errno));
      return {};
    case Backing::memfd:
    case Backing::fd: return fail(Errc::invalid_argument, what + ": has no name to remove; it goes with its last user");
  }
  return {};
}

}  // namespace detail
}  // namespace weir::core
