// `weir bench recorder --only codec`: the codecs a recorder chunk can go through, side by side on
// detector-like i16 ADC codes (the simulator's pulses on a baseline, +-10 V full scale, so a few LSB
// of noise), one 256 KiB chunk (the recorder's kTargetChunkBytes) at a time on one thread, each
// through weir::codec::Encoder, the very encoder the recorder's workers use: the stored bytes are
// exactly what HDF5 keeps. Rows: the compression ratio and MB/s of input per core (thread CPU time),
// against memcpy of the same chunks. Each codec's first chunk is decoded back and compared.
#include <algorithm>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "codec_cases.hpp"
#include "detector_codes.hpp"
#include "weir/codec/codec.hpp"
#include "weir/recorder/format.hpp"

namespace weir::bench {

std::string codec_row_part(std::string_view codec) {
  std::string text;
  for (const char c : codec) {
    if (c == '+') text += '_';
    else if (c != ':') text += c;
  }
  return text;
}

namespace {

constexpr std::uint64_t kCodecBytes = 64ULL << 20;      // i16 codes compressed per case
constexpr std::uint64_t kQuickCodecBytes = 8ULL << 20;  // ... with --quick
constexpr const char* kCodecs[] = {"deflate:1", "shuffle+deflate:1", "lz4",   "shuffle+lz4",    "zstd:1",
                                   "shuffle+zstd:1", "zstd:3", "shuffle+zstd:3", "bitshuffle+lz4"};

double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// The data sets, each its own rows: the pulses as i16 codes on a 0 V baseline. (A 0.5 V baseline
// gave the byte-shuffle codecs the same ratios to the third digit, and bitshuffle 1.327 for 1.372.)
struct DataSet {
  const char* suffix;
};
constexpr DataSet kDataSets[] = {{"i16"}};

// A codec's row: "shuffle+zstd:1" on "i16" -> "codec.shuffle_zstd1.i16".
std::string row_name(std::string_view codec, std::string_view suffix) {
  return "codec." + codec_row_part(codec) + "." + std::string(suffix);
}

struct CodecResult {
  double mb_per_core_s = 0;
  double ratio = 0;
  std::string error;  // empty when every chunk encoded
};

CodecResult run_codec(codec::Encoder& encoder, const std::vector<std::byte>& data) {
  const std::size_t chunk = rec::kTargetChunkBytes;
  std::uint64_t packed = 0;
  const double start = thread_cpu_s();
  for (std::size_t at = 0; at + chunk <= data.size(); at += chunk) {
    auto stored = encoder.encode(std::span<const std::byte>(data.data() + at, chunk));
    if (!stored) return {0, 0, stored.error().what};
    packed += stored->size();
  }
  const double cpu = thread_cpu_s() - start;
  const double raw = static_cast<double>(data.size() / chunk * chunk);
  return {cpu > 0 ? raw / 1e6 / cpu : 0, packed > 0 ? raw / static_cast<double>(packed) : 0, {}};
}

// Encodes and decodes the first chunk: an empty string when it comes back the same.
std::string check_round_trip(codec::Encoder& encoder, std::size_t element_bytes, const std::vector<std::byte>& data) {
  const std::span<const std::byte> chunk(data.data(), rec::kTargetChunkBytes);
  auto stored = encoder.encode(chunk);
  if (!stored) return stored.error().what;
  auto back = codec::decode(encoder.codec(), element_bytes, *stored, chunk.size());
  if (!back) return back.error().what;
  return std::equal(back->begin(), back->end(), chunk.begin()) ? std::string() : "decoded chunk differs from the input";
}

void run_data_set(const Config& config, const DataSet& set, Results& results, Fields& fields) {
  const std::vector<std::byte> data = detector_codes(config.quick ? kQuickCodecBytes : kCodecBytes);
  if (data.size() < rec::kTargetChunkBytes) {
    results.note_error("codec", "the simulator's pulse generator could not be made");
    return;
  }
  std::vector<codec::Encoder> encoders;
  for (const char* name : kCodecs) {
    auto codec = codec::parse(name);
    if (!codec) {
      results.note_error(row_name(name, set.suffix), codec.error().what);
      return;
    }
    encoders.emplace_back(*codec, sizeof(std::int16_t));
    if (std::string error = check_round_trip(encoders.back(), sizeof(std::int16_t), data); !error.empty()) {
      results.note_error(row_name(name, set.suffix), error);
      return;
    }
  }
  std::vector<std::byte> copy(rec::kTargetChunkBytes);
  std::vector<double> copies;
  std::vector<std::vector<double>> rates(std::size(kCodecs));
  std::vector<double> ratios(std::size(kCodecs));
  for (int rep = 0; rep < config.reps; ++rep) {
    // memcpy of the same chunks: the floor every codec row is compared with.
    const double start = thread_cpu_s();
    for (std::size_t at = 0; at + rec::kTargetChunkBytes <= data.size(); at += rec::kTargetChunkBytes)
      std::memcpy(copy.data(), data.data() + at, rec::kTargetChunkBytes);
    const double cpu = thread_cpu_s() - start;
    copies.push_back(cpu > 0 ? static_cast<double>(data.size()) / 1e6 / cpu : 0);
    for (std::size_t i = 0; i < std::size(kCodecs); ++i) {
      const CodecResult r = run_codec(encoders[i], data);
      if (!r.error.empty() || r.ratio == 0) {
        results.note_error(row_name(kCodecs[i], set.suffix), r.error.empty() ? "no bytes came out" : r.error);
        return;
      }
      rates[i].push_back(r.mb_per_core_s);
      ratios[i] = r.ratio;  // the same data each time: the same ratio
    }
  }
  const std::string base = "base.memcpy." + std::string(set.suffix);
  results.add_row(make_row(base, kUnitMBps, copies));
  std::vector<AtLeast> comparisons;
  for (std::size_t i = 0; i < std::size(kCodecs); ++i) {
    const std::string row = row_name(kCodecs[i], set.suffix);
    results.add_row(make_row(row, kUnitMBps, rates[i]));
    fields.add(row, "ratio", ratios[i], 3);
    // What the codec lets a disk of D MB/s hold: min(D x ratio, the codec's MB/s x cores).
    comparisons.push_back({row, base, 0});
  }
  compare_at_least(results, comparisons);
}

}  // namespace

void run_codec_line(const Config& config, Results& results, Fields& fields) {
  for (const DataSet& set : kDataSets) run_data_set(config, set, results, fields);
}

}  // namespace weir::bench
