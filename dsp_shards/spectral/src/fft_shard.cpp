// The "fft" shard: a SpectrumEstimator behind the shard ABI. Each finished spectrum is copied
// into a freshly claimed block of output 0 and published with the acquisition time of the first
// input sample of the window it summarises (SampleClock). Output 0 is declared as frames of N/2+1
// bins along frequency; the keys <output>.window_s (+ _units) and <output>.dropped_samples say how
// long a full window is and how many samples made no spectrum. An input gap or stop first
// publishes what is accumulated as a partial spectrum (block flag WEIR_SHARD_PARTIAL), then starts
// afresh, so no spectrum spans a gap and the last one ends at the last input sample.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "shard_params.hpp"
#include "weir/dsp/detail/number_text.hpp"
#include "weir/dsp/sample_clock.hpp"
#include "weir/dsp/sample_convert.hpp"
#include "weir/dsp/shard_adapter.hpp"
#include "weir/dsp/shard_outputs.hpp"
#include "weir/dsp/spectral_limits.hpp"
#include "weir/dsp/spectral_shards.hpp"
#include "weir/dsp/spectrum_estimator.hpp"

namespace weir::dsp {

namespace {

constexpr weir_shard_param kFftParams[] = {
    {"size", WEIR_PARAM_INT, 0, "1024", kMinFftSize, kMaxFftSize, nullptr,
     "FFT length N: even, prime factors <= 13 (e.g. 1000, 1024, 4096); N/2+1 bins, bin k at k*fs/N Hz"},
    {"window", WEIR_PARAM_TEXT, 0, "hann", 0, 0, "rect|rectangular|hann|hamming|blackman|blackman-harris|flattop",
     "window applied to each frame (flattop: HFT95, for amplitudes between bins)"},
    {"overlap", WEIR_PARAM_REAL, 0, "0.5", 0, kMaxOverlap, nullptr, "fraction of N shared by consecutive frames"},
    {"average", WEIR_PARAM_TEXT, 0, "none", 0, 0, "none|linear|exponential",
     "none: every frame; linear: mean of `averages` frames; exponential: running, weight `alpha`"},
    {"averages", WEIR_PARAM_INT, 0, "8", 1, kMaxAverages, nullptr, "frames per spectrum (linear averaging)"},
    {"alpha", WEIR_PARAM_REAL, 0, "0.1", 0, 1, nullptr, "weight of the newest frame, (0, 1] (exponential averaging)"},
    {"spectrum", WEIR_PARAM_TEXT, 0, "psd", 0, 0, "amplitude|power|psd",
     "amplitude (peak, units), power (units^2), psd (units^2/Hz); all one-sided"},
    {"db", WEIR_PARAM_BOOL, 0, "false", 0, 0, nullptr, "10*log10 of power or psd, 20*log10 of amplitude"},
    {"wisdom", WEIR_PARAM_TEXT, 0, "", 0, 0, nullptr,
     "FFTW wisdom file; empty: $XDG_CACHE_HOME/weir/fftw3f.wisdom or ~/.cache/weir/fftw3f.wisdom; off: none"},
    {"plan", WEIR_PARAM_TEXT, 0, "measure", 0, 0, "estimate|measure|patient", "FFTW planning effort"},
};

// "V" -> "V^2"; "m/s" -> "(m/s)^2"; "" stays "".
std::string squared(const std::string& units) {
  if (units.empty()) return units;
  if (units.find_first_of("/*^ ") != std::string::npos) return "(" + units + ")^2";
  return units + "^2";
}

std::string spectrum_units(const std::string& input, SpectrumOutput output, bool db) {
  std::string base;
  switch (output) {
    case SpectrumOutput::amplitude: base = input; break;
    case SpectrumOutput::power: base = squared(input); break;
    case SpectrumOutput::psd: base = input.empty() ? "1/Hz" : squared(input) + "/Hz"; break;
  }
  if (!db) return base;
  return base == "1/Hz" ? "dB/Hz" : "dB" + base;  // dBV, dBV^2, dBV^2/Hz
}

class FftShard {
 public:
  static constexpr const char* kKind = "fft";
  static constexpr const char* kDescription =
      "FFT spectrum (FFTW r2c): frames of N samples, windowed, overlapped, averaged. Output: N/2+1 "
      "one-sided bins per block, bin k at k*fs/N Hz (0 .. fs/2): amplitude (a sine of peak A reads A), "
      "power (A^2/2) or PSD (units^2/Hz; white noise of variance s^2 reads 2 s^2/fs), optionally in dB.";
  static constexpr const auto& kParams = kFftParams;
  static constexpr std::uint32_t kInputDtypes = kRealDtypes;

