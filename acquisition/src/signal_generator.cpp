// The simulator's signal sources. Every per-sample loop is specialised per signal kind and output
// type through generate(), so the hot path has no per-sample dispatch.
#include "weir/acq/signal_generator.hpp"

#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <numbers>
#include <string>
#include <type_traits>

namespace weir::acq {

namespace {

constexpr double kTwoPi = 2 * std::numbers::pi;
constexpr double kUniformScale = 0x1.0p-53;   // 53 random bits -> a double in [0, 1)
constexpr double kNegligibleState = 1e-30;    // a pulse sum below this is flushed to 0: no denormals
constexpr double kMinDecaySamples = 2;        // a pulse must decay over at least this many samples to be seen

struct SignalName {
  SignalKind kind;
  const char* name;
};
constexpr SignalName kSignals[] = {{SignalKind::sine, "sine"},
                                   {SignalKind::square, "square"},
                                   {SignalKind::chirp, "chirp"},
                                   {SignalKind::noise, "noise"},
                                   {SignalKind::pulses, "pulses"}};

std::string num(double value) {
  std::array<char, 32> text{};
  std::snprintf(text.data(), text.size(), "%g", value);
  return text.data();
}

tl::unexpected<core::Error> refuse(const std::string& why) {
  return core::fail(core::Errc::invalid_argument, "signal: " + why);
}

// ADC codes of an integer type: +-full_scale spans the range; unsigned types are offset binary.
template <class T>
struct Quantizer {
  static constexpr bool kSigned = std::numeric_limits<T>::is_signed;
  static constexpr int kBits = std::numeric_limits<T>::digits + (kSigned ? 1 : 0);
  static constexpr double kHalf = static_cast<double>(std::uint64_t{1} << (kBits - 1));  // 2^(bits-1), exact
  static constexpr double kLow = kSigned ? -kHalf : 0.0;                                 // smallest code, exact
  static constexpr double kEnd = kSigned ? kHalf : 2 * kHalf;                            // one past the largest code

  explicit Quantizer(double full_scale) noexcept : gain(kHalf / full_scale) {}

