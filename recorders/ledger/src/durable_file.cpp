#include "durable_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace weir::ledger::detail {

namespace {

constexpr int kLockTries = 200;  // 10 ms apart: a lock held longer than 2 s is refused
constexpr long kLockPauseNs = 10'000'000;

core::Result<void> write_all(int fd, const std::string& text, const std::filesystem::path& path, const std::string& what) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return tl::make_unexpected(io_failure(what, path, "cannot write", errno));
    done += static_cast<std::size_t>(n);
  }
  return {};
}

}  // namespace

core::Error io_failure(const std::string& what, const std::filesystem::path& path, const std::string& reason,
                       int error_number) {
  return core::Error{core::Errc::io_error, what + " " + path.string() + ": " + reason + ": " + std::strerror(error_number)};
}

core::Result<void> write_atomically(const std::filesystem::path& path, const std::string& text, const std::string& what) {
  const std::filesystem::path temp = path.string() + ".tmp";
  {
    core::UniqueFd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (fd.get() < 0) return tl::make_unexpected(io_failure(what, temp, "cannot create", errno));
    if (auto ok = write_all(fd.get(), text, temp, what); !ok) return ok;
    if (::fsync(fd.get()) != 0) return tl::make_unexpected(io_failure(what, temp, "fsync failed", errno));
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) return tl::make_unexpected(io_failure(what, path, "cannot rename", errno));
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  core::UniqueFd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dfd.get() < 0 || ::fsync(dfd.get()) != 0)
    return tl::make_unexpected(io_failure(what, dir, "cannot sync the directory", errno));
  return {};
}

core::Result<core::UniqueFd> lock_file(const std::filesystem::path& path, const std::string& what) {
  const std::filesystem::path lock_path = path.string() + ".lock";
  core::UniqueFd lock(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (lock.get() < 0) return tl::make_unexpected(io_failure(what, lock_path, "cannot open the lock", errno));
  int tries = 0;
  while (::flock(lock.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) return tl::make_unexpected(io_failure(what, lock_path, "cannot lock", errno));
    if (++tries >= kLockTries)
      return core::fail(core::Errc::io_error, what + " " + path.string() + ": locked by another process for 2 s");
    const timespec pause{0, kLockPauseNs};
    nanosleep(&pause, nullptr);
  }
  return lock;
}

core::Result<std::string> read_text(const std::filesystem::path& path, const std::string& what) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    if (ec) return core::fail(core::Errc::io_error, what + " " + path.string() + ": " + ec.message());
    return std::string{};
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return tl::make_unexpected(io_failure(what, path, "cannot open", errno));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace weir::ledger::detail
