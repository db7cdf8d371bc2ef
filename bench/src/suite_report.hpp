#pragma once
// Options, "at least" targets and extra per-line fields of the vectors and channels suites, on top
// of the harness's rows and comparisons. Private to bench/.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "harness.hpp"

namespace weir::bench {

inline constexpr std::string_view kUnitMsPerQuery = "ms/query";  // one search's wall time
inline constexpr std::string_view kUnitMsPerPass = "ms/pass";    // one read of every byte a search reads
inline constexpr std::string_view kUnitMBps = "MB/s";            // 10^6 bytes per second
inline constexpr std::string_view kUnitBlocksPerS = "blocks/s";  // blocks published (or moved) per second
inline constexpr std::string_view kUnitBlocks = "blocks";        // a count of blocks per repetition

/// Parses [--json] [--reps N | --reps=N] [--quick] [--help] as `weir bench kv` does. args[0] is the
/// suite's name and is skipped unless it starts with '-'. Returns the config, or nullopt with
/// exit_code set: kExitOk after --help (usage on stdout), kExitUsage otherwise (usage on stderr).
[[nodiscard]] std::optional<Config> parse_suite_options(const std::vector<std::string>& args, const char* usage,
                                                        int& exit_code);

/// A line whose ratio to its baseline's median must be at least `limit` (rates: higher is better).
/// limit 0: baseline and ratio only, no target.
struct AtLeast {
  std::string name;
  std::string baseline;
  double limit;
};

/// A row of `values` (rates, times: the row's unit) summarised: median, min, max.
[[nodiscard]] Row make_row(std::string name, std::string_view unit, std::vector<double> values);

/// Fills in baseline, ratio, target (">=0.7") and pass; missing rows or baselines are skipped.
void compare_at_least(Results& results, std::span<const AtLeast> comparisons);

/// A field a line carries beside the harness's: its JSON key and its value as JSON text.
struct Field {
  std::string key;
  std::string json;
};

/// Extra fields by line name: appended to the line's JSON object, listed under the table.
class Fields {
 public:
  void add(std::string_view row, std::string key, double value, int decimals);
  void add(std::string_view row, std::string key, std::uint64_t value);
  void add_bool(std::string_view row, std::string key, bool value);
  /// text: ASCII without quotes, backslashes or control characters (no escaping is done).
  void add_text(std::string_view row, std::string key, std::string_view text);
  [[nodiscard]] const std::vector<Field>* of(std::string_view row) const noexcept;

 private:
  std::vector<Field>& row_fields(std::string_view row);
  std::vector<std::pair<std::string, std::vector<Field>>> rows_;
};

/// JSON: one object per line, the harness's fields in its order, then the line's extra fields.
/// Table: the harness's table under `title`, then one line of extra fields per line that has any.
void print_report(const std::vector<Row>& rows, const Fields& fields, bool json, std::string_view title);

}  // namespace weir::bench