  // Rounds to the nearest code and saturates; compares before converting, since converting an
  // out-of-range double to an integer is undefined. NaN saturates low.
  T operator()(double volts, std::uint64_t& saturated) const noexcept {
    const double code = std::nearbyint(volts * gain + (kSigned ? 0.0 : kHalf));
    if (code >= kEnd) {
      ++saturated;
      return std::numeric_limits<T>::max();
    }
    if (!(code >= kLow)) {
      ++saturated;
      return std::numeric_limits<T>::min();
    }
    return static_cast<T>(code);
  }
  double gain;
};

template <class T>
void store(std::byte* out, std::size_t i, T value) noexcept {
  std::memcpy(out + i * sizeof(T), &value, sizeof(T));  // the slot is raw bytes: no aliasing assumptions
}

}  // namespace

core::Result<SignalKind> parse_signal(std::string_view text) {
  for (const auto& s : kSignals)
    if (text == s.name) return s.kind;
  return core::fail(core::Errc::invalid_argument,
                    "unknown signal '" + std::string(text) + "': use sine, square, chirp, noise or pulses");
}

const char* signal_name(SignalKind kind) noexcept {
  for (const auto& s : kSignals)
    if (s.kind == kind) return s.name;
  return "unknown";
}

core::Result<SignalGenerator> SignalGenerator::create(const SignalConfig& config, std::uint32_t block_samples) {
  const double rate = config.sample_rate_hz;
  if (!std::isfinite(rate) || rate <= 0) return refuse("sample rate must be positive, not " + num(rate));
  if (block_samples == 0) return refuse("a block must hold at least one sample");
  if (!std::isfinite(config.amplitude) || config.amplitude < 0)
    return refuse("amplitude must be a finite number >= 0, not " + num(config.amplitude));
  if (!std::isfinite(config.offset)) return refuse("offset must be finite");
  const double nyquist = rate / 2;
  const auto check_frequency = [&](const char* what, double f) -> core::Result<void> {
    if (!std::isfinite(f) || f < 0) return refuse(std::string(what) + " must be >= 0 Hz, not " + num(f));
    if (f > nyquist)
      return refuse(std::string(what) + " " + num(f) + " Hz is above the Nyquist frequency " + num(nyquist) +
                    " Hz of a " + num(rate) + " Hz sample rate");
    return {};
  };
  switch (config.kind) {
    case SignalKind::sine:
    case SignalKind::square:
      if (auto ok = check_frequency("frequency", config.frequency_hz); !ok) return tl::make_unexpected(ok.error());
      break;
    case SignalKind::chirp: {
      if (auto ok = check_frequency("chirp start frequency", config.frequency_hz); !ok)
        return tl::make_unexpected(ok.error());
      const double end = config.chirp_end_hz > 0 ? config.chirp_end_hz : rate / 10;
      if (auto ok = check_frequency("chirp end frequency", end); !ok) return tl::make_unexpected(ok.error());
      if (!std::isfinite(config.chirp_sweep_s) || config.chirp_sweep_s * rate < 1)
        return refuse("chirp sweep must last at least one sample");
      break;
    }
    case SignalKind::noise: break;
    case SignalKind::pulses: {
      const PulseConfig& p = config.pulses;
      if (!std::isfinite(p.count_rate_hz) || p.count_rate_hz <= 0)
        return refuse("pulse count rate must be positive, not " + num(p.count_rate_hz));
      if (!std::isfinite(p.rise_s) || !std::isfinite(p.decay_s) || p.rise_s <= 0 || p.decay_s <= p.rise_s)
        return refuse("pulse rise (" + num(p.rise_s) + " s) must be positive and shorter than its decay (" +
                   num(p.decay_s) + " s)");
      if (p.decay_s * rate < kMinDecaySamples)
        return refuse("pulse decay " + num(p.decay_s) + " s is shorter than " + num(kMinDecaySamples) +
                      " samples at " + num(rate) + " Hz: pulses would be lost between samples; raise the rate or "
                      "the decay time");
      double weight = p.continuum_weight;
      for (const auto& line : p.lines) {
        if (!std::isfinite(line.height) || !std::isfinite(line.weight) || line.weight < 0)
          return refuse("spectrum lines need finite heights and weights >= 0");
        weight += line.weight;
      }
      if (!std::isfinite(weight) || !(weight > 0) || p.continuum_weight < 0)
        return refuse("the pulse-height spectrum has no line or continuum with weight > 0");
      if (!std::isfinite(p.line_sigma) || p.line_sigma < 0 || !std::isfinite(p.baseline_noise) ||
          p.baseline_noise < 0 || !std::isfinite(p.continuum_max) || p.continuum_max < 0)
        return refuse("line width, continuum end and baseline noise must be finite and >= 0");
      break;
    }
  }
  return SignalGenerator(config, block_samples);
}

SignalGenerator::SignalGenerator(const SignalConfig& config, std::uint32_t block_samples)
    : config_(config), rng_(config.seed), noise_(config.seed), scratch_(block_samples) {
  const double rate = config.sample_rate_hz;
  step_cycles_ = config.frequency_hz / rate;
  if (config.kind == SignalKind::chirp) {
    const double end = config.chirp_end_hz > 0 ? config.chirp_end_hz : rate / 10;
    chirp_sweep_samples_ = std::max(1.0, std::round(config.chirp_sweep_s * rate));
    chirp_f0_ = config.frequency_hz / rate;
    chirp_slope_ = (end / rate - chirp_f0_) / chirp_sweep_samples_;
  }
  if (config.kind == SignalKind::pulses) {
    const PulseConfig& p = config.pulses;
    decay_samples_ = p.decay_s * rate;
    rise_samples_ = p.rise_s * rate;
    decay_per_sample_ = std::exp(-1 / decay_samples_);
    rise_per_sample_ = std::exp(-1 / rise_samples_);
    // Peak of exp(-t/d) - exp(-t/r) lies at t = r d / (d - r) ln(d / r).
    const double peak_t = p.rise_s * p.decay_s / (p.decay_s - p.rise_s) * std::log(p.decay_s / p.rise_s);
    peak_norm_ = 1 / (std::exp(-peak_t / p.decay_s) - std::exp(-peak_t / p.rise_s));
    samples_per_pulse_ = rate / p.count_rate_hz;
    total_weight_ = p.continuum_weight;
    double highest = 0;
    for (const auto& line : p.lines) {
      total_weight_ += line.weight;
      highest = std::max(highest, line.height);
    }
    continuum_max_ = p.continuum_max > 0 ? p.continuum_max : highest;
    to_next_pulse_ = next_interval();
  }
}

double SignalGenerator::uniform() noexcept {
  return static_cast<double>((rng_() >> 11) + 1) * kUniformScale;  // (0, 1]: safe to take the log of
}

double SignalGenerator::normal() noexcept {
  if (has_spare_) {
    has_spare_ = false;
    return spare_normal_;
  }
  const double radius = std::sqrt(-2 * std::log(uniform()));
  const double angle = kTwoPi * uniform();
  spare_normal_ = radius * std::sin(angle);
  has_spare_ = true;
  return radius * std::cos(angle);
}

double SignalGenerator::next_interval() noexcept { return -std::log(uniform()) * samples_per_pulse_; }

double SignalGenerator::pulse_height() noexcept {
  const PulseConfig& p = config_.pulses;
  double pick = uniform() * total_weight_;
  for (const auto& line : p.lines) {
    if (pick <= line.weight) return line.height * (1 + p.line_sigma * normal());
    pick -= line.weight;
  }
  return continuum_max_ * uniform();
}

template <class Sink>
void SignalGenerator::generate(std::size_t count, Sink&& sink) noexcept {
  const double a = config_.amplitude;
  const double offset = config_.offset;
  switch (config_.kind) {
    case SignalKind::sine:
      for (std::size_t i = 0; i < count; ++i) {
        sink(i, offset + a * std::sin(kTwoPi * cycles_));
        cycles_ += step_cycles_;
        if (cycles_ >= 1) cycles_ -= 1;  // step <= 0.5 (Nyquist), so one subtraction keeps [0, 1)
      }
      break;
    case SignalKind::square:
      for (std::size_t i = 0; i < count; ++i) {
        sink(i, offset + (cycles_ < 0.5 ? a : -a));
        cycles_ += step_cycles_;
        if (cycles_ >= 1) cycles_ -= 1;
      }
      break;
    case SignalKind::chirp:
      for (std::size_t i = 0; i < count; ++i) {
        sink(i, offset + a * std::sin(kTwoPi * cycles_));
        // Phase f0 t + k t^2 / 2 advances by f0 + k (t + 1/2) per sample: exact for a linear sweep.
        cycles_ += chirp_f0_ + chirp_slope_ * (chirp_t_ + 0.5);
        cycles_ -= std::floor(cycles_);
        chirp_t_ += 1;
        if (chirp_t_ >= chirp_sweep_samples_) chirp_t_ = 0;  // the sweep restarts, the phase stays continuous
      }
      break;
    case SignalKind::noise:
      for (std::size_t i = 0; i < count;) {
        const float* z = nullptr;
        const std::size_t n = noise_.take(count - i, &z);
        for (std::size_t j = 0; j < n; ++j) sink(i + j, offset + a * static_cast<double>(z[j]));
        i += n;
      }
      break;
    case SignalKind::pulses: {
      const double noise = config_.pulses.baseline_noise;
      for (std::size_t i = 0; i < count; ++i) {
        // Sample n sees every pulse that arrived in (n - 1, n], each already `since` samples old.
        while (to_next_pulse_ <= 0) {
          const double since = -to_next_pulse_;
          const double height = pulse_height() * peak_norm_;
          decay_state_ += height * std::exp(-since / decay_samples_);
          rise_state_ += height * std::exp(-since / rise_samples_);
          ++pulse_count_;
          to_next_pulse_ += next_interval();
        }
        const double baseline = noise > 0 ? noise * static_cast<double>(noise_.next()) : 0.0;
        sink(i, offset + a * (decay_state_ - rise_state_ + baseline));
        decay_state_ *= decay_per_sample_;
        rise_state_ *= rise_per_sample_;
        if (decay_state_ < kNegligibleState) decay_state_ = 0;
        if (rise_state_ < kNegligibleState) rise_state_ = 0;
        to_next_pulse_ -= 1;
      }
      break;
    }
  }
  position_ += count;
}

void SignalGenerator::fill(std::span<float> out) noexcept {
  float* p = out.data();
  generate(out.size(), [p](std::size_t i, double v) { p[i] = static_cast<float>(v); });
}

void SignalGenerator::fill(std::span<double> out) noexcept {
  double* p = out.data();
  generate(out.size(), [p](std::size_t i, double v) { p[i] = v; });
}

FillResult SignalGenerator::fill(core::Dtype dtype, std::span<std::byte> out, std::uint32_t count,
                                 double full_scale) noexcept {
  FillResult result;
  std::byte* p = out.data();
  const auto as_integer = [&]<class T>(T /*tag*/) {
    const Quantizer<T> q(full_scale);
    std::uint64_t& saturated = result.saturated;
    generate(count, [p, q, &saturated](std::size_t i, double v) { store<T>(p, i, q(v, saturated)); });
  };
  switch (dtype) {
    case core::Dtype::i8: as_integer(std::int8_t{}); break;
    case core::Dtype::u8: as_integer(std::uint8_t{}); break;
    case core::Dtype::i16: as_integer(std::int16_t{}); break;
    case core::Dtype::u16: as_integer(std::uint16_t{}); break;
    case core::Dtype::i32: as_integer(std::int32_t{}); break;
    case core::Dtype::u32: as_integer(std::uint32_t{}); break;
    case core::Dtype::i64: as_integer(std::int64_t{}); break;
    case core::Dtype::f32: generate(count, [p](std::size_t i, double v) { store<float>(p, i, static_cast<float>(v)); }); break;
    case core::Dtype::f64: generate(count, [p](std::size_t i, double v) { store<double>(p, i, v); }); break;
    case core::Dtype::c64:  // a real signal in a complex stream: imaginary part zero
      generate(count, [p](std::size_t i, double v) {
        store<float>(p, 2 * i, static_cast<float>(v));
        store<float>(p, 2 * i + 1, 0.0F);
      });
      break;
  }
  return result;
}

void SignalGenerator::skip(std::uint64_t count) noexcept {
  while (count > 0) {
    const std::size_t n = count < scratch_.size() ? static_cast<std::size_t>(count) : scratch_.size();
    fill(std::span<float>(scratch_.data(), n));
    count -= n;
  }
}

}  // namespace weir::acq
