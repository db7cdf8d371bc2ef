// The "filter" shard: one filter stage (FIR, biquad cascade or DC blocker) and optional
// decimation, on float copies of the input taken kFilterChunkSamples at a time. Output blocks
// hold exactly input samples_per_block / decimate samples: configure requires divisibility, and
// process cuts its chunks so a block is published the moment it is full.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "shard_params.hpp"
#include "weir/dsp/biquad.hpp"
#include "weir/dsp/dc_blocker.hpp"
#include "weir/dsp/decimator.hpp"
#include "weir/dsp/detail/number_text.hpp"
#include "weir/dsp/fir_design.hpp"
#include "weir/dsp/fir_filter.hpp"
#include "weir/dsp/sample_convert.hpp"
#include "weir/dsp/shard_adapter.hpp"
#include "weir/dsp/spectral_limits.hpp"
#include "weir/dsp/spectral_shards.hpp"

namespace weir::dsp {

namespace {

using detail::num;

constexpr double kMaxHz = 1e15;  // declared bound of frequency parameters; the real one is Nyquist

constexpr weir_shard_param kFilterParams[] = {
    {"type", WEIR_PARAM_TEXT, 0, "lowpass", 0, 0,
     "lowpass|highpass|bandpass|bandstop|biquad-lowpass|biquad-highpass|biquad-bandpass|notch|dc",
     "FIR (windowed sinc): lowpass highpass bandpass bandstop; biquad (RBJ): biquad-* and notch; dc: DC blocker"},
    {"cutoff", WEIR_PARAM_REAL, 0, nullptr, 0, kMaxHz, nullptr,
     "Hz: the corner (FIR -6 dB), a band's lower edge, a biquad's f0, or the DC blocker's corner; below fs/2"},
    {"cutoff_high", WEIR_PARAM_REAL, 0, "0", 0, kMaxHz, nullptr, "Hz: a band's upper edge (bandpass, bandstop)"},
    {"taps", WEIR_PARAM_INT, 0, "101", kMinFirTaps, kMaxFirTaps, nullptr,
     "FIR length; odd for highpass and bandstop; delay (taps-1)/2 samples"},
    {"q", WEIR_PARAM_REAL, 0, "0.7071067811865476", 1e-3, 1e3, nullptr, "biquad quality factor"},
    {"sections", WEIR_PARAM_INT, 0, "1", 1, kMaxBiquadSections, nullptr, "identical biquad sections in cascade"},
    {"decimate", WEIR_PARAM_INT, 0, "1", 1, kMaxDecimation, nullptr,
     "keep every M-th sample after an anti-alias low-pass; must divide the input block size"},
    {"window", WEIR_PARAM_TEXT, 0, "hamming", 0, 0, "rect|rectangular|hann|hamming|blackman|kaiser",
     "FIR design window (hamming ~53 dB, blackman ~74 dB stop band)"},
    {"beta", WEIR_PARAM_REAL, 0, "8.6", 0, 50, nullptr, "Kaiser window beta"},
};

enum class Stage : std::uint8_t { none, fir, biquad, dc };

struct Plan {
  Stage stage = Stage::none;
  std::optional<FirFilter> fir;
  std::optional<BiquadCascade> biquad;
  std::optional<DcBlocker> dc;
  std::optional<Decimator> decimator;
};

core::Result<FirBand> fir_band(std::string_view type) {
  if (type == "lowpass") return FirBand::lowpass;
  if (type == "highpass") return FirBand::highpass;
  if (type == "bandpass") return FirBand::bandpass;
  return FirBand::bandstop;
}

class FilterShard {
 public:
  static constexpr const char* kKind = "filter";
  static constexpr const char* kDescription =
      "Filters a channel into f32 samples: windowed-sinc FIR (lowpass, highpass, bandpass, bandstop; delay "
      "(taps-1)/2 samples), RBJ biquads (lowpass, highpass, bandpass, notch at f0 with Q), or a one-pole DC "
      "blocker; then optional decimation by M (anti-alias FIR, output rate fs/M, blocks of input block / M).";
  static constexpr const auto& kParams = kFilterParams;
  static constexpr std::uint32_t kInputDtypes = kRealDtypes;

