// Segment file names: composing them and finding the ones already there.
#include "weir/recorder/naming.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <system_error>

namespace weir::rec {
namespace {

constexpr std::string_view kSuffix = ".h5";
constexpr std::string_view kRunTag = "_run";
constexpr int kRunDigits = 6;
constexpr int kSegmentDigits = 4;

// A run of decimal digits, whole: "000012" -> 12. False for empty, non-digits or overflow.
bool parse_number(std::string_view text, std::uint64_t& out) {
  if (text.empty() || !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size();
}

std::string padded(std::uint64_t n, int digits) {
  char text[32];
  std::snprintf(text, sizeof text, "%0*llu", digits, static_cast<unsigned long long>(n));
  return text;
}

// "<arena>_run<RUN>_<SEG>.h5": the last "_run" splits the arena from the numbers, so arena names
// that contain "_run" themselves still parse.
bool parse_dir_name(std::string_view name, SegmentName& out) {
  if (!name.ends_with(kSuffix)) return false;
  name.remove_suffix(kSuffix.size());
  const std::size_t run_at = name.rfind(kRunTag);
  if (run_at == std::string_view::npos || run_at == 0) return false;
  const std::string_view numbers = name.substr(run_at + kRunTag.size());
  const std::size_t sep = numbers.find('_');
  if (sep == std::string_view::npos) return false;
  if (!parse_number(numbers.substr(0, sep), out.run) || !parse_number(numbers.substr(sep + 1), out.number))
    return false;
  out.arena = std::string(name.substr(0, run_at));
  return true;
}

bool parse_file_name(std::string_view name, std::string_view stem, SegmentName& out) {
  if (!name.ends_with(kSuffix) || name.substr(0, stem.size()) != stem) return false;
  name.remove_suffix(kSuffix.size());
  const std::string_view rest = name.substr(stem.size());
  if (rest.empty()) {
    out.number = 0;
    return true;
  }
  return rest.size() > 1 && rest[0] == '_' && parse_number(rest.substr(1), out.number) && out.number > 0;
}

}  // namespace

OutTarget parse_out(std::string_view out) {
  OutTarget target;
  const std::filesystem::path path{std::string(out)};
  if (out.ends_with(kSuffix)) {
    target.is_dir = false;
    target.dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
    const std::string name = path.filename().string();
    target.stem = name.substr(0, name.size() - kSuffix.size());
  } else {
    target.dir = path;
  }
  return target;
}

std::filesystem::path segment_path(const OutTarget& target, std::string_view arena, std::uint64_t run,
                                   std::uint64_t number) {
  if (!target.is_dir)
    return target.dir / (number == 0 ? target.stem + std::string(kSuffix)
                                     : target.stem + "_" + padded(number, kSegmentDigits) + std::string(kSuffix));
  return target.dir / (std::string(arena) + std::string(kRunTag) + padded(run, kRunDigits) + "_" +
                       padded(number, kSegmentDigits) + std::string(kSuffix));
}

std::filesystem::path partial_path(const std::filesystem::path& final_name) {
  std::filesystem::path p = final_name;
  p += std::string(kPartialSuffix);
  return p;
}

std::filesystem::path final_path(const SegmentName& segment) {
  if (!segment.partial) return segment.path;
  const std::string name = segment.path.filename().string();
  return segment.path.parent_path() / name.substr(0, name.size() - kPartialSuffix.size());
}

std::vector<SegmentName> existing_segments(const OutTarget& target) {
  std::vector<SegmentName> found;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(target.dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    SegmentName s;
    s.path = it->path();
    std::string name = s.path.filename().string();
    if (name.ends_with(kPartialSuffix)) {
      s.partial = true;
      name.resize(name.size() - kPartialSuffix.size());
    }
    if (target.is_dir ? parse_dir_name(name, s) : parse_file_name(name, target.stem, s)) found.push_back(std::move(s));
  }
  std::sort(found.begin(), found.end(), [](const SegmentName& a, const SegmentName& b) {
    return a.run != b.run ? a.run < b.run : a.number != b.number ? a.number < b.number : a.partial < b.partial;
  });
  return found;
}

}  // namespace weir::rec
