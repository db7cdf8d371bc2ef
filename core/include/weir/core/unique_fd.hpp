#pragma once
// A file descriptor owned by one object and closed when it is destroyed or reset: what every module
// that opens sockets, pipes or files with the POSIX calls holds them in.
#include <unistd.h>

#include <utility>

namespace weir::core {

class UniqueFd {
 public:
  UniqueFd() noexcept = default;
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  [[nodiscard]] int get() const noexcept { return fd_; }
  /// Closes the descriptor now (if any); get() is -1 afterwards.
  void reset() noexcept {
    if (fd_ >= 0) (void)::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

}  // namespace weir::core
