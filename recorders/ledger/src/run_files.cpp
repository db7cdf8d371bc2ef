// Run file names, parsed: the recorder's own naming (recorders/stream naming.cpp), read back
// without depending on the recorder.
#include "run_files.hpp"

#include <algorithm>
#include <charconv>
#include <string_view>
#include <system_error>
#include <tuple>

#include "weir/ledger/run_record.hpp"

namespace weir::ledger::detail {

namespace {

constexpr std::string_view kH5 = ".h5";
constexpr std::string_view kRunTag = "_run";
constexpr std::string_view kPartial = ".partial";  // the recorder's NAME.partial (recorders/stream naming.hpp)

// A run of decimal digits, whole. False for empty, non-digits or overflow.
bool parse_number(std::string_view text, std::uint64_t& out) {
  if (text.empty() || !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size();
}

// "<prefix>_run<RUN>" + tail: the last "_run" splits the prefix (which may contain "_run") off.
bool split_run(std::string_view name, std::string& prefix, std::string_view& numbers) {
  const std::size_t at = name.rfind(kRunTag);
  if (at == std::string_view::npos || at == 0) return false;
  prefix = std::string(name.substr(0, at));
  numbers = name.substr(at + kRunTag.size());
  return true;
}

// <prefix>_run<RUN>.ledger.json
bool parse_record_name(std::string_view name, RunFile& out) {
  const std::string_view suffix = kRunRecordSuffix;
  if (!name.ends_with(suffix)) return false;
  name.remove_suffix(suffix.size());
  std::string_view numbers;
  return split_run(name, out.arena, numbers) && parse_number(numbers, out.run);
}

// <arena>_run<RUN>_<SEG>.h5
bool parse_dir_name(std::string_view name, RunFile& out) {
  if (!name.ends_with(kH5)) return false;
  name.remove_suffix(kH5.size());
  std::string_view numbers;
  if (!split_run(name, out.arena, numbers)) return false;
  const std::size_t sep = numbers.find('_');
  return sep != std::string_view::npos && parse_number(numbers.substr(0, sep), out.run) &&
         parse_number(numbers.substr(sep + 1), out.segment);
}

// stem.h5 (segment 0) or stem_NNNN.h5 (NNNN > 0)
bool parse_file_name(std::string_view name, std::string_view stem, RunFile& out) {
  if (!name.ends_with(kH5) || !name.starts_with(stem)) return false;
  name.remove_suffix(kH5.size());
  const std::string_view rest = name.substr(stem.size());
  if (rest.empty()) return true;
  return rest.size() > 1 && rest[0] == '_' && parse_number(rest.substr(1), out.segment) && out.segment > 0;
}

}  // namespace

RunPlace run_place(const std::filesystem::path& where) {
  RunPlace place;
  std::error_code ec;
  const std::string name = where.filename().string();
  if (!std::filesystem::is_directory(where, ec) && name.size() > kH5.size() && name.ends_with(kH5)) {
    place.file_form = true;
    place.dir = where.has_parent_path() ? where.parent_path() : std::filesystem::path(".");
    place.stem = name.substr(0, name.size() - kH5.size());
  } else {
    place.dir = where;
  }
  return place;
}

std::vector<RunFile> list_run_files(const RunPlace& place) {
  std::vector<RunFile> found;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(place.dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    if (!it->is_regular_file(type_ec)) continue;
    RunFile f;
    f.path = it->path();
    std::string name = f.path.filename().string();
    if (name.ends_with(kPartial) && name.size() > kPartial.size() + kH5.size()) {
      f.partial = true;
      name.resize(name.size() - kPartial.size());
      if (!name.ends_with(kH5)) continue;
    }
    if (!f.partial && parse_record_name(name, f)) {
      f.record = true;
      if (place.file_form && f.arena != place.stem) continue;
      if (place.file_form) f.arena.clear();
      found.push_back(std::move(f));
    } else if (place.file_form ? parse_file_name(name, place.stem, f) : parse_dir_name(name, f)) {
      f.run_known = !place.file_form;
      found.push_back(std::move(f));
    }
  }
  std::sort(found.begin(), found.end(), [](const RunFile& a, const RunFile& b) {
    return std::tie(a.arena, a.run, a.segment, a.record) < std::tie(b.arena, b.run, b.segment, b.record);
  });
  return found;
}

std::vector<RunFile> list_manifests(const RunPlace& place, std::string_view suffix) {
  std::vector<RunFile> found;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(place.dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    if (!it->is_regular_file(type_ec)) continue;
    const std::string name = it->path().filename().string();
    if (!name.ends_with(suffix)) continue;
    RunFile f;
    const std::string recording = name.substr(0, name.size() - suffix.size());
    f.path = place.dir / recording;
    if (!(place.file_form ? parse_file_name(recording, place.stem, f) : parse_dir_name(recording, f))) continue;
    f.run_known = !place.file_form;
    found.push_back(std::move(f));
  }
  std::sort(found.begin(), found.end(), [](const RunFile& a, const RunFile& b) {
    return std::tie(a.arena, a.run, a.segment) < std::tie(b.arena, b.run, b.segment);
  });
  return found;
}

}  // namespace weir::ledger::detail
