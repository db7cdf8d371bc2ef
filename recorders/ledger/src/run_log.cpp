// Run numbers and the run log of a recording directory.
#include "weir/ledger/run_log.hpp"

#include <time.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <map>
#include <system_error>

#include "durable_file.hpp"
#include "weir/ledger/audit.hpp"
#include "weir/ledger/run_record.hpp"
#include "weir/h5/attribute.hpp"

namespace weir::ledger {

namespace {

constexpr char kNumbersFormat[] = "weir-run-numbers 1";
constexpr std::string_view kHeader =
    "run,start,stop,title,operator,sample,files,blocks_written,blocks_recorded,blocks_lost,exact,ended,door,note";
constexpr std::size_t kColumns = 14;

bool parse_u64(std::string_view text, std::uint64_t& out) {
  if (text.empty()) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size();
}

// The number N of a name "<prefix>_run<N>..." (digits up to the first non-digit); 0 when it is not one.
std::uint64_t run_in_name(std::string_view name, std::string_view prefix) {
  if (name.size() <= prefix.size() + 4 || name.substr(0, prefix.size()) != prefix) return 0;
  name.remove_prefix(prefix.size());
  if (name.substr(0, 4) != "_run") return 0;
  name.remove_prefix(4);
  std::size_t n = 0;
  while (n < name.size() && name[n] >= '0' && name[n] <= '9') ++n;
  std::uint64_t run = 0;
  return parse_u64(name.substr(0, n), run) ? run : 0;
}

core::Result<std::uint64_t> read_numbers(const std::filesystem::path& path) {
  auto text = detail::read_text(path, "run numbers");
  if (!text) return tl::make_unexpected(text.error());
  if (text->empty()) return 0;
  const std::string head = std::string(kNumbersFormat) + "\nlast ";
  std::uint64_t last = 0;
  const std::size_t eol = text->find('\n', head.size());
  if (text->compare(0, head.size(), head) != 0 || eol == std::string::npos ||
      !parse_u64(std::string_view(*text).substr(head.size(), eol - head.size()), last))
    return core::fail(core::Errc::invalid_argument,
                      "run numbers " + path.string() + ": not a '" + kNumbersFormat + "' file; refusing to guess the next run number");
  return last;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// One CSV record from `text` at `at` (RFC 4180: quoted fields may hold commas, quotes and newlines).
// False at the end of the text.
bool next_record(const std::string& text, std::size_t& at, std::vector<std::string>& fields, bool& bad) {
  fields.clear();
  bad = false;
  if (at >= text.size()) return false;
  std::string field;
  bool quoted = false, was_quoted = false;
  for (; at < text.size(); ++at) {
    const char c = text[at];
    if (quoted) {
      if (c == '"' && at + 1 < text.size() && text[at + 1] == '"') {
        field += '"';
        ++at;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
      continue;
    }
    if (c == '"' && field.empty() && !was_quoted) {
      quoted = was_quoted = true;
    } else if (c == ',') {
      fields.push_back(std::move(field));
      field.clear();
      was_quoted = false;
    } else if (c == '\n') {
      ++at;
      break;
    } else if (c != '\r') {
      field += c;
    }
  }
  bad = quoted;
  fields.push_back(std::move(field));
  return true;
}

std::string to_csv(const RunLogRow& r) {
  std::string line;
  const auto add = [&line](const std::string& field) { line += (line.empty() ? "" : ",") + csv_field(field); };
  line = std::to_string(r.run);
  add(r.start_ns != 0 ? h5::iso8601_ns(static_cast<std::uint64_t>(r.start_ns)) : "");
  add(r.stop_ns != 0 ? h5::iso8601_ns(static_cast<std::uint64_t>(r.stop_ns)) : "");
  add(r.title);
  add(r.operator_name);
  add(r.sample);
  add(std::to_string(r.files));
  add(std::to_string(r.blocks_written));
  add(std::to_string(r.blocks_recorded));
  add(std::to_string(r.blocks_lost));
  add(r.exact ? "true" : "false");
  add(r.ended);
  add(r.door);
  add(r.note);
  return line + "\n";
}

}  // namespace

std::filesystem::path run_numbers_path(const std::filesystem::path& dir, std::string_view prefix) {
  return dir / (std::string(prefix) + kRunNumbersSuffix);
}

std::filesystem::path run_log_path(const std::filesystem::path& dir, std::string_view prefix) {
  return dir / (std::string(prefix) + kRunLogSuffix);
}

core::Result<std::int64_t> parse_iso_time(std::string_view text) {
  if (text.empty()) return 0;
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  char frac[16] = {};
  const std::string copy(text);
  if (copy.size() != 30 || std::sscanf(copy.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%9[0-9]Z", &y, &mo, &d, &h, &mi, &s, frac) != 7)
    return core::fail(core::Errc::invalid_argument, "'" + copy + "' is not a time like 2026-12-06T05:12:00.123456789Z");
  tm utc{};
  utc.tm_year = y - 1900;
  utc.tm_mon = mo - 1;
  utc.tm_mday = d;
  utc.tm_hour = h;
  utc.tm_min = mi;
  utc.tm_sec = s;
  const time_t seconds = timegm(&utc);
  return static_cast<std::int64_t>(seconds) * 1'000'000'000 + std::atoll(frac);
}

std::string_view run_log_header() noexcept { return kHeader; }

core::Result<std::uint64_t> highest_run(const std::filesystem::path& dir, std::string_view prefix) {
  auto last = read_numbers(run_numbers_path(dir, prefix));
  if (!last) return tl::make_unexpected(last.error());
  std::uint64_t highest = *last;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    highest = std::max(highest, run_in_name(it->path().filename().string(), prefix));
  if (auto rows = read_run_log(run_log_path(dir, prefix)); rows)
    for (const RunLogRow& r : *rows) highest = std::max(highest, r.run);
  return highest;
}

core::Result<std::uint64_t> allocate_run_number(const std::filesystem::path& dir, std::string_view prefix,
                                                std::uint64_t wanted, std::uint64_t floor) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return core::fail(core::Errc::io_error, "run numbers: cannot create " + dir.string() + ": " + ec.message());
  const std::filesystem::path path = run_numbers_path(dir, prefix);
  auto lock = detail::lock_file(path, "run numbers");
  if (!lock) return tl::make_unexpected(lock.error());
  auto known = highest_run(dir, prefix);
  if (!known) return tl::make_unexpected(known.error());
  const std::uint64_t highest = std::max(*known, floor);
  if (wanted != 0 && wanted <= highest)
    return core::fail(core::Errc::conflict, "run number " + std::to_string(wanted) + " refused: run numbers up to " +
                                                std::to_string(highest) + " are already used for '" +
                                                std::string(prefix) + "' in " + dir.string());
  const std::uint64_t next = wanted != 0 ? wanted : highest + 1;
  const std::string text = std::string(kNumbersFormat) + "\nlast " + std::to_string(next) + "\n";
  if (auto ok = detail::write_atomically(path, text, "run numbers"); !ok) return tl::make_unexpected(ok.error());
  return next;
}

core::Result<void> fill_from_audit(const std::filesystem::path& dir, std::string_view prefix, RunLogRow& row) {
  bool any = false;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    any = any || (run_in_name(name, prefix) == row.run && name.ends_with(".h5"));
  }
  if (!any) return {};
  auto audit = audit_run(dir, AuditOptions{row.run, std::string(prefix)});
  if (!audit) return tl::make_unexpected(audit.error());
  row.files = audit->files.size();
  row.blocks_written = row.blocks_recorded = row.blocks_lost = 0;
  for (const ChannelLedger& c : audit->channels) {
    row.blocks_written += c.written;
    row.blocks_recorded += c.recorded;
    row.blocks_lost += lost_blocks(c);
  }
  row.exact = audit->exact();
  return {};
}

std::vector<std::uint64_t> recorded_runs(const std::filesystem::path& dir, std::string_view prefix) {
  std::vector<std::uint64_t> runs;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const std::uint64_t run = run_in_name(name, prefix);
    if (run != 0 && name.ends_with(kRunRecordSuffix)) runs.push_back(run);
  }
  std::sort(runs.begin(), runs.end());
  return runs;
}

core::Result<std::vector<BetweenRuns>> between_runs(const std::filesystem::path& dir, std::string_view prefix) {
  struct Span {
    std::uint64_t run, first, end, created;
  };
  std::map<std::string, std::vector<Span>> spans;  // per channel, in run order
  for (const std::uint64_t run : recorded_runs(dir, prefix)) {
    auto record = read_run_record(run_record_path(dir, prefix, run));
    if (!record) return tl::make_unexpected(record.error());
    if (!record->has_value()) continue;
    for (const ChannelMark& m : (*record)->channels)
      spans[m.channel].push_back(Span{run, m.first_sequence, std::max(m.written, m.first_sequence), m.arena_created_ns});
  }
  std::vector<BetweenRuns> out;
  for (const auto& [channel, list] : spans)
    for (std::size_t i = 1; i < list.size(); ++i) {
      const Span& a = list[i - 1];
      const Span& b = list[i];
      if (a.created != b.created) continue;  // the arena was made anew: its sequences began again
      if (b.first < a.end)
        return core::fail(core::Errc::invalid_argument,
                          "channel '" + channel + "': run " + std::to_string(b.run) + " begins at block " +
                              std::to_string(b.first) + ", inside run " + std::to_string(a.run) + " (to " +
                              std::to_string(a.end) + "): a block in two runs");
      if (b.first > a.end) out.push_back(BetweenRuns{channel, a.run, b.run, a.end, b.first});
    }
  return out;
}

core::Result<std::vector<RunLogRow>> read_run_log(const std::filesystem::path& path) {
  auto text = detail::read_text(path, "run log");
  if (!text) return tl::make_unexpected(text.error());
  std::vector<RunLogRow> rows;
  std::size_t at = 0;
  std::vector<std::string> f;
  bool bad = false;
  int line = 0;
  while (next_record(*text, at, f, bad)) {
    ++line;
    if (line == 1) continue;  // the header
    if (f.size() == 1 && f[0].empty()) continue;
    const auto refuse = [&](const std::string& why) {
      return core::fail(core::Errc::invalid_argument, "run log " + path.string() + ": row " + std::to_string(line) + ": " + why);
    };
    if (bad || f.size() != kColumns) return refuse(std::to_string(f.size()) + " fields, not " + std::to_string(kColumns));
    RunLogRow r;
    auto start = parse_iso_time(f[1]);
    auto stop = parse_iso_time(f[2]);
    if (!parse_u64(f[0], r.run) || !start || !stop || !parse_u64(f[6], r.files) || !parse_u64(f[7], r.blocks_written) ||
        !parse_u64(f[8], r.blocks_recorded) || !parse_u64(f[9], r.blocks_lost))
      return refuse("a number or time that does not read");
    r.start_ns = *start;
    r.stop_ns = *stop;
    r.title = f[3];
    r.operator_name = f[4];
    r.sample = f[5];
    r.exact = f[10] == "true";
    r.ended = f[11];
    r.door = f[12];
    r.note = f[13];
    rows.push_back(std::move(r));
  }
  return rows;
}

core::Result<bool> add_run_log_row(const std::filesystem::path& path, const RunLogRow& row) {
  auto lock = detail::lock_file(path, "run log");
  if (!lock) return tl::make_unexpected(lock.error());
  auto rows = read_run_log(path);
  if (!rows) return tl::make_unexpected(rows.error());
  const auto there = std::find_if(rows->begin(), rows->end(), [&](const RunLogRow& r) { return r.run == row.run; });
  if (there != rows->end() && there->ended != kRunning) return false;
  if (there != rows->end()) rows->erase(there);
  rows->push_back(row);
  std::sort(rows->begin(), rows->end(), [](const RunLogRow& a, const RunLogRow& b) { return a.run < b.run; });
  std::string text = std::string(kHeader) + "\n";
  for (const RunLogRow& r : *rows) text += to_csv(r);
  if (auto ok = detail::write_atomically(path, text, "run log"); !ok) return tl::make_unexpected(ok.error());
  return true;
}

}  // namespace weir::ledger