  static core::Result<std::unique_ptr<FftShard>> configure(weir_shard_config& cfg) {
    if (auto ok = detail::check_input(cfg); !ok) return tl::make_unexpected(ok.error());
    const ParamReader params(kParams, cfg, detail::spectral_wording);
    SpectrumConfig sc;
    sc.sample_rate_hz = cfg.input_rate_hz;

    auto size = params.integer("size");
    if (!size) return tl::make_unexpected(size.error());
    if (*size % 2 != 0)
      return tl::make_unexpected(detail::bad("size", std::to_string(*size),
                                            "must be even; allowed even numbers " + std::to_string(kMinFftSize) +
                                                " .. " + std::to_string(kMaxFftSize) + " with prime factors <= " +
                                                std::to_string(kMaxFftPrimeFactor)));
    sc.size = static_cast<std::uint32_t>(*size);
    if (!is_allocation_free_size(sc.size))
      return tl::make_unexpected(
          detail::bad("size", std::to_string(*size),
                     "has the prime factor " + std::to_string(largest_prime_factor(sc.size)) +
                         ", which makes FFTW allocate on every transform; use prime factors <= " +
                         std::to_string(kMaxFftPrimeFactor) + ", e.g. " +
                         std::to_string(next_allocation_free_size(sc.size))));

    auto window_text = params.text("window");
    if (!window_text) return tl::make_unexpected(window_text.error());
    auto window = parse_window(*window_text);
    if (!window || *window == WindowKind::kaiser)
      return tl::make_unexpected(detail::bad("window", *window_text, "not one of " + std::string(kParams[1].choices)));
    sc.window.kind = *window;

    auto overlap = params.real("overlap");
    if (!overlap) return tl::make_unexpected(overlap.error());
    sc.overlap = *overlap;

    auto average_text = params.text("average");
    if (!average_text) return tl::make_unexpected(average_text.error());
    auto average = parse_averaging(*average_text);
    if (!average) return tl::make_unexpected(detail::bad("average", *average_text, average.error().what));
    sc.averaging = *average;

    auto averages = params.integer("averages");
    if (!averages) return tl::make_unexpected(averages.error());
    sc.averages = static_cast<std::uint32_t>(*averages);

    auto alpha = params.real("alpha");
    if (!alpha) return tl::make_unexpected(alpha.error());
    if (sc.averaging == Averaging::exponential && !(*alpha > 0))
      return tl::make_unexpected(detail::bad("alpha", detail::num(*alpha),
                                            "exponential averaging needs alpha in (0, 1]"));
    sc.alpha = *alpha;

    auto output_text = params.text("spectrum");
    if (!output_text) return tl::make_unexpected(output_text.error());
    auto output = parse_spectrum_output(*output_text);
    if (!output) return tl::make_unexpected(detail::bad("spectrum", *output_text, output.error().what));
    sc.output = *output;

    auto db = params.boolean("db");
    if (!db) return tl::make_unexpected(db.error());
    sc.db = *db;

    auto wisdom = params.text("wisdom");
    if (!wisdom) return tl::make_unexpected(wisdom.error());
    sc.wisdom.use = *wisdom != "off";
    if (sc.wisdom.use) sc.wisdom.path = std::string(*wisdom);

    auto plan = params.text("plan");
    if (!plan) return tl::make_unexpected(plan.error());
    sc.effort = *plan == "estimate"  ? PlanEffort::estimate
                : *plan == "patient" ? PlanEffort::patient
                                     : PlanEffort::measure;

    auto estimator = SpectrumEstimator::create(sc);
    if (!estimator) return tl::make_unexpected(estimator.error());
    const auto bins = static_cast<std::uint32_t>(estimator->bins());
    const std::string units = spectrum_units(cfg.input_units != nullptr ? cfg.input_units : "", sc.output, sc.db);
    if (auto ok = detail::declare_channel(cfg, detail::output_name(cfg, spectrum_output_name(sc.output)),
                                          bins * estimator->spectra_per_second(), bins, units);
        !ok)
      return tl::make_unexpected(ok.error());
    // Each block is one spectrum: bin k at k * fs / N Hz, 0 .. fs/2.
    const OutputAxis frequency{"frequency", "Hz", 0.0, cfg.input_rate_hz / static_cast<double>(sc.size)};
    if (auto framed = set_frames(cfg.outputs[0], bins, frequency); !framed) return tl::make_unexpected(framed.error());
    const std::string channel = cfg.outputs[0].name;
    auto window_key = detail::declare_key(cfg, channel + ".window_s", WEIR_KEY_F64, sizeof(double));
    if (!window_key) return tl::make_unexpected(window_key.error());
    auto units_key = detail::declare_key(cfg, channel + ".window_s_units", WEIR_KEY_TEXT, 1);
    if (!units_key) return tl::make_unexpected(units_key.error());
    auto dropped_key = detail::declare_key(cfg, channel + ".dropped_samples", WEIR_KEY_U64, sizeof(std::uint64_t));
    if (!dropped_key) return tl::make_unexpected(dropped_key.error());
    // The clock keeps the stamps of every block a full window can span, plus the partial blocks
    // at its ends (a window's first sample is never older than that).
    const std::uint64_t span = estimator->span_samples();
    const std::size_t blocks = static_cast<std::size_t>(
        std::min<std::uint64_t>(span / cfg.input_samples_per_block + 3, kMaxClockBlocks));
    return std::unique_ptr<FftShard>(new FftShard(std::move(*estimator), static_cast<core::Dtype>(cfg.input_dtype),
                                                  SampleClock(blocks, cfg.input_rate_hz),
                                                  static_cast<double>(span) / cfg.input_rate_hz));
  }

