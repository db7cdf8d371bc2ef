// The pipeline suite (`weir_bench pipeline`, `weir bench pipeline`): a whole pipeline (sim -> fft + stats (+ filter) on each channel -> one
// lossless HDF5 recorder) run by the supervisor as `weir run` runs it, and each stage's CPU cost per
// sample there next to the same kernel alone, in the same run: the shard through the host's loop on
// a prefilled ring in one thread, the recorder draining prefilled rings, the simulator unpaced with
// no readers, and plain write() of the recorder's bytes as the floor under the recorder.
#include "weir/bench/pipeline_bench.hpp"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "weir/acq/sim_driver.hpp"
#include "weir/bench/recorder_bench.hpp"
#include "weir/bench/shard_bench.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/clock.hpp"
#include "weir/json/json.hpp"
#include "weir/supervisor/run_pipeline.hpp"

#include "extra_suites.hpp"
#include "harness.hpp"

namespace weir::bench {

namespace {

namespace fs = std::filesystem;

constexpr std::uint32_t kRing = 256;               // blocks per input ring in the pipeline
constexpr std::uint32_t kAloneBlocks = 256;        // blocks per repetition of a kernel alone (--quick: 32)
constexpr std::uint64_t kWriteChunkBytes = 256 << 10;  // plain write(): bytes per call, the recorder's chunk
constexpr double kHeldRate = 0.995;                // a run holds when the sims produced this share of the rate

struct ShardKind {
  const char* kind;
  std::vector<shard_host::ParamArg> params;
};

// The shards on every channel; the filter's cutoff is a tenth of the channel's rate.
std::vector<ShardKind> shard_kinds(const PipelineBenchOptions& o) {
  std::vector<ShardKind> kinds{
      {"fft", {{"size", "4096"}, {"window", "hann"}, {"spectrum", "power"}, {"overlap", "0"}}},
      {"stats", {{"window", "163840"}}},
  };
  if (o.fir)
    kinds.push_back({"filter",
                     {{"type", "lowpass"}, {"cutoff", fmt::format("{:.0f}", o.rate_msps * 1e5 / o.channels)}, {"taps", "101"},
                      {"decimate", "4"}}});
  return kinds;
}

// The calling thread's CPU time so far (user + system): the machine is shared, so every figure here
// is CPU time, which other work on the machine does not inflate as it does wall time.
std::int64_t thread_cpu_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::string pipeline_text(const PipelineBenchOptions& o, const std::string& arena, const std::string& out_dir) {
  const std::uint32_t n = o.channels;
  const double per_channel = o.rate_msps * 1e6 / n;
  const std::uint64_t block_bytes = std::uint64_t{o.block} * 4;
  const std::uint64_t outputs_mb = 16 * n;  // fft spectra, filter output: far smaller than the inputs
  const std::uint64_t channel_mb = (block_bytes * kRing * n) / (1 << 20) + outputs_mb + 16;
  std::string text = fmt::format("arena {{ name = \"{}\", channels = {}, channel_mb = {}, consumers = 64 }}\n", arena,
                                 n * 4 + 4, channel_mb);
  for (std::uint32_t i = 0; i < n; ++i)
    text += fmt::format("channel \"in{}\" {{ dtype = \"f32\", rate = {:.0f}, block = {}, ring = {}, units = \"V\" }}\n", i,
                        per_channel, o.block, kRing);
  for (std::uint32_t i = 0; i < n; ++i)
    text += fmt::format("driver \"sim\" {{ channels = {{\"in{}\"}}, name = \"sim{}\", signal = \"noise\", seed = {} }}\n",
                        i, i, i);
  std::string thread = o.processes ? ", thread = false" : (o.threads ? ", thread = true" : "");
  if (o.batch_ms >= 0) thread += fmt::format(", batch_ms = {}", o.batch_ms);
  for (std::uint32_t i = 0; i < n; ++i)
    for (const ShardKind& k : shard_kinds(o)) {
      text += fmt::format("shard \"{}\" {{ input = \"in{}\"{}", k.kind, i, thread);
      for (const auto& [key, value] : k.params) {
        const bool numeric = !value.empty() && value.find_first_not_of("0123456789.") == std::string::npos;
        text += numeric ? fmt::format(", {} = {}", key, value) : fmt::format(", {} = \"{}\"", key, value);
      }
      text += " }\n";
    }
  std::string inputs;
  for (std::uint32_t i = 0; i < n; ++i) inputs += fmt::format("{}\"in{}\"", i == 0 ? "" : ", ", i);
  text += fmt::format("record \"hdf5\" {{ channels = {{{}}}, out = \"{}/\", policy = \"lossless\", flush_ms = 1000 }}\n",
                      inputs, out_dir);
  return text;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 != 0 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// One stage of the table: parts grouped by role and kind.
struct Stage {
  std::string name;                  // "driver sim", "shard fft", "record hdf5"
  std::vector<double> pipeline_ns;   // CPU ns per sample in the pipeline, one per run
  std::vector<double> process_ns;    // shards: process() p50 per block / samples per block, one per run
  std::vector<double> alone_ns;      // the kernel alone, CPU ns per sample, one per repetition
  std::vector<double> alone_process_ns;  // shards alone: process() p50 per block / samples per block
  std::vector<double> floor_ns;      // the recorder: plain write() of the same bytes
  std::uint64_t lost = 0;            // blocks, over every run
  std::string alone_what;
};

Stage& stage(std::vector<Stage>& stages, const std::string& name) {
  for (Stage& s : stages)
    if (s.name == name) return s;
  stages.push_back(Stage{name, {}, {}, {}, {}, {}, 0, {}});
  return stages.back();
}

struct RunOutcome {
  bool held = false;
  double input_msps = 0;
  std::uint64_t lost = 0, dropped = 0, errors = 0;
  double cpu_used_s = 0, cpu_had_s = 0;
};

// One pipeline run; adds each stage's in-pipeline figures. Fails when the pipeline does not start.
core::Result<RunOutcome> run_once(const PipelineBenchOptions& o, const fs::path& scratch, std::vector<Stage>& stages,
                                  std::string& log) {
  const std::string arena = fmt::format("bench.pipe.{}", getpid());
  const fs::path out_dir = scratch / "rec";
  const fs::path file = scratch / "pipeline.lua";
  std::ofstream(file) << pipeline_text(o, arena, out_dir.string());
  supervisor::RunOptions run;
  run.file = file.string();
  run.duration_s = o.duration_s;
  run.status_every_s = 0;
  run.grace_s = 10;
  run.replace = true;
  run.weir_exe = o.weir_exe;
  run.log = [&log](const std::string& line) { log += line + "\n"; };
  auto report = supervisor::run_pipeline(run);
  std::error_code ignored;
  fs::remove_all(out_dir, ignored);
  if (!report) return tl::make_unexpected(report.error());
  RunOutcome r;
  r.lost = report->lost;
  r.dropped = report->dropped;
  r.errors = report->errors;
  std::map<std::string, std::pair<double, std::uint64_t>> cost;  // stage -> cpu s, samples
  std::map<std::string, std::vector<double>> process;
  r.cpu_used_s = report->supervisor_cpu_s;
  for (const supervisor::PartCost& p : report->parts) {
    const std::string name = p.role + " " + p.kind;
    cost[name].first += p.cpu_s;
    cost[name].second += p.samples;
    r.cpu_used_s += p.cpu_s;
    if (p.proc_p50_ns != 0 && p.samples_per_block != 0)
      process[name].push_back(static_cast<double>(p.proc_p50_ns) / p.samples_per_block);
    stage(stages, name).lost += p.role == "driver" ? 0 : p.lost;
  }
  for (const auto& [name, c] : cost)
    if (c.second != 0) stage(stages, name).pipeline_ns.push_back(c.first * 1e9 / static_cast<double>(c.second));
  for (const auto& [name, v] : process) stage(stages, name).process_ns.push_back(median(v));
  r.cpu_had_s = report->run_s * report->cpus;
  r.input_msps = report->source_rate_hz / 1e6;
  r.held = r.lost == 0 && r.dropped == 0 && r.errors == 0 && r.input_msps >= kHeldRate * o.rate_msps;
  return r;
}

// Each shard kind alone: the host's loop (ShardInstance::poll) over a prefilled ring, one thread.
core::Result<void> shards_alone(const PipelineBenchOptions& o, std::vector<Stage>& stages) {
  const std::string name = fmt::format("bench.pipe.alone.{}", getpid());
  core::ArenaOptions options;
  options.channel_capacity = 16;
  const std::uint32_t blocks = o.quick ? kAloneBlocks / 8 : kAloneBlocks;
  options.channel_data_bytes = std::uint64_t{o.block} * 4 * blocks * 2 + (64ULL << 20);
  options.vector_dim = 0;
  options.replace_stale = true;
  auto arena = core::Arena::create(name, options);
  if (!arena) return tl::make_unexpected(arena.error());
  core::Result<void> result;
  for (const ShardKind& k : shard_kinds(o)) {
    Stage& s = stage(stages, std::string("shard ") + k.kind);
    s.alone_what = "the shard through the host's loop on a prefilled ring, one thread";
    for (int rep = 0; rep < o.reps && result; ++rep) {
      ShardBenchOptions b;
      b.shard = k.kind;
      b.params = k.params;
      b.channel = std::string("alone.") + k.kind;
      b.samples_per_block = o.block;
      b.ring_blocks = blocks;
      b.rate_hz = o.rate_msps * 1e6 / o.channels;
      b.blocks = blocks;
      b.prefill = true;
      auto r = bench_shard(*arena, b);
      if (!r) {
        result = tl::make_unexpected(r.error());
        break;
      }
      if (r->blocks != 0) s.alone_ns.push_back(r->cpu_s * 1e9 / static_cast<double>(r->blocks * o.block));
      if (r->blocks != 0 && r->p50_ns != 0) s.alone_process_ns.push_back(static_cast<double>(r->p50_ns) / o.block);
    }
  }
  arena->close();
  (void)core::Arena::remove(name);
  return result;
}

// The simulator alone: one channel, unpaced, nobody reading.
core::Result<void> sim_alone(const PipelineBenchOptions& o, std::vector<Stage>& stages) {
  const std::string name = fmt::format("bench.pipe.sim.{}", getpid());
  core::ArenaOptions options;
  options.channel_capacity = 4;
  options.channel_data_bytes = std::uint64_t{o.block} * 4 * 64 + (8ULL << 20);
  options.vector_dim = 0;
  options.replace_stale = true;
  auto arena = core::Arena::create(name, options);
  if (!arena) return tl::make_unexpected(arena.error());
  Stage& s = stage(stages, "driver sim");
  s.alone_what = "one channel, unpaced (--fast), nobody reading";
  core::Result<void> result;
  for (int rep = 0; rep < o.reps; ++rep) {
    acq::SimOptions sim;
    sim.channels = {"alone.sim"};
    sim.rate_hz = o.rate_msps * 1e6 / o.channels;
    sim.block_samples = o.block;
    sim.signal.kind = acq::SignalKind::noise;
    sim.signal.seed = static_cast<std::uint64_t>(rep);
    sim.max_blocks = o.quick ? kAloneBlocks / 8 : kAloneBlocks;
    sim.fast = true;
    sim.ring_blocks = 64;
    const std::atomic<bool> never{false};
    const std::int64_t cpu_before = thread_cpu_ns();
    auto r = acq::run_sim(*arena, sim, never);
    const std::int64_t cpu_ns = thread_cpu_ns() - cpu_before;
    if (!r) {
      result = tl::make_unexpected(r.error());
      break;
    }
    if (r->samples_published != 0) s.alone_ns.push_back(static_cast<double>(cpu_ns) / static_cast<double>(r->samples_published));
  }
  arena->close();
  (void)core::Arena::remove(name);
  return result;
}

// Plain write() of `bytes` in chunk-sized calls to a new file in `dir`: the floor under the recorder.
core::Result<double> plain_write_ns_per_sample(const fs::path& dir, std::uint64_t bytes) {
  const fs::path file = dir / "plain.bin";
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return core::fail(core::Errc::io_error, "plain write: open " + file.string());
  std::vector<char> chunk(kWriteChunkBytes);
  for (std::size_t i = 0; i < chunk.size(); ++i) chunk[i] = static_cast<char>(i * 7);
  const std::int64_t start = thread_cpu_ns();
  std::uint64_t done = 0;
  bool ok = true;
  while (done < bytes && ok) {
    const ssize_t n = ::write(fd, chunk.data(), chunk.size());
    ok = n > 0;
    done += ok ? static_cast<std::uint64_t>(n) : 0;
  }
  const std::int64_t elapsed = thread_cpu_ns() - start;
  ::close(fd);
  std::error_code ignored;
  fs::remove(file, ignored);
  if (!ok) return core::fail(core::Errc::io_error, "plain write: write " + file.string());
  return static_cast<double>(elapsed) / (static_cast<double>(done) / 4);
}

// The recorder draining prefilled rings of the same channels and blocks, and plain write() beside it.
core::Result<void> recorder_alone(const PipelineBenchOptions& o, const fs::path& scratch, std::vector<Stage>& stages) {
  Stage& s = stage(stages, "record hdf5");
  s.alone_what = "the recorder draining prefilled rings (floor: plain write() of the same bytes)";
  for (int rep = 0; rep < o.reps; ++rep) {
    RecorderBenchOptions r;
    r.dir = scratch.string();
    r.channels = o.channels;
    r.block_bytes = o.block * 4;
    r.blocks = o.quick ? kAloneBlocks / 8 : kAloneBlocks;
    r.prefill = true;
    auto got = bench_record(r);
    if (!got) return tl::make_unexpected(got.error());
    if (got->bytes != 0) s.alone_ns.push_back(got->cpu_s * 1e9 / (static_cast<double>(got->bytes) / 4));
    auto plain = plain_write_ns_per_sample(scratch, got->bytes);
    if (!plain) return tl::make_unexpected(plain.error());
    s.floor_ns.push_back(*plain);
  }
  return {};
}

std::string fmt_ns(double v) { return v > 0 ? fmt::format("{:.2f}", v) : std::string("-"); }

void print_error(std::string_view message) { fmt::print(stderr, "{}\n", message); }

constexpr const char* kUsage =
    "usage: weir bench pipeline [--channels N] [--rate MSPS] [--block N] [--duration S] [--fir]\n"
    "                           [--processes|--threads] [--batch-ms MS] [--dir DIR] [--json] [--reps N] [--quick]\n"
    "  a pipeline (sim -> fft + stats (+ filter) on each channel -> one lossless HDF5 recorder) under the\n"
    "  supervisor, each stage's CPU per sample next to its kernel alone in the same run\n"
    "  --channels N   simulated f32 channels, 1..64 (default 4)\n"
    "  --rate MSPS    aggregate input in MS/s (default 16)\n"
    "  --block N      samples per block, >= 64 (default 16384)\n"
    "  --duration S   seconds per pipeline run (default 5)\n"
    "  --fir          a filter shard (101 taps, decimate 4) on each channel too\n"
    "  --processes    shards as processes (thread = false)\n"
    "  --threads      shards as threads of the supervisor (thread = true)\n"
    "  --batch-ms MS  the shards' batch_ms (default: the host's)\n"
    "  --dir DIR      where recordings go (default: the temp directory)\n"
    "  --weir PATH    the weir executable that runs the parts (default: $WEIR_CLI, weir beside weir_bench,\n"
    "                 ../tools/weir from weir_bench's directory)\n"
    "  --json         one JSON object on stdout\n"
    "  --reps N       pipeline runs and kernel-alone repetitions, 1..1000 (default 5); medians are reported\n"
    "  --quick        fewer blocks for the kernels alone (for tests)\n";

bool out_of_range(const PipelineBenchOptions& o) {
  return o.channels < 1 || o.channels > 64 || !(o.rate_msps > 0) || !(o.duration_s > 0) || o.reps < 1 || o.block < 64;
}

template <class T>
std::optional<T> parse_number(std::string_view text) {
  T value{};
  const char* end = text.data() + text.size();
  const auto [at, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc{} || at != end) return std::nullopt;
  return value;
}

// Returns the options, or nullopt with exit_code set (the reason printed, usage after --help).
std::optional<PipelineBenchOptions> parse_pipeline_args(const std::vector<std::string>& args, int& exit_code) {
  exit_code = kExitUsage;
  PipelineBenchOptions o;
  o.reps = kDefaultReps;
  const std::size_t first = !args.empty() && !args[0].starts_with("-") ? 1 : 0;
  for (std::size_t i = first; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      exit_code = kExitOk;
      return std::nullopt;
    }
    if (arg == "--fir" || arg == "--processes" || arg == "--threads" || arg == "--quick" || arg == "--json") {
      bool& flag = arg == "--fir" ? o.fir
                   : arg == "--processes" ? o.processes
                   : arg == "--threads" ? o.threads
                   : arg == "--quick" ? o.quick
                                      : o.json;
      flag = true;
      continue;
    }
    std::string_view value;
    if (const std::size_t eq = arg.find('='); arg.starts_with("--") && eq != std::string_view::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      std::fprintf(stderr, "weir bench pipeline: unknown or incomplete option '%.*s'\n%s", static_cast<int>(arg.size()),
                   arg.data(), kUsage);
      return std::nullopt;
    }
    bool ok = true;
    const auto take = [&ok, value](auto& into) {
      const auto parsed = parse_number<std::remove_reference_t<decltype(into)>>(value);
      ok = parsed.has_value();
      if (parsed) into = *parsed;
    };
    if (arg == "--channels") take(o.channels);
    else if (arg == "--rate") take(o.rate_msps);
    else if (arg == "--block") take(o.block);
    else if (arg == "--duration") take(o.duration_s);
    else if (arg == "--batch-ms") take(o.batch_ms);
    else if (arg == "--reps") take(o.reps);
    else if (arg == "--dir") o.dir = value;
    else {
      std::fprintf(stderr, "weir bench pipeline: unknown or incomplete option '%.*s'\n%s", static_cast<int>(arg.size()),
                   arg.data(), kUsage);
      return std::nullopt;
    }
    if (!ok) {
      std::fprintf(stderr, "weir bench pipeline: %.*s: '%.*s' is not a number of that kind\n", static_cast<int>(arg.size()),
                   arg.data(), static_cast<int>(value.size()), value.data());
      return std::nullopt;
    }
  }
  if (o.processes && o.threads) {
    std::fputs("weir bench pipeline: --processes and --threads exclude each other\n", stderr);
    return std::nullopt;
  }
  if (o.reps > kMaxReps) {
    std::fprintf(stderr, "weir bench: --reps wants a whole number from 1 to %d\n", kMaxReps);
    return std::nullopt;
  }
  return o;
}

}  // namespace

int run_pipeline_suite(const std::vector<std::string>& args, const WeirExe& weir) {
  int exit_code = kExitOk;
  auto maybe_options = parse_pipeline_args(args, exit_code);
  if (!maybe_options) return exit_code;
  if (out_of_range(*maybe_options)) return run_pipeline_bench(*maybe_options);  // says what is out of range
  if (weir.path.empty()) {
    print_error("weir bench pipeline: the weir executable starts the pipeline's parts and none was found (looked for " +
                weir.looked_for + "); build it with `cmake --build build --target weir` or name it with --weir PATH");
    return kExitFailed;
  }
  maybe_options->weir_exe = weir.path;
  warn_if_unoptimised();
  return run_pipeline_bench(*maybe_options);
}

int run_pipeline_bench(const PipelineBenchOptions& o) {
  if (out_of_range(o)) {
    print_error("weir bench pipeline: --channels 1..64, --rate > 0, --duration > 0, --reps >= 1, --block >= 64");
    return kExitUsage;
  }
  if (o.weir_exe.empty()) {
    print_error("weir bench pipeline: no weir executable to start the pipeline's parts with");
    return kExitFailed;
  }
  const fs::path base = o.dir.empty() ? fs::temp_directory_path() : fs::path(o.dir);
  const fs::path scratch = base / fmt::format("weir-bench-pipeline-{}", getpid());
  std::error_code ec;
  fs::create_directories(scratch, ec);
  if (ec) {
    print_error(fmt::format("weir bench pipeline: cannot make {}: {}", scratch.string(), ec.message()));
    return kExitFailed;
  }
  std::vector<Stage> stages;
  std::vector<RunOutcome> runs;
  std::string log;
  std::string failure;
  for (int rep = 0; rep < o.reps && failure.empty(); ++rep) {
    auto r = run_once(o, scratch, stages, log);
    if (!r) failure = r.error().what;
    else runs.push_back(*r);
  }
  if (failure.empty())
    if (auto ok = shards_alone(o, stages); !ok) failure = ok.error().what;
  if (failure.empty())
    if (auto ok = sim_alone(o, stages); !ok) failure = ok.error().what;
  if (failure.empty())
    if (auto ok = recorder_alone(o, scratch, stages); !ok) failure = ok.error().what;
  fs::remove_all(scratch, ec);
  if (!failure.empty()) {
    std::fputs(log.c_str(), stderr);
    print_error("weir bench pipeline: " + failure);
    return kExitFailed;
  }

  int held = 0;
  std::uint64_t lost = 0, dropped = 0, errors = 0;
  std::vector<double> input, used, had;
  for (const RunOutcome& r : runs) {
    held += r.held ? 1 : 0;
    lost += r.lost;
    dropped += r.dropped;
    errors += r.errors;
    input.push_back(r.input_msps);
    used.push_back(r.cpu_used_s);
    had.push_back(r.cpu_had_s);
  }
  const char* placement = o.processes ? "processes" : (o.threads ? "threads" : "as the pipeline defaults");
  if (o.json) {
    json::JsonArray rows;
    for (const Stage& s : stages) {
      const double in = median(s.pipeline_ns), alone = median(s.alone_ns);
      json::JsonObject row;
      row.text("stage", s.name)
          .real("pipeline_ns_per_sample", in)
          .real("process_ns_per_sample", median(s.process_ns))
          .real("alone_ns_per_sample", alone)
          .real("alone_process_ns_per_sample", median(s.alone_process_ns))
          .real("ratio", alone > 0 ? in / alone : std::nan(""))
          .number("lost", s.lost)
          .text("alone", s.alone_what);
      if (!s.floor_ns.empty()) row.real("floor_write_ns_per_sample", median(s.floor_ns));
      rows.raw(row.str());
    }
    json::JsonObject out;
    out.text("suite", "pipeline")
        .number("channels", o.channels)
        .real("rate_msps", o.rate_msps)
        .number("block", o.block)
        .real("duration_s", o.duration_s)
        .number("reps", o.reps)
        .boolean("fir", o.fir)
        .text("shards", placement)
        .real("batch_ms", o.batch_ms)
        .number("runs_held", held)
        .real("input_msps", median(input))
        .number("lost", lost)
        .number("dropped", dropped)
        .number("errors", errors)
        .real("cpu_used_s", median(used))
        .real("cpu_had_s", median(had))
        .raw("stages", rows.str());
    fmt::print("{}\n", out.str());
    return kExitOk;
  }
  fmt::print("weir bench pipeline: {} channels x {:.3g} MS/s f32 ({:.3g} MS/s in all), {}-sample blocks, {} s per run, "
             "shards {}{}{}; medians of {} run(s)\n",
             o.channels, o.rate_msps / o.channels, o.rate_msps, o.block, o.duration_s, placement, o.fir ? ", with FIR" : "",
             o.batch_ms >= 0 ? fmt::format(", batch_ms = {}", o.batch_ms) : std::string{},
             o.reps);
  fmt::print("  {:<16} {:>10} {:>10} {:>10} {:>10} {:>7} {:>8}\n", "stage", "pipeline", "process()", "alone",
             "process()", "ratio", "lost");
  fmt::print("  {:<16} {:>10} {:>10} {:>10} {:>10} {:>7} {:>8}\n", "", "cpu ns/S", "p50 ns/S", "cpu ns/S", "alone", "", "");
  for (const Stage& s : stages) {
    const double in = median(s.pipeline_ns), alone = median(s.alone_ns);
    fmt::print("  {:<16} {:>10} {:>10} {:>10} {:>10} {:>7} {:>8}\n", s.name, fmt_ns(in), fmt_ns(median(s.process_ns)),
               fmt_ns(alone), fmt_ns(median(s.alone_process_ns)),
               alone > 0 && in > 0 ? fmt::format("{:.2f}", in / alone) : std::string("-"), s.lost);
    if (!s.floor_ns.empty())
      fmt::print("  {:<16} {:>10} {:>10} {:>10} {:>10} {:>7}\n", "  plain write()", "", "", fmt_ns(median(s.floor_ns)), "",
                 alone > 0 ? fmt::format("{:.2f}", median(s.floor_ns) / alone) : std::string("-"));
  }
  fmt::print("  ns/S: ns per sample. pipeline: the stage's CPU time (all its parts) over the samples it handled;\n"
             "  process(): a shard's process() p50 per block over the block; ratio: pipeline over alone. Alone, in\n"
             "  this process after the runs, CPU time:\n");
  for (const Stage& s : stages)
    if (!s.alone_what.empty()) fmt::print("    {}: {}\n", s.name, s.alone_what);
  fmt::print("  held {} of {} run(s); input {:.2f} MS/s; lost {}, dropped at source {}, errors {}; CPU used {:.1f} of "
             "{:.1f} CPU-s\n",
             held, runs.size(), median(input), lost, dropped, errors, median(used), median(had));
  return kExitOk;
}

}  // namespace weir::bench
