#include "harness.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <string>

namespace weir::bench {

Stats summarize(std::vector<double> per_op_ns) {
  Stats stats;
  stats.reps = static_cast<int>(per_op_ns.size());
  std::sort(per_op_ns.begin(), per_op_ns.end());
  const std::size_t n = per_op_ns.size();
  stats.min_ns = per_op_ns.front();
  stats.max_ns = per_op_ns.back();
  stats.median_ns = n % 2 == 1 ? per_op_ns[n / 2] : (per_op_ns[n / 2 - 1] + per_op_ns[n / 2]) / 2;
  return stats;
}

std::int64_t percentile(std::span<const std::int64_t> sorted, double q) noexcept {
  const double rank = std::ceil(q * static_cast<double>(sorted.size()));  // 1-based
  const std::size_t i = rank < 1.0 ? 0 : static_cast<std::size_t>(rank) - 1;
  return sorted[std::min(i, sorted.size() - 1)];
}

double clock_read_ns() {
  std::vector<double> batches;
  for (int b = 0; b < kClockBatches; ++b) {
    const std::int64_t start_ns = core::monotonic_ns();
    std::int64_t last_ns = start_ns;
    for (int i = 0; i < kClockBatchCalls; ++i) last_ns = core::monotonic_ns();
    batches.push_back(static_cast<double>(last_ns - start_ns) / kClockBatchCalls);
  }
  return summarize(std::move(batches)).median_ns;
}

void Results::add(std::string name, const Measured& m, std::string_view what) {
  if (m.failures != 0) note_failures(name, m.failures, m.calls, what);
  Row row;
  row.name = std::move(name);
  row.stats = m.stats;
  rows_.push_back(std::move(row));
}

void Results::add_paired(std::string name, std::string_view baseline, const Paired& p, std::string_view what) {
  if (p.baseline.failures != 0)
    note_failures(std::string(baseline) + " (paired)", p.baseline.failures, p.baseline.calls, "busy");
  add(std::move(name), p.subject, what);
  rows_.back().paired_ratio = p.ratio;
  rows_.back().paired_with = std::string(baseline);
}

void Results::note_failures(std::string_view name, std::uint64_t count, std::uint64_t calls, std::string_view what) {
  failures_ += count;
  std::fprintf(stderr, "weir bench: %.*s: %" PRIu64 " of %" PRIu64 " calls failed (last: %.*s)\n",
               static_cast<int>(name.size()), name.data(), count, calls, static_cast<int>(what.size()), what.data());
}

void Results::note_error(std::string_view name, std::string_view what) {
  ++failures_;
  std::fprintf(stderr, "weir bench: %.*s: %.*s\n", static_cast<int>(name.size()), name.data(),
               static_cast<int>(what.size()), what.data());
}

const Row* Results::find(std::string_view name) const noexcept {
  for (const Row& row : rows_)
    if (row.name == name) return &row;
  return nullptr;
}

bool run_in_arena(const std::string& name, core::ArenaOptions options,
                  const std::function<void(core::Arena&)>& cases) {
  options.replace_stale = true;  // a crashed earlier run of the same pid left it behind
  auto arena = core::Arena::create(name, options);
  if (!arena) {
    std::fprintf(stderr, "weir bench: create arena '%s': %s\n", name.c_str(), arena.error().what.c_str());
    return false;
  }
  bool ok = true;
  try {
    cases(*arena);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "weir bench: aborted: %s\n", e.what());
    ok = false;
  }
  arena->close();
  if (auto removed = core::Arena::remove(name); !removed) {
    std::fprintf(stderr, "weir bench: remove arena '%s': %s\n", name.c_str(), removed.error().what.c_str());
    ok = false;
  }
  return ok;
}

int exit_status(const Results& results) {
  if (results.failures() == 0) return kExitOk;
  std::fprintf(stderr, "weir bench: %llu failed calls or set-ups: the numbers printed are not trustworthy\n",
               static_cast<unsigned long long>(results.failures()));
  return kExitFailed;
}

void warn_if_unoptimised() {
#ifndef __OPTIMIZE__
  std::fputs("weir bench: built without optimisation; these numbers mean little\n", stderr);
#endif
}

