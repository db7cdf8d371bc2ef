// Finding the weir executable beside weir_bench (weir_exe.hpp).
#include "weir_exe.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace weir::bench {

namespace {

namespace fs = std::filesystem;

bool executable_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

// `p` absolute and without . and .. parts (the file itself need not exist).
std::string absolute_path(const fs::path& p) {
  std::error_code ec;
  const fs::path abs = fs::absolute(p, ec);
  return (ec ? p : abs).lexically_normal().string();
}

}  // namespace

WeirExe find_weir_exe(std::string_view given) {
  WeirExe found;
  const auto pick = [&found](const fs::path& candidate, std::string_view how) {
    found.looked_for += (found.looked_for.empty() ? "" : ", ") + std::string(how) + absolute_path(candidate);
    if (!executable_file(candidate)) return false;
    found.path = absolute_path(candidate);
    return true;
  };
  if (!given.empty()) {
    pick(fs::path(given), "--weir ");
    return found;
  }
  if (const char* env = std::getenv("WEIR_CLI"); env != nullptr && *env != '\0') {
    pick(fs::path(env), "$WEIR_CLI=");
    return found;
  }
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) {
    found.looked_for = "/proc/self/exe (unreadable: " + ec.message() + ")";
    return found;
  }
  const fs::path dir = self.parent_path();
  if (!pick(dir / "weir", "")) pick(dir / ".." / "tools" / "weir", "");
  return found;
}

void add_plugin_dir_of(const WeirExe& weir) {
  if (weir.path.empty()) return;
  const std::string dir = fs::path(weir.path).parent_path().string();
  const char* now = std::getenv("WEIR_SHARD_PATH");
  const std::string value = now == nullptr || *now == '\0' ? dir : std::string(now) + ":" + dir;
  ::setenv("WEIR_SHARD_PATH", value.c_str(), 1);
}

}  // namespace weir::bench
