#include "weir/tools/output.hpp"

#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <ctime>

#include <unistd.h>

#include <fmt/chrono.h>
#include <fmt/format.h>

namespace weir::tools {
namespace {

constexpr std::uint64_t kNsPerSecond = 1'000'000'000;
constexpr std::uint64_t kNsPerMilli = 1'000'000;
constexpr std::uint64_t kBytesPerUnit = 1024;             // binary prefixes: KiB, MiB, ...
constexpr std::array<std::string_view, 6> kByteUnits = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};

}  // namespace


void print_json(const JsonObject& object) { fmt::print("{}\n", object.str()); }

void print_error(std::string_view message) {
  print_unless_closed([&] { fmt::print(stderr, "weir: {}\n", message); });
}

bool is_closed_pipe(const std::system_error& error) noexcept { return error.code().value() == EPIPE; }

std::string iso8601_utc(std::uint64_t epoch_ns) {
  const auto seconds = static_cast<std::time_t>(epoch_ns / kNsPerSecond);
  const std::uint64_t millis = (epoch_ns % kNsPerSecond) / kNsPerMilli;
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:03}Z", fmt::gmtime(seconds), millis);
}

std::string human_bytes(std::uint64_t bytes) {
  if (bytes < kBytesPerUnit) return fmt::format("{} {}", bytes, kByteUnits[0]);
  auto scaled = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (scaled >= static_cast<double>(kBytesPerUnit) && unit + 1 < kByteUnits.size()) {
    scaled /= static_cast<double>(kBytesPerUnit);
    ++unit;
  }
  return fmt::format("{:.1f} {}", scaled, kByteUnits[unit]);
}

std::string octal_mode(std::uint32_t mode) { return fmt::format("{:04o}", mode); }

std::string host_name_or(std::string_view fallback) {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return std::string(fallback);
  return name;
}

}  // namespace weir::tools