// JSON has no NaN or infinity; a non-finite number would be a harness bug, so it prints as null.
std::string json_number(double v, int decimals) {
  if (!std::isfinite(v)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

namespace {

std::string number(double v, int decimals) { return json_number(v, decimals); }

constexpr int kNsDecimals = 2;        // ns/op printed to 10 ps: below the noise, above rounding
constexpr int kRatioDecimals = 3;
constexpr int kFractionDecimals = 6;
constexpr std::size_t kAlignedColumns = 8;  // all but the last (note) column are padded

std::string row_note(const Row& row) {
  char buf[64];
  if (row.paired_ratio && row.ratio) {
    std::snprintf(buf, sizeof buf, "paired, ratio %.3f-%.3f", row.paired_ratio->min_ns, row.paired_ratio->max_ns);
    return buf;
  }
  if (row.busy_fraction) {
    std::snprintf(buf, sizeof buf, "busy %.3f%%", *row.busy_fraction * 100.0);
    return buf;
  }
  if (row.wake_fraction) {
    std::snprintf(buf, sizeof buf, "woke %.1f%%", *row.wake_fraction * 100.0);
    return buf;
  }
  return {};
}

// "<=1.5", "<30ns". (snprintf, not "<=" + std::string: GCC 12 -O3 warns falsely on that.)
std::string format_target(const char* op, double limit, const char* unit) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s%g%s", op, limit, unit);
  return buf;
}

}  // namespace

void compare(Results& results, std::span<const Comparison> comparisons) {
  for (const Comparison& c : comparisons) {
    Row* row = nullptr;
    for (Row& r : results.rows())
      if (r.name == c.name) row = &r;
    const Row* base = results.find(c.baseline);
    if (row == nullptr) continue;  // a case that could not run was reported on stderr
    if (row->paired_ratio && row->paired_with == c.baseline)
      row->ratio = row->paired_ratio->median_ns;
    else if (base != nullptr && base->stats.median_ns > 0)
      row->ratio = row->stats.median_ns / base->stats.median_ns;
    if (row->ratio) row->baseline = std::string(c.baseline);
    switch (c.goal) {
      case Goal::none: break;
      case Goal::ratio_at_most:
        if (!row->ratio) break;
        row->target = format_target("<=", c.limit, "");
        row->pass = *row->ratio <= c.limit;
        break;
      case Goal::below_ns:
        row->target = format_target("<", c.limit, "ns");
        row->pass = row->stats.median_ns < c.limit;
        break;
    }
  }
}

json::JsonObject row_json(const Row& row) {
  json::JsonObject o;
  o.text("name", row.name).text("unit", row.unit);
  o.raw("median", number(row.stats.median_ns, kNsDecimals));
  o.raw("min", number(row.stats.min_ns, kNsDecimals));
  o.raw("max", number(row.stats.max_ns, kNsDecimals));
  o.number("reps", row.stats.reps);
  if (!row.baseline.empty() && row.ratio) {
    o.text("baseline", row.baseline).raw("ratio", number(*row.ratio, kRatioDecimals));
    if (row.paired_ratio) {
      o.boolean("paired", true);
      o.raw("ratio_min", number(row.paired_ratio->min_ns, kRatioDecimals));
      o.raw("ratio_max", number(row.paired_ratio->max_ns, kRatioDecimals));
    }
  }
  if (!row.target.empty() && row.pass) o.text("target", row.target).boolean("pass", *row.pass);
  if (row.busy_fraction) o.raw("busy_fraction", number(*row.busy_fraction, kFractionDecimals));
  if (row.wake_fraction) o.raw("wake_fraction", number(*row.wake_fraction, kFractionDecimals));
  return o;
}

void print_json(const std::vector<Row>& rows) {
  for (const Row& row : rows) std::puts(row_json(row).str().c_str());
  std::fflush(stdout);
}

void print_table(const std::vector<Row>& rows, std::string_view title) {
  struct Cells {
    std::string name, unit, median, min, max, baseline, ratio, target, note;
  };
  bool mixed_units = false;
  for (const Row& row : rows) mixed_units = mixed_units || row.unit != rows.front().unit;
  std::vector<Cells> table;
  table.push_back({"name", "unit", "median", "min", "max", "baseline", "ratio", "target", "note"});
  for (const Row& row : rows) {
    Cells c{row.name,
            std::string(row.unit),
            number(row.stats.median_ns, kNsDecimals),
            number(row.stats.min_ns, kNsDecimals),
            number(row.stats.max_ns, kNsDecimals),
            row.ratio ? row.baseline : std::string("-"),
            row.ratio ? number(*row.ratio, kRatioDecimals) : std::string("-"),
            "-",
            row_note(row)};
    if (!row.target.empty() && row.pass) c.target = row.target + (*row.pass ? " PASS" : " MISS");
    table.push_back(std::move(c));
  }
  std::size_t w[kAlignedColumns] = {};
  for (const Cells& c : table) {
    const std::string* cols[kAlignedColumns] = {&c.name, &c.unit,     &c.median, &c.min,
                                                &c.max,  &c.baseline, &c.ratio,  &c.target};
    for (std::size_t i = 0; i < kAlignedColumns; ++i) w[i] = std::max(w[i], cols[i]->size());
  }
  std::printf("%.*s\n", static_cast<int>(title.size()), title.data());
  for (const Cells& c : table) {
    // Text columns align left, numbers right.
    std::string line = c.name + std::string(w[0] - c.name.size() + 2, ' ');
    if (mixed_units) line += c.unit + std::string(w[1] - c.unit.size() + 2, ' ');
    line += std::string(w[2] - c.median.size(), ' ') + c.median + "  ";
    line += std::string(w[3] - c.min.size(), ' ') + c.min + "  ";
    line += std::string(w[4] - c.max.size(), ' ') + c.max + "  ";
    line += c.baseline + std::string(w[5] - c.baseline.size() + 2, ' ');
    line += std::string(w[6] - c.ratio.size(), ' ') + c.ratio + "  ";
    line += c.target;
    if (!c.note.empty()) line += std::string(w[7] - c.target.size() + 2, ' ') + c.note;
    std::puts(line.c_str());
  }
  std::fflush(stdout);
}

}  // namespace weir::bench