  int process(const weir_shard_block& in, const weir_shard_host& host) noexcept {
    status_ = 0;
    if (!meta_written_) write_meta(host);
    if (in.count == 0) return 0;
    // A gap (the host flags every kind): what came before is a partial spectrum of its own, and
    // the next window starts with this block.
    if ((in.flags & WEIR_SHARD_AFTER_GAP) != 0) flush_now(host);
    if (clock_.empty()) origin_ = in.first_sample;
    clock_.add(in);
    estimator_.process(dtype_, in.samples, in.count,
                       [&](std::span<const float> spectrum, const SpectrumSpan& span) noexcept {
                         publish(host, spectrum, span);
                       });
    return status_;
  }

  /// At stop: the partial spectrum up to the last input sample.
  int flush(const weir_shard_host& host) noexcept {
    status_ = 0;
    if (!meta_written_) write_meta(host);
    flush_now(host);
    return status_;
  }

 private:
  static constexpr std::uint64_t kMaxClockBlocks = 1U << 16;  // beyond: older stamps are extrapolated
  static constexpr std::uint32_t kSpectrum = 0, kWindowS = 1, kWindowUnits = 2, kDropped = 3;  // outputs

  FftShard(SpectrumEstimator estimator, core::Dtype dtype, SampleClock clock, double window_s)
      : estimator_(std::move(estimator)), dtype_(dtype), clock_(std::move(clock)), window_s_(window_s) {}

  void publish(const weir_shard_host& host, std::span<const float> spectrum, const SpectrumSpan& span) noexcept {
    std::uint32_t capacity = 0;
    void* block = host.claim(host.self, kSpectrum, &capacity);
    if (block == nullptr) return;  // dropped at the source: the arena counts it
    if (capacity < spectrum.size()) {
      status_ = -1;  // the host gave less than the declared block: a contract breach, counted
      return;
    }
    std::memcpy(block, spectrum.data(), spectrum.size_bytes());
    host.publish(host.self, kSpectrum, static_cast<std::uint32_t>(spectrum.size()), clock_.realtime_of(origin_ + span.first),
                 span.partial ? WEIR_SHARD_PARTIAL : 0U);
  }

  void flush_now(const weir_shard_host& host) noexcept {
    const std::uint64_t dropped = estimator_.dropped_samples();
    estimator_.flush([&](std::span<const float> spectrum, const SpectrumSpan& span) noexcept {
      publish(host, spectrum, span);
    });
    clock_.clear();
    if (estimator_.dropped_samples() != dropped) {
      unsigned char word[8];
      const std::uint64_t value = estimator_.dropped_samples();
      for (std::size_t b = 0; b < sizeof word; ++b) word[b] = static_cast<unsigned char>((value >> (8 * b)) & 0xFFU);
      if (host.set_key(host.self, kDropped, word, sizeof word) != 0) status_ = -1;
    }
  }

  void write_meta(const weir_shard_host& host) noexcept {
    const unsigned char zero[8] = {};
    meta_written_ = host.set_key(host.self, kWindowS, &window_s_, sizeof window_s_) == 0 &&
                    host.set_key(host.self, kWindowUnits, "s", 1) == 0 &&
                    host.set_key(host.self, kDropped, zero, sizeof zero) == 0;
  }

  SpectrumEstimator estimator_;
  core::Dtype dtype_;
  SampleClock clock_;
  double window_s_;               // a full spectrum's span, s
  std::uint64_t origin_ = 0;      // stream index of the estimator's sample offset 0
  bool meta_written_ = false;     // window_s and its units: written until one write succeeds
  int status_ = 0;
};

}  // namespace

}  // namespace weir::dsp

extern "C" const weir_shard_api* weir_builtin_fft(uint32_t v) { return weir::dsp::shard_entry<weir::dsp::FftShard>(v); }
