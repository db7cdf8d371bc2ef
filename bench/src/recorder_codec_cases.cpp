// `weir bench recorder --only encoded`: what each codec costs and gives inside the recorder itself.
// One channel of detector-like i16 codes (detector_codes.hpp) in 16 KiB blocks is published first,
// then drained by the recorder (--from-oldest) through one codec at a time, with its default encoder
// threads (one per CPU): the recorder's own rate with that codec, the compression ratio of the
// whole file, and the MB of samples per CPU second the recording thread and the encoders spent.
#include "recorder_codec_cases.hpp"

#include <algorithm>
#include <vector>

#include "codec_cases.hpp"
#include "weir/bench/recorder_bench.hpp"
#include "weir/codec/codec.hpp"

namespace weir::bench {

namespace {

constexpr std::uint64_t kEncodedBytes = 256ULL << 20;     // recorded per case
constexpr std::uint64_t kQuickEncodedBytes = 32ULL << 20;  // ... with --quick
constexpr std::uint32_t kEncodedBlockBytes = 16384;        // 8192 i16 samples a block
constexpr const char* kCodecs[] = {"none",          "lz4",           "shuffle+lz4", "bitshuffle+lz4",
                                   "shuffle+deflate:1", "shuffle+zstd:1"};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

void run_encoded_line(const Config& config, const std::string& dir, Results& results, Fields& fields) {
  constexpr std::size_t kCases = std::size(kCodecs);
  std::vector<double> written;
  std::vector<std::vector<double>> rate(kCases), ratio(kCases), per_cpu(kCases), durable(kCases);
  RecorderBenchOptions o;
  o.dir = dir;
  o.channels = 1;
  o.block_bytes = kEncodedBlockBytes;
  o.blocks = (config.quick ? kQuickEncodedBytes : kEncodedBytes) / kEncodedBlockBytes;
  o.prefill = true;
  o.detector = true;
  // Each repetition takes every case once, in turn, so a change of load reaches them alike.
  for (int rep = 0; rep < config.reps; ++rep) {
    auto plain = bench_plain_write(o);
    if (!plain) {
      results.note_error("base.write.enc.i16", plain.error().what);
      return;
    }
    written.push_back(plain->mb_per_s);
    for (std::size_t i = 0; i < kCases; ++i) {
      auto chosen = codec::parse(kCodecs[i]);
      if (!chosen) {
        results.note_error("record.enc." + codec_row_part(kCodecs[i]) + ".i16", chosen.error().what);
        return;
      }
      o.codec = *chosen;
      auto r = bench_record(o);
      if (!r) {
        results.note_error("record.enc." + codec_row_part(kCodecs[i]) + ".i16", r.error().what);
        return;
      }
      rate[i].push_back(r->mb_per_s);
      ratio[i].push_back(r->file_bytes > 0 ? static_cast<double>(r->bytes) / static_cast<double>(r->file_bytes) : 0);
      per_cpu[i].push_back(r->process_cpu_s > 0 ? static_cast<double>(r->bytes) / 1e6 / r->process_cpu_s : 0);
      durable[i].push_back(r->durable_mb_per_s);
    }
  }
  results.add_row(make_row("base.write.enc.i16", kUnitMBps, written));
  std::vector<AtLeast> comparisons;
  for (std::size_t i = 0; i < kCases; ++i) {
    const std::string name = "record.enc." + codec_row_part(kCodecs[i]) + ".i16";
    results.add_row(make_row(name, kUnitMBps, rate[i]));
    fields.add(name, "ratio", median(ratio[i]), 3);
    fields.add(name, "mb_per_cpu_s", median(per_cpu[i]), 0);
    fields.add(name, "durable_mb_s", median(durable[i]), 0);
    comparisons.push_back(AtLeast{name, "base.write.enc.i16", 0});
  }
  compare_at_least(results, comparisons);
}

}  // namespace weir::bench
