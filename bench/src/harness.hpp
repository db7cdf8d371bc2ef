#pragma once
// Timing, statistics and output of the benchmark. Private to bench/.
#include <chrono>
#include <functional>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "weir/core/arena.hpp"
#include "weir/json/json.hpp"
#include "weir/core/clock.hpp"

namespace weir::bench {

inline constexpr int kExitOk = 0;                           // run_bench's exit codes: done (targets missed included)
inline constexpr int kExitFailed = 1;                       // a call returned the wrong status, or set-up failed
inline constexpr int kExitUsage = 2;                        // bad arguments
inline constexpr std::uint32_t kSmallBytes = 64;            // the small value size
inline constexpr std::uint32_t kLargeBytes = 4096;          // the large value size, also the arena's value_bytes
inline constexpr std::uint32_t kArenaSlots = 4096;          // slots of the bench arena and of the bare seqlock map
inline constexpr std::uint32_t kArenaKeyBytes = 64;         // key_bytes of the bench arena
inline constexpr std::uint32_t kKeyCount = 256;             // keys (slots) each case cycles over; a power of two
inline constexpr int kDefaultReps = 5;                      // repetitions per case unless --reps says otherwise
inline constexpr int kMaxReps = 1000;                       // --reps refuses more than this
inline constexpr std::int64_t kRepTargetNs = 50'000'000;    // wall time of one repetition
inline constexpr std::int64_t kQuickDivisor = 10;           // --quick divides the repetition time by this
inline constexpr std::uint64_t kCalibrateStartOps = 1024;   // first calibration loop; covers every key
inline constexpr std::int64_t kCalibrateFraction = 10;      // calibrate until a loop takes this part of a rep
inline constexpr std::uint64_t kCalibrateGrowth = 4;        // calibration loop growth per step
inline constexpr std::uint64_t kMaxOpsPerRep = 1ULL << 34;  // guards calibration against a broken clock
inline constexpr int kClockBatches = 16;                    // clock-cost estimate: median of this many batches
inline constexpr int kClockBatchCalls = 1000;               // ... of this many back-to-back clock reads

static_assert((kKeyCount & (kKeyCount - 1)) == 0, "i % kKeyCount must stay a mask");

struct Config {
  int reps = kDefaultReps;
  bool quick = false;
  bool json = false;