  static core::Result<std::unique_ptr<FilterShard>> configure(weir_shard_config& cfg) {
    if (auto ok = detail::check_input(cfg); !ok) return tl::make_unexpected(ok.error());
    const ParamReader params(kParams, cfg, detail::spectral_wording);
    const double fs = cfg.input_rate_hz;
    const double nyquist = fs / 2;

    auto type = params.text("type");
    if (!type) return tl::make_unexpected(type.error());
    auto cutoff = params.real("cutoff");
    if (!cutoff) return tl::make_unexpected(cutoff.error());
    if (!(*cutoff > 0 && *cutoff < nyquist))
      return tl::make_unexpected(detail::bad("cutoff", num(*cutoff),
                                            "must lie in (0, " + num(nyquist) + ") Hz, below the Nyquist frequency of "
                                            "the " + num(fs) + " Hz input"));
    auto decimate = params.integer("decimate");
    if (!decimate) return tl::make_unexpected(decimate.error());
    const auto factor = static_cast<std::uint32_t>(*decimate);
    if (cfg.input_samples_per_block % factor != 0)
      return tl::make_unexpected(detail::bad("decimate", std::to_string(factor),
                                            "must divide the input's " + std::to_string(cfg.input_samples_per_block) +
                                                " samples per block"));
    auto window = fir_window(params);
    if (!window) return tl::make_unexpected(window.error());

    Plan plan;
    bool merged = false;  // the FIR low-pass doubles as the decimator's anti-alias filter
    if (*type == "dc") {
      auto dc = DcBlocker::create(*cutoff, fs);
      if (!dc) return tl::make_unexpected(detail::bad("cutoff", num(*cutoff), dc.error().what));
      plan.stage = Stage::dc;
      plan.dc.emplace(*dc);
    } else if (type->starts_with("biquad-") || *type == "notch") {
      auto biquad = make_biquad(params, *type, *cutoff, fs);
      if (!biquad) return tl::make_unexpected(biquad.error());
      plan.stage = Stage::biquad;
      plan.biquad.emplace(std::move(*biquad));
    } else {
      auto taps = make_fir(params, *type, *cutoff, fs, *window);
      if (!taps) return tl::make_unexpected(taps.error());
      if (factor > 1 && *type == "lowpass" && *cutoff < nyquist / factor) {
        auto decimator = Decimator::create(factor, std::move(*taps), fs);
        if (!decimator) return tl::make_unexpected(decimator.error());
        plan.decimator.emplace(std::move(*decimator));
        merged = true;
      } else {
        auto fir = FirFilter::create(std::move(*taps));
        if (!fir) return tl::make_unexpected(fir.error());
        plan.stage = Stage::fir;
        plan.fir.emplace(std::move(*fir));
      }
    }
    if (factor > 1 && !merged) {
      auto decimator = Decimator::create_antialias(factor, fs, *window);
      if (!decimator)
        return tl::make_unexpected(detail::bad("decimate", std::to_string(factor), decimator.error().what));
      plan.decimator.emplace(std::move(*decimator));
    }
    const std::uint32_t out_block = cfg.input_samples_per_block / factor;
    if (auto ok = detail::declare_channel(cfg, detail::output_name(cfg, "filt"), fs / factor, out_block,
                                          cfg.input_units != nullptr ? cfg.input_units : "");
        !ok)
      return tl::make_unexpected(ok.error());
    return std::unique_ptr<FilterShard>(
        new FilterShard(std::move(plan), static_cast<core::Dtype>(cfg.input_dtype), out_block));
  }

  int process(const weir_shard_block& in, const weir_shard_host& host) noexcept;

 private:
  FilterShard(Plan plan, core::Dtype dtype, std::uint32_t out_block)
      : plan_(std::move(plan)),
        dtype_(dtype),
        out_block_(out_block),
        scratch_(kFilterChunkSamples),
        discard_(out_block) {}

  static core::Result<WindowSpec> fir_window(const ParamReader& params) {
    auto text = params.text("window");
    if (!text) return tl::make_unexpected(text.error());
    auto kind = parse_window(*text);
    if (!kind) return tl::make_unexpected(detail::bad("window", *text, kind.error().what));
    auto beta = params.real("beta");
    if (!beta) return tl::make_unexpected(beta.error());
    return WindowSpec{*kind, *beta};
  }

  static core::Result<std::vector<float>> make_fir(const ParamReader& params, std::string_view type, double cutoff,
                                                   double fs, const WindowSpec& window) {
    auto band = fir_band(type);
    FirSpec spec;
    spec.band = *band;
    spec.sample_rate_hz = fs;
    spec.cutoff_hz = cutoff;
    spec.window = window;
    auto taps = params.integer("taps");
    if (!taps) return tl::make_unexpected(taps.error());
    spec.taps = static_cast<std::uint32_t>(*taps);
    if ((spec.band == FirBand::highpass || spec.band == FirBand::bandstop) && spec.taps % 2 == 0)
      return tl::make_unexpected(detail::bad("taps", std::to_string(spec.taps),
                                            std::string(type) + " needs an odd number of taps"));
    if (spec.band == FirBand::bandpass || spec.band == FirBand::bandstop) {
      auto high = params.real("cutoff_high");
      if (!high) return tl::make_unexpected(high.error());
      if (!(*high > cutoff && *high < fs / 2))
        return tl::make_unexpected(detail::bad("cutoff_high", num(*high),
                                              "a band needs cutoff < cutoff_high < " + num(fs / 2) +
                                                  " Hz (Nyquist); cutoff is " + num(cutoff) + " Hz"));
      spec.cutoff_high_hz = *high;
    }
    auto designed = design_fir(spec);
    if (!designed) return tl::make_unexpected(designed.error());
    return designed;
  }

