// `weir bench recorder --only codec`: the codecs a recorder chunk could go through, side by side on
// detector-like i16 ADC codes (the simulator's pulses on a baseline, +-10 V full scale, so a few LSB
// of noise), one 256 KiB chunk (the recorder's kTargetChunkBytes) at a time on one thread: the
// compression ratio and MB/s of input per core (thread CPU time), against memcpy of the same chunks.
// The shuffle is HDF5's byte shuffle (its filter 2), which HDF5 runs before deflate (--compress)
// and which the LZ4 (32004) and zstd (32015) plugins of hdf5-filter-plugin can follow too.
#include <lz4.h>
#include <zlib.h>
#include <zstd.h>

#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "extra_suites.hpp"
#include "suite_report.hpp"
#include "weir/acq/signal_generator.hpp"
#include "weir/recorder/format.hpp"

namespace weir::bench {

namespace {

constexpr std::uint64_t kCodecBytes = 64ULL << 20;      // i16 codes compressed per case
constexpr std::uint64_t kQuickCodecBytes = 8ULL << 20;  // ... with --quick
constexpr double kFullScaleV = 10.0;                    // +-10 V over the i16 range: 0.31 mV an LSB
constexpr double kRateHz = 1e6;
constexpr double kCountRateHz = 20'000;                 // pulses a second: busy but mostly baseline
constexpr int kFastLevel = 1;                           // deflate and zstd at their fastest usual level

enum class Codec { deflate, lz4, zstd };
struct CodecCase {
  const char* name;
  Codec codec;
  bool shuffle;
};
constexpr CodecCase kCases[] = {
    {"deflate1", Codec::deflate, false}, {"shuffle_deflate1", Codec::deflate, true},
    {"lz4", Codec::lz4, false},          {"shuffle_lz4", Codec::lz4, true},
    {"zstd1", Codec::zstd, false},       {"shuffle_zstd1", Codec::zstd, true},
};

double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// The simulator's detector pulses as i16 ADC codes; empty if the generator cannot be made.
std::vector<std::byte> detector_codes(std::uint64_t bytes) {
  acq::SignalConfig signal;
  signal.kind = acq::SignalKind::pulses;
  signal.sample_rate_hz = kRateHz;
  signal.pulses.count_rate_hz = kCountRateHz;
  const auto samples = static_cast<std::uint32_t>(bytes / sizeof(std::int16_t));
  auto generator = acq::SignalGenerator::create(signal, samples);
  if (!generator) return {};
  std::vector<std::byte> out(bytes);
  (void)generator->fill(core::Dtype::i16, out, samples, kFullScaleV);
  return out;
}

// HDF5's shuffle: byte k of every element together.
void byte_shuffle(const std::byte* in, std::byte* out, std::size_t bytes, std::size_t element) {
  const std::size_t n = bytes / element;
  for (std::size_t k = 0; k < element; ++k)
    for (std::size_t i = 0; i < n; ++i) out[k * n + i] = in[i * element + k];
}

// Compressed bytes of one chunk, or 0 on a codec error.
std::size_t compress(Codec codec, const std::byte* in, std::size_t bytes, std::vector<std::byte>& out) {
  switch (codec) {
    case Codec::deflate: {
      auto length = static_cast<uLongf>(out.size());
      return compress2(reinterpret_cast<Bytef*>(out.data()), &length, reinterpret_cast<const Bytef*>(in),
                       static_cast<uLong>(bytes), kFastLevel) == Z_OK
                 ? length
                 : 0;
    }
    case Codec::lz4: {
      const int n = LZ4_compress_default(reinterpret_cast<const char*>(in), reinterpret_cast<char*>(out.data()),
                                         static_cast<int>(bytes), static_cast<int>(out.size()));
      return n > 0 ? static_cast<std::size_t>(n) : 0;
    }
    case Codec::zstd: {
      const std::size_t n = ZSTD_compress(out.data(), out.size(), in, bytes, kFastLevel);
      return ZSTD_isError(n) != 0 ? 0 : n;
    }
  }
  return 0;
}

struct CodecResult {
  double mb_per_core_s = 0;
  double ratio = 0;
};

CodecResult run_codec(const CodecCase& c, const std::vector<std::byte>& data, std::vector<std::byte>& shuffled,
                      std::vector<std::byte>& out) {
  const std::size_t chunk = rec::kTargetChunkBytes;
  std::uint64_t packed = 0;
  const double start = thread_cpu_s();
  for (std::size_t at = 0; at + chunk <= data.size(); at += chunk) {
    const std::byte* in = data.data() + at;
    if (c.shuffle) {
      byte_shuffle(in, shuffled.data(), chunk, sizeof(std::int16_t));
      in = shuffled.data();
    }
    const std::size_t n = compress(c.codec, in, chunk, out);
    if (n == 0) return {};
    packed += n;
  }
  const double cpu = thread_cpu_s() - start;
  const double raw = static_cast<double>(data.size() / chunk * chunk);
  return {cpu > 0 ? raw / 1e6 / cpu : 0, packed > 0 ? raw / static_cast<double>(packed) : 0};
}

}  // namespace

void run_codec_line(const Config& config, Results& results, Fields& fields) {
  const std::vector<std::byte> data = detector_codes(config.quick ? kQuickCodecBytes : kCodecBytes);
  if (data.empty()) {
    results.note_error("codec", "the simulator's pulse generator could not be made");
    return;
  }
  std::vector<std::byte> shuffled(rec::kTargetChunkBytes);
  std::vector<std::byte> out(std::max<std::size_t>(
      {compressBound(rec::kTargetChunkBytes), static_cast<std::size_t>(LZ4_compressBound(rec::kTargetChunkBytes)),
       ZSTD_compressBound(rec::kTargetChunkBytes)}));
  std::vector<double> copies;
  std::vector<std::vector<double>> rates(std::size(kCases));
  std::vector<double> ratios(std::size(kCases));
  for (int rep = 0; rep < config.reps; ++rep) {
    // memcpy of the same chunks: the floor every codec row is compared with.
    const double start = thread_cpu_s();
    for (std::size_t at = 0; at + rec::kTargetChunkBytes <= data.size(); at += rec::kTargetChunkBytes)
      std::memcpy(out.data(), data.data() + at, rec::kTargetChunkBytes);
    const double cpu = thread_cpu_s() - start;
    copies.push_back(cpu > 0 ? static_cast<double>(data.size()) / 1e6 / cpu : 0);
    for (std::size_t i = 0; i < std::size(kCases); ++i) {
      const CodecResult r = run_codec(kCases[i], data, shuffled, out);
      if (r.ratio == 0) {
        results.note_error(std::string("codec.") + kCases[i].name + ".i16", "the codec failed on a chunk");
        return;
      }
      rates[i].push_back(r.mb_per_core_s);
      ratios[i] = r.ratio;  // the same data each time: the same ratio
    }
  }
  results.add_row(make_row("base.memcpy.i16", kUnitMBps, copies));
  std::vector<AtLeast> comparisons;
  for (std::size_t i = 0; i < std::size(kCases); ++i) {
    const std::string row = std::string("codec.") + kCases[i].name + ".i16";
    results.add_row(make_row(row, kUnitMBps, rates[i]));
    fields.add(row, "ratio", ratios[i], 3);
    // What the codec lets a disk of D MB/s hold: min(D x ratio, the codec's MB/s x cores).
    comparisons.push_back({row, "base.memcpy.i16", 0});
  }
  compare_at_least(results, comparisons);
}

}  // namespace weir::bench
