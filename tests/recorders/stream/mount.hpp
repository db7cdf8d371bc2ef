#pragma once
// A mount made for one test (tmpfs, or an XFS on a loop device), taken down however the test ends,
// and SKIP_UNLESS: where mounts are not allowed the case says why and ends.
#include <sys/mount.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "process.hpp"

namespace weir::test {

/// A tmpfs or a loop-mounted XFS at a path; detached when destroyed.
class Mount {
 public:
  static Mount tmpfs(const std::filesystem::path& at, const char* options) {
    Mount m(at);
    m.mounted_ = ::mount("tmpfs", at.c_str(), "tmpfs", 0, options) == 0;
    if (!m.mounted_) m.why_ = std::string("mount tmpfs: ") + std::strerror(errno);
    return m;
  }
  // A sparse 320 MiB image (XFS's smallest), a loop device, mkfs.xfs, mount.
  static Mount xfs(const std::filesystem::path& at, const std::filesystem::path& image) {
    Mount m(at);
    m.image_ = image;
    for (const char* tool : {"/usr/sbin/mkfs.xfs", "/usr/sbin/xfs_io", "/usr/sbin/losetup"})
      if (!std::filesystem::exists(tool)) {
        m.why_ = std::string(tool) + " is not installed";
        return m;
      }
    std::ofstream(image).close();
    std::filesystem::resize_file(image, 320ULL << 20);
    const Exit mkfs = run_program({"/usr/sbin/mkfs.xfs", "-q", image.string()});
    if (mkfs.code != 0) {
      m.why_ = "mkfs.xfs: " + mkfs.err;
      return m;
    }
    const Exit mounted = run_program({"/usr/bin/mount", "-o", "loop", image.string(), at.string()});
    if (mounted.code != 0) {
      m.why_ = "mount -o loop: " + mounted.err;
      return m;
    }
    m.mounted_ = true;
    return m;
  }
  Mount(Mount&& other) noexcept
      : at_(std::move(other.at_)), image_(std::move(other.image_)), mounted_(other.mounted_), why_(std::move(other.why_)) {
    other.mounted_ = false;
  }
  Mount& operator=(Mount&&) = delete;
  ~Mount() { unmount(); }
  void unmount() {
    if (mounted_) ::umount2(at_.c_str(), MNT_DETACH);  // a loop mount frees its device when detached
    mounted_ = false;
  }
  // Mounts the same image again (after a shutdown): what survived.
  bool remount() {
    unmount();
    mounted_ = run_program({"/usr/bin/mount", "-o", "loop", image_.string(), at_.string()}).code == 0;
    return mounted_;
  }
  [[nodiscard]] bool mounted() const { return mounted_; }
  [[nodiscard]] const std::string& why() const { return why_; }

 private:
  explicit Mount(const std::filesystem::path& at) : at_(at) { std::filesystem::create_directories(at); }
  std::filesystem::path at_, image_;
  bool mounted_ = false;
  std::string why_;
};

// SKIP loudly: the reason in the output, and the case ends.
#define SKIP_UNLESS(mount)                                                           \
  if (!(mount).mounted()) {                                                          \
    MESSAGE("SKIPPED (cannot run this fault here): " << (mount).why());             \
    return;                                                                          \
  }

}  // namespace weir::test