  static core::Result<BiquadCascade> make_biquad(const ParamReader& params, std::string_view type, double f0,
                                                 double fs) {
    BiquadType kind = BiquadType::notch;
    if (type == "biquad-lowpass") kind = BiquadType::lowpass;
    if (type == "biquad-highpass") kind = BiquadType::highpass;
    if (type == "biquad-bandpass") kind = BiquadType::bandpass;
    auto q = params.real("q");
    if (!q) return tl::make_unexpected(q.error());
    auto sections = params.integer("sections");
    if (!sections) return tl::make_unexpected(sections.error());
    auto coeffs = design_biquad(kind, f0, *q, fs);
    if (!coeffs) return tl::make_unexpected(detail::bad("q", num(*q), coeffs.error().what));
    auto cascade = BiquadCascade::create(std::vector<BiquadCoeffs>(static_cast<std::size_t>(*sections), *coeffs));
    if (!cascade) return tl::make_unexpected(cascade.error());
    return cascade;
  }

  // Outputs the next `inputs` samples make, and the inputs needed to make exactly `outputs`.
  [[nodiscard]] std::size_t outputs_for(std::size_t inputs) const noexcept {
    return plan_.decimator ? plan_.decimator->outputs_for(inputs) : inputs;
  }
  [[nodiscard]] std::size_t inputs_for(std::size_t outputs) const noexcept {
    if (!plan_.decimator) return outputs;
    return plan_.decimator->inputs_until_output() + (outputs - 1) * plan_.decimator->factor();
  }

  void reset_state() noexcept {
    if (plan_.fir) plan_.fir->reset();
    if (plan_.biquad) plan_.biquad->reset();
    if (plan_.dc) plan_.dc->reset();
    if (plan_.decimator) plan_.decimator->reset();
  }

  void run_stage(std::span<float> samples) noexcept {
    switch (plan_.stage) {
      case Stage::none: break;
      case Stage::fir: plan_.fir->process(samples, samples); break;
      case Stage::biquad: plan_.biquad->process(samples, samples); break;
      case Stage::dc: plan_.dc->process(samples, samples); break;
    }
  }

  Plan plan_;
  core::Dtype dtype_;
  std::uint32_t out_block_;
  std::vector<float> scratch_;  // one chunk of input, filtered in place
  std::vector<float> discard_;  // where outputs go when the host dropped the block at the source
};

int FilterShard::process(const weir_shard_block& in, const weir_shard_host& host) noexcept {
  // Each output block keeps its input block's time. After an input gap the filter starts from rest,
  // so no output sample mixes input from both sides of the gap.
  if ((in.flags & WEIR_SHARD_AFTER_GAP) != 0) reset_state();
  float* block = nullptr;  // the claimed output block, or discard_
  bool claimed = false;
  std::size_t capacity = 0;
  std::size_t fill = 0;
  const auto publish = [&] {
    if (claimed) host.publish(host.self, 0, static_cast<std::uint32_t>(fill), in.realtime_ns, 0);
    block = nullptr;
    fill = 0;
  };
  std::size_t done = 0;
  while (done < in.count) {
    std::size_t take = std::min<std::size_t>(in.count - done, scratch_.size());
    std::size_t outputs = outputs_for(take);
    if (outputs > 0 && block == nullptr) {
      std::uint32_t granted = 0;
      block = static_cast<float*>(host.claim(host.self, 0, &granted));
      claimed = block != nullptr && granted > 0;
      capacity = claimed ? std::min<std::size_t>(granted, out_block_) : discard_.size();
      if (!claimed) block = discard_.data();  // keep filtering: the state must follow the input
    }
    if (outputs > capacity - fill) {
      outputs = capacity - fill;
      take = inputs_for(outputs);
    }
    const std::span<float> chunk(scratch_.data(), take);
    to_float(dtype_, in.samples, done, chunk);
    run_stage(chunk);
    float* out = block != nullptr ? block + fill : discard_.data();  // no outputs at all: nothing claimed
    if (plan_.decimator) {
      (void)plan_.decimator->process(chunk, std::span<float>(out, outputs));
    } else {
      std::copy(chunk.begin(), chunk.end(), out);
    }
    fill += outputs;
    done += take;
    if (block != nullptr && fill == capacity) publish();
  }
  if (block != nullptr && fill > 0) publish();
  return 0;
}

}  // namespace

}  // namespace weir::dsp

extern "C" const weir_shard_api* weir_builtin_filter(uint32_t v) {
  return weir::dsp::shard_entry<weir::dsp::FilterShard>(v);
}
