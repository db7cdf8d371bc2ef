// The embed rows of `weir bench vectors`: pulse windows per second per core through the embed
// shard's whole forward path (the shard host reading a prefilled channel, conversion,
// standardisation, the forward pass, one vector ring write per window) against a bare libtorch
// forward loop over the same batches in the same run (a function of the plugin, since libtorch is
// not linked into weir). Skipped, with a note, when the plugin was not built.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "extra_suites.hpp"
#include "harness.hpp"
#include "suite_report.hpp"
#include "weir/bench/shard_bench.hpp"
#include "weir/core/arena.hpp"
#include "weir/shard_host/builtin.hpp"

namespace weir::bench {

namespace {

constexpr std::uint32_t kWindow = 256;                 // samples per pulse window: the built model's input
constexpr std::uint32_t kDims = 32;                    // its output
constexpr std::uint32_t kBatches[] = {1, 16, 64};      // windows per forward pass
constexpr std::uint64_t kWindows = 4096;               // windows per repetition (a multiple of every batch)
constexpr std::uint64_t kQuickWindows = 512;           // ... with --quick
constexpr std::uint32_t kCapacity = 1024;              // ring keys per batch size's partition channel
constexpr double kGoalWindowsPerS = 10'000;            // per core
constexpr double kWithinBare = 1.0 / 1.5;              // the shard's rate is at least this share of the bare loop's
constexpr std::uint64_t kChannelBytes = 64ULL << 20;   // the prefilled rings: 3 x 4096 blocks of 1 KiB
constexpr std::uint32_t kSlots = 8192;                 // 3 rings of 1024 keys, and room
constexpr int kRateDecimals = 0;
constexpr const char* kUnitWindowsPerS = "windows/s";

using BareFn = int (*)(const char*, std::uint32_t, std::uint32_t, std::uint64_t, double*, char*, std::size_t);

std::string name_of(const char* what, std::uint32_t batch) {
  return std::string("embed.") + what + ".batch" + std::to_string(batch);
}

// The plugin's bare loop, or why there is none.
BareFn find_bare(std::string& why) {
  const shard_host::PluginKind* plugin = shard_host::find_plugin("embed");
  if (plugin == nullptr) {
    why = "no plugin kind 'embed'";
    return nullptr;
  }
  for (const std::string& dir : shard_host::plugin_dirs()) {
    const std::string path = dir + "/" + std::string(plugin->file);
    if (::access(path.c_str(), R_OK) != 0) continue;
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);  // kept open for the run: the host shares it
    if (handle == nullptr) {
      why = dlerror();
      return nullptr;
    }
    void* symbol = dlsym(handle, "weir_embed_bench_bare");
    if (symbol == nullptr) {
      why = path + " has no weir_embed_bench_bare";
      return nullptr;
    }
    return reinterpret_cast<BareFn>(symbol);  // dlsym's documented use
  }
  why = std::string(plugin->file) + " not built (needs " + std::string(plugin->needs) + ")";
  return nullptr;
}

void run_batches(const Config& config, core::Arena& arena, BareFn bare, Results& results, Fields& fields) {
  const std::uint64_t windows = config.quick ? kQuickWindows : kWindows;
  for (const std::uint32_t batch : kBatches) {
    const std::string shard_row = name_of("shard", batch), bare_row = name_of("bare", batch);
    std::vector<double> shard_rates, bare_rates;
    for (int rep = 0; rep < config.reps; ++rep) {
      ShardBenchOptions o;
      o.shard = "embed";
      o.params = {{"batch", std::to_string(batch)}, {"capacity", std::to_string(kCapacity)}};
      o.channel = "bench.embed.b" + std::to_string(batch);
      o.samples_per_block = kWindow;
      o.ring_blocks = static_cast<std::uint32_t>(windows);
      o.blocks = windows;
      o.prefill = true;  // the host's and the shard's cost alone, on this thread's core
      const auto r = bench_shard(arena, o);
      if (!r) {
        results.note_error(shard_row, r.error().what);
        return;
      }
      if (r->errors != 0 || r->lost != 0) results.note_failures(shard_row, r->errors + r->lost, windows, "errors or lost blocks");
      shard_rates.push_back(r->cpu_s > 0 ? static_cast<double>(r->blocks) / r->cpu_s : 0.0);

      double cpu_s = 0;
      char error[512] = {};
      if (bare(nullptr, kWindow, batch, windows, &cpu_s, error, sizeof error) != 0) {
        results.note_error(bare_row, error);
        return;
      }
      bare_rates.push_back(cpu_s > 0 ? static_cast<double>(windows) / cpu_s : 0.0);
    }
    results.add_row(make_row(bare_row, kUnitWindowsPerS, bare_rates));
    results.add_row(make_row(shard_row, kUnitWindowsPerS, shard_rates));
    const Row* row = results.find(shard_row);
    fields.add(shard_row, "goal_windows_per_s", kGoalWindowsPerS, kRateDecimals);
    fields.add_bool(shard_row, "meets_goal", row != nullptr && row->stats.median_ns >= kGoalWindowsPerS);
    fields.add(shard_row, "window_samples", std::uint64_t{kWindow});
    fields.add(shard_row, "dims", std::uint64_t{kDims});
  }
}

}  // namespace

void run_embed_cases(const Config& config, Results& results, Fields& fields) {
  std::string why;
  const BareFn bare = find_bare(why);
  if (bare == nullptr) {
    std::fprintf(stderr, "weir bench vectors: embed.* rows skipped: %s\n", why.c_str());
    return;
  }
  core::ArenaOptions options;
  options.slot_count = kSlots;
  options.vector_dim = kDims;
  options.channel_data_bytes = kChannelBytes;
  const bool ran = run_in_arena("bench.embed." + std::to_string(::getpid()), options,
                                [&](core::Arena& arena) { run_batches(config, arena, bare, results, fields); });
  if (!ran) results.note_error("embed", "the embed cases' arena");
  std::vector<AtLeast> within;
  for (const std::uint32_t batch : kBatches) within.push_back({name_of("shard", batch), name_of("bare", batch), kWithinBare});
  compare_at_least(results, within);
}

}  // namespace weir::bench
