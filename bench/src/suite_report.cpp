#include "suite_report.hpp"

#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdio>

namespace weir::bench {

namespace {

std::optional<int> parse_reps(std::string_view text) {
  int reps = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), reps);
  if (ec != std::errc{} || end != text.data() + text.size() || reps < 1 || reps > kMaxReps) return std::nullopt;
  return reps;
}

std::string format_at_least(double limit) {
  char buf[32];
  std::snprintf(buf, sizeof buf, ">=%g", limit);
  return buf;
}

}  // namespace

std::optional<Config> parse_suite_options(const std::vector<std::string>& args, const char* usage, int& exit_code) {
  exit_code = kExitUsage;
  Config config;
  const std::size_t first = !args.empty() && !args[0].starts_with("-") ? 1 : 0;
  for (std::size_t i = first; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    std::optional<std::string_view> reps_text;
    if (arg == "--json") {
      config.json = true;
    } else if (arg == "--quick") {
      config.quick = true;
    } else if (arg == "--help" || arg == "-h") {
      std::fputs(usage, stdout);
      exit_code = kExitOk;
      return std::nullopt;
    } else if (arg == "--reps" && i + 1 < args.size()) {
      reps_text = args[++i];
    } else if (arg.starts_with("--reps=")) {
      reps_text = arg.substr(std::string_view("--reps=").size());
    } else {
      std::fprintf(stderr, "weir bench: unknown or incomplete option '%.*s'\n%s", static_cast<int>(arg.size()),
                   arg.data(), usage);
      return std::nullopt;
    }
    if (reps_text) {
      const auto reps = parse_reps(*reps_text);
      if (!reps) {
        std::fprintf(stderr, "weir bench: --reps wants a whole number from 1 to %d\n", kMaxReps);
        return std::nullopt;
      }
      config.reps = *reps;
    }
  }
  return config;
}

Row make_row(std::string name, std::string_view unit, std::vector<double> values) {
  Row row;
  row.name = std::move(name);
  row.unit = unit;
  row.stats = summarize(std::move(values));
  return row;
}

void compare_at_least(Results& results, std::span<const AtLeast> comparisons) {
  for (const AtLeast& c : comparisons) {
    Row* row = nullptr;
    for (Row& r : results.rows())
      if (r.name == c.name) row = &r;
    const Row* base = results.find(c.baseline);
    if (row == nullptr || base == nullptr || base->stats.median_ns <= 0) continue;  // reported already
    row->baseline = c.baseline;
    row->ratio = row->stats.median_ns / base->stats.median_ns;
    if (c.limit <= 0) continue;
    row->target = format_at_least(c.limit);
    row->pass = *row->ratio >= c.limit;
  }
}

std::vector<Field>& Fields::row_fields(std::string_view row) {
  for (auto& [name, fields] : rows_)
    if (name == row) return fields;
  rows_.emplace_back(std::string(row), std::vector<Field>{});
  return rows_.back().second;
}

void Fields::add(std::string_view row, std::string key, double value, int decimals) {
  row_fields(row).push_back({std::move(key), json_number(value, decimals)});
}

void Fields::add(std::string_view row, std::string key, std::uint64_t value) {
  row_fields(row).push_back({std::move(key), std::to_string(value)});
}

void Fields::add_bool(std::string_view row, std::string key, bool value) {
  row_fields(row).push_back({std::move(key), value ? "true" : "false"});
}

void Fields::add_text(std::string_view row, std::string key, std::string_view text) {
  row_fields(row).push_back({std::move(key), json::json_quote(text)});
}

const std::vector<Field>* Fields::of(std::string_view row) const noexcept {
  for (const auto& [name, fields] : rows_)
    if (name == row) return &fields;
  return nullptr;
}

void print_report(const std::vector<Row>& rows, const Fields& fields, bool json, std::string_view title) {
  if (!json) {
    print_table(rows, title);
    for (const Row& row : rows) {
      const std::vector<Field>* extra = fields.of(row.name);
      if (extra == nullptr || extra->empty()) continue;
      std::string line = "  " + row.name + ":";
      for (const Field& f : *extra) line += " " + f.key + "=" + f.json;
      std::puts(line.c_str());
    }
    std::fflush(stdout);
    return;
  }
  // The harness's JSON object, with the suite's extras after its fields.
  for (const Row& row : rows) {
    json::JsonObject o = row_json(row);
    if (const std::vector<Field>* extra = fields.of(row.name))
      for (const Field& f : *extra) o.raw(f.key, f.json);
    std::puts(o.str().c_str());
  }
  std::fflush(stdout);
}

}  // namespace weir::bench
