// Wisdom files are written to a temporary name and renamed, so a reader (another process
// importing at the same moment) sees the old file or the new one, never half of one.
#include "weir/dsp/wisdom.hpp"

#include <fftw3.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <system_error>

#include "fftw_lock.hpp"
#include "weir/dsp/spectral_limits.hpp"

namespace weir::dsp {

core::Result<std::string> default_wisdom_path() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/weir/" + kWisdomFileName;
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] != '\0') return std::string(home) + "/.cache/weir/" + kWisdomFileName;
  return core::fail(core::Errc::invalid_argument,
                    "fftw wisdom: neither XDG_CACHE_HOME (absolute) nor HOME is set; give a wisdom path");
}

bool import_wisdom(const std::string& path) noexcept {
  if (path.empty()) return false;
  const std::lock_guard lock(detail::fftw_planner_mutex());
  return fftwf_import_wisdom_from_filename(path.c_str()) != 0;
}

core::Result<void> export_wisdom(const std::string& path) {
  const std::filesystem::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) {
    std::filesystem::create_directories(target.parent_path(), ec);
    if (ec)
      return core::fail(core::Errc::io_error,
                        "fftw wisdom " + path + ": create directory " + target.parent_path().string() + ": " +
                            ec.message());
  }
  static std::atomic<unsigned> serial{0};  // two threads exporting at once must not share a temp file
  const std::string temp =
      path + ".tmp." + std::to_string(getpid()) + "." + std::to_string(serial.fetch_add(1, std::memory_order_relaxed));
  int written = 0;
  {
    const std::lock_guard lock(detail::fftw_planner_mutex());
    written = fftwf_export_wisdom_to_filename(temp.c_str());
  }
  if (written == 0) {
    std::filesystem::remove(temp, ec);
    return core::fail(core::Errc::io_error, "fftw wisdom " + path + ": cannot write " + temp);
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    std::error_code ignored;
    const std::error_code why(errno, std::generic_category());
    std::filesystem::remove(temp, ignored);
    return core::fail(core::Errc::io_error, "fftw wisdom " + path + ": rename " + temp + ": " + why.message());
  }
  return {};
}

}  // namespace weir::dsp
