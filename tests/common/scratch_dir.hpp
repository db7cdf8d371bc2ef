#pragma once
// A fresh directory under /tmp for one test's files, removed with everything in it however the
// test ends, and reading a file back whole.
#include <doctest/doctest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

namespace weir::test {

class ScratchDir {
 public:
  explicit ScratchDir(std::string_view tag) {
    static std::atomic<int> serial{0};
    path_ = std::filesystem::temp_directory_path() /
            ("weir-" + std::string(tag) + "-" + std::to_string(getpid()) + "-" + std::to_string(serial++));
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
    REQUIRE(std::filesystem::create_directories(path_));
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  /// The path of `name` inside the directory.
  [[nodiscard]] std::string file(std::string_view name) const { return (path_ / name).string(); }
  [[nodiscard]] std::string str() const { return path_.string(); }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

/// The whole content of a file, as bytes; empty when it cannot be read.
inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace weir::test