  [[nodiscard]] std::int64_t rep_ns() const noexcept { return quick ? kRepTargetNs / kQuickDivisor : kRepTargetNs; }
};

/// Makes the compiler assume `value` is read (and memory written) here, so work feeding it stays.
template <class T>
inline void keep(const T& value) noexcept {
  asm volatile("" : : "r,m"(value) : "memory");
}

/// Returns value unchanged, but hides it from the optimiser: a size passed through here stays a
/// run-time size, as it is in the store, instead of becoming a constant memcpy can be unrolled for.
template <class T>
[[nodiscard]] inline T opaque(T value) noexcept {
  asm volatile("" : "+r"(value));
  return value;
}

struct Stats {
  double median_ns = 0;
  double min_ns = 0;
  double max_ns = 0;
  int reps = 0;
};

/// Median, min and max of per-repetition ns/op. Requires: at least one sample.
[[nodiscard]] Stats summarize(std::vector<double> per_op_ns);

/// The nearest-rank q-quantile (0 < q <= 1) of ascending samples: the smallest sample with at least
/// q of all samples at or below it. Requires: sorted is sorted and not empty.
[[nodiscard]] std::int64_t percentile(std::span<const std::int64_t> sorted, double q) noexcept;

/// What one core::monotonic_ns() costs here, the median of a few batches of back-to-back reads: the overhead
/// inside each `before; op; after` sample of the cases that time single calls.
[[nodiscard]] double clock_read_ns();

struct Measured {
  Stats stats;
  std::uint64_t calls = 0;     // every timed call, calibration included
  std::uint64_t failures = 0;  // calls whose op returned false
};

/// Times n calls of op(i) for i in [0, n); counts the calls that return false. Flattened, so every
/// case and its floor alike run inlined into the loop, whatever the inliner's size limits say.
template <class Op>
[[nodiscard, gnu::flatten]] std::int64_t time_loop(Op& op, std::uint64_t n, std::uint64_t& failures) noexcept {
  std::uint64_t bad = 0;
  const std::int64_t start_ns = core::monotonic_ns();
  for (std::uint64_t i = 0; i < n; ++i) bad += op(i) ? 0U : 1U;
  const std::int64_t elapsed_ns = core::monotonic_ns() - start_ns;
  failures += bad;
  return elapsed_ns;
}

/// Grows the loop length until one loop takes a tenth of config.rep_ns(), then scales it to a
/// whole repetition (the calibration doubles as warm-up). Returns the loop length; counts into m.
template <class Op>
[[nodiscard]] std::uint64_t calibrate(const Config& config, Op& op, Measured& m) noexcept {
  const std::int64_t rep_ns = config.rep_ns();
  std::uint64_t n = kCalibrateStartOps;
  for (;;) {
    const std::int64_t ns = time_loop(op, n, m.failures);
    m.calls += n;
    if (ns >= rep_ns / kCalibrateFraction || n >= kMaxOpsPerRep) {
      const double scaled = static_cast<double>(n) * static_cast<double>(rep_ns) / static_cast<double>(ns > 0 ? ns : 1);
      return scaled < static_cast<double>(kCalibrateStartOps) ? kCalibrateStartOps : static_cast<std::uint64_t>(scaled);
    }
    n *= kCalibrateGrowth;
  }
}

/// Times one repetition of n calls; returns ns per call.
template <class Op>
[[nodiscard]] double time_rep(Op& op, std::uint64_t n, Measured& m) noexcept {
  const std::int64_t ns = time_loop(op, n, m.failures);
  m.calls += n;
  return static_cast<double>(ns) / static_cast<double>(n);
}

/// Calibrates, then times config.reps loops. Op: bool(std::uint64_t i) noexcept; false means the
/// call failed.
template <class Op>
[[nodiscard]] Measured measure(const Config& config, Op&& op) {
  Measured m;
  const std::uint64_t n = calibrate(config, op, m);
  std::vector<double> per_op_ns;
  per_op_ns.reserve(static_cast<std::size_t>(config.reps));
  for (int r = 0; r < config.reps; ++r) per_op_ns.push_back(time_rep(op, n, m));
  m.stats = summarize(std::move(per_op_ns));
  return m;
}

/// A case timed in alternation with its baseline, so both see the same state of a shared, noisy
/// machine. ratio: median, min and max over the repetitions of subject ns/op over baseline ns/op.
struct Paired {
  Measured baseline;
  Measured subject;
  Stats ratio;
};

/// Calibrates both ops, then times config.reps pairs of repetitions, the order swapped every pair
/// (B S, S B, ...) so a drift in machine speed falls on both sides alike.
template <class BaseOp, class Op>
[[nodiscard]] Paired measure_paired(const Config& config, BaseOp&& base_op, Op&& op) {
  Paired p;
  const std::uint64_t base_n = calibrate(config, base_op, p.baseline);
  const std::uint64_t n = calibrate(config, op, p.subject);
  std::vector<double> base_ns, subject_ns, ratios;
  for (int r = 0; r < config.reps; ++r) {
    double b = 0, s = 0;
    if (r % 2 == 0) {
      b = time_rep(base_op, base_n, p.baseline);
      s = time_rep(op, n, p.subject);
    } else {
      s = time_rep(op, n, p.subject);
      b = time_rep(base_op, base_n, p.baseline);
    }
    base_ns.push_back(b);
    subject_ns.push_back(s);
    ratios.push_back(b > 0 ? s / b : 0.0);
  }
  p.baseline.stats = summarize(std::move(base_ns));
  p.subject.stats = summarize(std::move(subject_ns));
  p.ratio = summarize(std::move(ratios));
  return p;
}

inline constexpr std::string_view kUnitNsPerOp = "ns/op";  // a repetition's elapsed time over its operations
inline constexpr std::string_view kUnitNs = "ns";          // a latency: one percentile of a repetition's samples

struct Row {
  std::string name;
  std::string_view unit = kUnitNsPerOp;
  Stats stats;
  std::optional<double> busy_fraction;  // cross-process reads: share that returned busy
  std::optional<double> wake_fraction;  // publishes with a waiter: share that made a FUTEX_WAKE
  std::string baseline;                 // empty: none
  std::optional<double> ratio;          // median / baseline median, or the paired ratio's median
  std::optional<Stats> paired_ratio;    // set when timed in alternation with `paired_with`
  std::string paired_with;
  std::string target;                   // "<=1.5", "<30ns"; empty: none
  std::optional<bool> pass;
};

/// Collects the rows of one run and the failed calls seen while producing them.
class Results {
 public:
  /// Adds a case's row and reports its failed calls on stderr (what: the last failure's text).
  void add(std::string name, const Measured& m, std::string_view what);
  /// Adds the subject's row of a paired measurement, carrying its ratio against `baseline`.
  void add_paired(std::string name, std::string_view baseline, const Paired& p, std::string_view what);
  void add_row(Row row) { rows_.push_back(std::move(row)); }
  /// Reports on stderr that `count` of `calls` calls of a case failed; any makes the run fail.
  void note_failures(std::string_view name, std::uint64_t count, std::uint64_t calls, std::string_view what);
  /// Reports on stderr that a case could not run as planned (set-up, child process); fails the run.
  void note_error(std::string_view name, std::string_view what);

  [[nodiscard]] std::uint64_t failures() const noexcept { return failures_; }
  [[nodiscard]] std::vector<Row>& rows() noexcept { return rows_; }
  [[nodiscard]] const Row* find(std::string_view name) const noexcept;

 private:
  std::vector<Row> rows_;
  std::uint64_t failures_ = 0;
};

enum class Goal : std::uint8_t { none, ratio_at_most, below_ns };

/// A line's baseline and target: ratio = median / baseline median; the goal is checked on every run.
struct Comparison {
  std::string_view name;
  std::string_view baseline;
  Goal goal;
  double limit;  // a ratio for ratio_at_most, ns (per op) for below_ns
};

/// Fills in baseline, ratio, target and pass of the rows the table names; rows or baselines that
/// are missing (a case that could not run, reported already) are skipped.
void compare(Results& results, std::span<const Comparison> comparisons);

/// Creates the suite's private arena `name` (over a stale one a crashed run of the same pid left),
/// runs `cases` on it, then closes and removes it however the cases end. False, said on stderr,
/// when the arena could not be made or removed or a case threw: the suite then exits kExitFailed.
[[nodiscard]] bool run_in_arena(const std::string& name, core::ArenaOptions options,
                                const std::function<void(core::Arena&)>& cases);

/// The suite's exit code: kExitOk, or kExitFailed (said on stderr) when any call or set-up failed,
/// since the numbers printed are then not to be trusted.
[[nodiscard]] int exit_status(const Results& results);

/// Says on stderr when this build has no optimisation: its numbers mean little.
void warn_if_unoptimised();

/// A number for JSON with `decimals` places; non-finite prints as null.
[[nodiscard]] std::string json_number(double v, int decimals);
/// A row as a JSON object (the CLI's writer), so a suite can add fields of its own.
[[nodiscard]] json::JsonObject row_json(const Row& row);
/// One JSON object per row and line on stdout.
void print_json(const std::vector<Row>& rows);
/// An aligned table on stdout under `title` (one line naming the suite, unit and repetitions); a
/// unit column is added when the rows do not all share one unit.
void print_table(const std::vector<Row>& rows, std::string_view title);

}  // namespace weir::bench
