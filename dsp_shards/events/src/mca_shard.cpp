// The "mca" shard: pulse-height spectrum (a u32 array key, one element per bin, little-endian), live
// and dead time, and the accepted, piled-up and out-of-range counts, all written together every
// `publish` seconds of stream time (sum of the spectrum + out of range = accepted, in every publish;
// out of range = underflow, below 0, + overflow, at or above the range: never in the spectrum). The spectrum's calibration (f32 bin centres, in `units` after `gain`) and its
// units are written once, so a reader can show counts against height or energy. With `energy` (a0, a1
// and optionally a2, keV) the axis is the energy a0 + a1 h + a2 h^2 of each bin centre's height h, in keV.
// Every publish also writes when its accumulation began and how long it has run (u64
// <output>.spectrum.start_ns, the acquisition time of its first input sample; f64
// <output>.spectrum.window_s), and <output>.spectrum.partial: 1 on the publish that closes an
// accumulation cut short by an input gap or by stop. After a gap the histogram starts afresh, so no
// spectrum holds pulses from both sides of one.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "shard_params.hpp"
#include "weir/dsp/detail/number_text.hpp"
#include "weir/dsp/sample_convert.hpp"
#include "weir/dsp/shard_adapter.hpp"
#include "weir/dsp/shard_outputs.hpp"
#include "weir/dsp/event_shards.hpp"
#include "weir/core/event_record.hpp"
#include "weir/dsp/mca.hpp"

namespace weir::dsp {

namespace {

constexpr double kMaxValue = 1e300;
constexpr std::uint64_t kMaxUnitsBytes = 31;  // as a channel's units field holds

constexpr weir_shard_param kMcaParams[] = {
    {"rise", WEIR_PARAM_REAL, 0, "4e-6", 0, 1, nullptr,
     "slow (measuring) trapezoid rise time, s; rounded to samples, at least 1"},
    {"flat", WEIR_PARAM_REAL, 0, "1e-6", 0, 1, nullptr,
     "slow trapezoid flat top, s; rounded to samples; should cover the pulses' rise time"},
    {"tau", WEIR_PARAM_REAL, 0, "50e-6", 0, 100, nullptr,
     "the pulses' exponential decay time for pole-zero correction, s; 0: step pulses (no decay)"},
    {"fast_rise", WEIR_PARAM_REAL, 0, "1e-7", 0, 1, nullptr,
     "fast (detecting) trapezoid rise time, s; rounded to samples, at least 1, at most the rise"},
    {"fast_flat", WEIR_PARAM_REAL, 0, "0", 0, 1, nullptr, "fast trapezoid flat top, s"},
    {"threshold", WEIR_PARAM_REAL, 0, "0.05", 0, kMaxValue, nullptr,
     "fast filter output that signals a pulse, input units (> 0); re-arms below half of it"},
    {"bins", WEIR_PARAM_INT, 0, "1024", Mca::kMinBins, Mca::kMaxBins, nullptr,
     "histogram bins; the spectrum key takes 4 bytes per bin"},
    {"range", WEIR_PARAM_REAL, 0, "1.5", 0, kMaxValue, nullptr, "largest height histogrammed (after gain)"},
    {"gain", WEIR_PARAM_REAL, 0, "1", 0, kMaxValue, nullptr, "fine gain: measured heights are multiplied by it"},
    {"units", WEIR_PARAM_TEXT, 0, "", 0, 0, nullptr,
     "units of heights after gain, e.g. keV when gain converts volts to energy; empty: the input's units"},
    {"energy", WEIR_PARAM_TEXT, 0, "", 0, 0, nullptr,
     "energy calibration, keV: \"a0,a1\" or \"a0,a1,a2\" (or {a0, a1, a2}): E = a0 + a1 h + a2 h^2 of the height h "
     "after gain, increasing over 0 to range; the axis is then energy in keV; empty: pulse height in `units`"},
    {"baseline", WEIR_PARAM_REAL, 0, "100e-6", 0, 1, nullptr,
     "baseline restoration: quiet time averaged, s; 0: off"},
    {"pileup", WEIR_PARAM_BOOL, 0, "true", 0, 0, nullptr,
     "reject both pulses when two arrive within the pile-up window"},
    {"publish", WEIR_PARAM_REAL, 0, "0.2", 0, 3600, nullptr,
     "seconds of stream time between writes of the spectrum and counters; 0: every block"},
    {"events", WEIR_PARAM_BOOL, 0, "true", 0, 0, nullptr,
     "publish every pulse as an event (time, height, flags) on the event channel <base>.pulses, a block per input block"},
    {"max_events", WEIR_PARAM_INT, 0, "256", 1, 65536, nullptr,
     "events one input block may hold; more are counted in <base>.pulses_dropped"},
};

struct McaShard {
  static constexpr const char* kKind = "mca";
  static constexpr const char* kDescription = "pulse-height analysis: trapezoidal shaping, pile-up rejection, histogram with live and dead time";
  static constexpr const auto& kParams = kMcaParams;
  static constexpr std::uint32_t kInputDtypes = kRealDtypes;
  static core::Result<std::unique_ptr<McaShard>> configure(weir_shard_config& cfg);
  int process(const weir_shard_block& in, const weir_shard_host& host) noexcept;
  int flush(const weir_shard_host& host) noexcept;

  explicit McaShard(Mca m) : mca(std::move(m)) {}
  Mca mca;
  std::uint32_t dtype = 0;
  std::vector<double> scratch;
  std::vector<unsigned char> le_spectrum;  // only on big-endian hosts: the key is little-endian
  std::vector<float> axis;                 // bin centres, after gain, in axis_units
  std::string axis_units;
  std::uint32_t spectrum = 0, live = 0, dead = 0, counts = 0, pileups = 0;  // output indices
  std::uint32_t spectrum_axis = 0, spectrum_axis_units = 0;                  // output indices
  std::uint32_t out_of_range = 0, underflow = 0, overflow = 0;              // output indices
  std::uint32_t start_ns = 0, window_s = 0, window_s_units = 0, partial = 0;  // output indices
  std::uint64_t origin_ns = 0;         // acquisition time of the accumulation's first sample
  bool started = false;
  double rate_hz = 0;
  bool axis_written = false;  // the calibration never changes: written until one write succeeds
  std::uint64_t publish_every = 0;     // samples; 0: every block
  std::uint64_t since_publish = 0;
  bool published = false;
  bool events = false;                 // the event channel is declared
  std::uint32_t events_out = 0, events_dropped = 0;  // output indices
  std::uint64_t dropped_written = 0;   // events_dropped as last written
  std::uint64_t over_capacity = 0;     // events a claimed block had no room for
};

constexpr char kEnergyUnits[] = "keV";

// `energy` = "a0,a1[,a2]" (keV per height after gain): the coefficients, or a refusal naming the text.
// The energy must rise over the histogram's heights 0 to range, so bins stay in order.
core::Result<std::vector<double>> energy_coefficients(const std::string& text, double range) {
  std::vector<double> a;
  const char* at = text.c_str();
  while (*at != '\0') {
    char* end = nullptr;
    const double v = std::strtod(at, &end);
    if (end == at || !std::isfinite(v)) break;
    a.push_back(v);
    at = end;
    while (*at == ' ') ++at;
    if (*at != ',') break;
    ++at;
  }
  if (*at != '\0' || a.size() < 2 || a.size() > 3)
    return core::fail(core::Errc::invalid_argument,
                      detail::out_of_range("energy", "'" + text + "'", "two or three finite numbers a0,a1[,a2] (keV)"));
  a.resize(3, 0.0);
  if (!(a[1] > 0 || (a[1] == 0 && a[2] > 0)) || !(a[1] + 2 * a[2] * range > 0))
    return core::fail(core::Errc::invalid_argument,
                      detail::out_of_range("energy", "'" + text + "'",
                                           "must rise over the heights 0 to range (" + detail::num(range) +
                                               "): a1 > 0 and a1 + 2 a2 range > 0"));
  return a;
}

// Seconds -> whole samples, refusing what does not fit the filter rings.
core::Result<std::uint32_t> to_samples(const char* name, double seconds, double rate_hz, std::uint32_t at_least,
                                       std::uint32_t at_most) {
  const double samples = std::round(seconds * rate_hz);
  if (!(samples <= at_most))
    return core::fail(core::Errc::invalid_argument,
                      detail::out_of_range(name, detail::num(seconds) + " s",
                                           "that is " + detail::whole(samples) + " samples at " + detail::num(rate_hz) +
                                               " Hz; allowed up to " + std::to_string(at_most) + " samples (" +
                                               detail::num(at_most / rate_hz) + " s)"));
  return std::max(at_least, static_cast<std::uint32_t>(samples));
}

core::Result<std::unique_ptr<McaShard>> McaShard::configure(weir_shard_config& cfg) {
  if (auto ok = detail::check_input(cfg, kRealDtypes); !ok) return tl::make_unexpected(ok.error());
  const ParamReader params(kParams, cfg, detail::events_wording);
  if (auto ok = params.check_names(); !ok) return tl::make_unexpected(ok.error());
  const double rate = cfg.input_rate_hz;
  const auto real = [&](const char* name) { return params.real(name); };
  auto rise_s = real("rise"), flat_s = real("flat"), tau_s = real("tau"), fast_rise_s = real("fast_rise"),
       fast_flat_s = real("fast_flat"), threshold = real("threshold"), range = real("range"), gain = real("gain"),
       baseline_s = real("baseline"), publish_s = real("publish");
  for (const auto* r : {&rise_s, &flat_s, &tau_s, &fast_rise_s, &fast_flat_s, &threshold, &range, &gain, &baseline_s,
                        &publish_s})
    if (!*r) return tl::make_unexpected(r->error());
  auto bins = params.integer("bins");
  if (!bins) return tl::make_unexpected(bins.error());
  auto pileup = params.boolean("pileup");
  if (!pileup) return tl::make_unexpected(pileup.error());
  auto units = params.text("units");
  if (!units) return tl::make_unexpected(units.error());
  auto energy = params.text("energy");
  if (!energy) return tl::make_unexpected(energy.error());

  const std::uint32_t max_shaping = Trapezoid::kMaxShapingSamples;
  auto rise = to_samples("rise", *rise_s, rate, 1, max_shaping);
  auto flat = to_samples("flat", *flat_s, rate, 0, max_shaping);
  auto fast_rise = to_samples("fast_rise", *fast_rise_s, rate, 1, max_shaping);
  auto fast_flat = to_samples("fast_flat", *fast_flat_s, rate, 0, max_shaping);
  auto baseline = to_samples("baseline", *baseline_s, rate, 0, Mca::kMaxBaselineSamples);
  for (const auto* r : {&rise, &flat, &fast_rise, &fast_flat, &baseline})
    if (!*r) return tl::make_unexpected(r->error());
  if (*threshold <= 0)
    return core::fail(core::Errc::invalid_argument,
                      detail::out_of_range("threshold", detail::num(*threshold), "must be > 0"));
  if (*range <= 0)
    return core::fail(core::Errc::invalid_argument, detail::out_of_range("range", detail::num(*range), "must be > 0"));
  if (*gain <= 0)
    return core::fail(core::Errc::invalid_argument, detail::out_of_range("gain", detail::num(*gain), "must be > 0"));
  if (*fast_rise > *rise)
    return core::fail(core::Errc::invalid_argument,
                      detail::out_of_range("fast_rise", detail::num(*fast_rise_s) + " s",
                                           "must not exceed the rise of " + detail::num(*rise_s) + " s"));

  McaConfig config;
  config.rate_hz = rate;
  config.rise = *rise;
  config.flat = *flat;
  config.tau = *tau_s * rate;
  config.fast_rise = *fast_rise;
  config.fast_flat = *fast_flat;
  config.threshold = *threshold;
  config.bins = static_cast<std::uint32_t>(*bins);
  config.range = *range;
  config.gain = *gain;
  config.baseline = *baseline;
  config.pileup_reject = *pileup;
  auto events = params.boolean("events");
  if (!events) return tl::make_unexpected(events.error());
  auto max_events = params.integer("max_events");
  if (!max_events) return tl::make_unexpected(max_events.error());
  if (*events) config.max_events = static_cast<std::uint32_t>(*max_events);
  auto mca = Mca::create(config);
  if (!mca) return tl::make_unexpected(mca.error());

  auto shard = std::make_unique<McaShard>(std::move(*mca));
  shard->dtype = cfg.input_dtype;
  shard->scratch.resize(cfg.input_samples_per_block);
  if constexpr (std::endian::native != std::endian::little) shard->le_spectrum.resize(std::size_t{config.bins} * 4);
  shard->publish_every = static_cast<std::uint64_t>(std::llround(*publish_s * rate));
  const std::pair<const char*, std::uint32_t*> keys[] = {{".live_s", &shard->live},
                                                         {".dead_s", &shard->dead},
                                                         {".counts", &shard->counts},
                                                         {".pileups", &shard->pileups}};
  auto spectrum = detail::add_key(cfg, ".spectrum", WEIR_KEY_BYTES, std::uint64_t{config.bins} * 4);
  if (!spectrum) return tl::make_unexpected(spectrum.error());
  const std::uint32_t dims[] = {config.bins};
  if (auto shaped = set_array(cfg.outputs[*spectrum], WEIR_DTYPE_U32, dims); !shaped)
    return tl::make_unexpected(shaped.error());
  shard->spectrum = *spectrum;
  for (const auto& [suffix, index] : keys) {
    const bool seconds = index == &shard->live || index == &shard->dead;
    auto key = detail::add_key(cfg, suffix, seconds ? WEIR_KEY_F64 : WEIR_KEY_U64, 8, seconds ? "s" : "counts");
    if (!key) return tl::make_unexpected(key.error());
    *index = *key;
  }
  // The calibration: bin i holds heights [i, i + 1) * range / bins (after gain); its centre is the
  // axis value. f32, as many bytes as the spectrum, so any arena that holds one holds the other.
  auto axis = detail::add_key(cfg, ".spectrum_axis", WEIR_KEY_BYTES, std::uint64_t{config.bins} * 4);
  if (!axis) return tl::make_unexpected(axis.error());
  if (auto shaped = set_array(cfg.outputs[*axis], WEIR_DTYPE_F32, dims); !shaped)
    return tl::make_unexpected(shaped.error());
  shard->spectrum_axis = *axis;
  const double bin_width = config.range / config.bins;
  std::vector<double> a{0.0, 1.0, 0.0};  // no energy calibration: the axis is the height itself
  if (!energy->empty()) {
    if (!units->empty() && *units != kEnergyUnits)
      return core::fail(core::Errc::invalid_argument,
                        detail::out_of_range("units", "'" + std::string(*units) + "'",
                                             "the energy calibration gives keV; leave units empty or \"keV\""));
    auto coefficients = energy_coefficients(std::string(*energy), config.range);
    if (!coefficients) return tl::make_unexpected(coefficients.error());
    a = std::move(*coefficients);
  }
  shard->axis.resize(config.bins);
  for (std::uint32_t i = 0; i < config.bins; ++i) {
    const double h = (static_cast<double>(i) + 0.5) * bin_width;
    shard->axis[i] = static_cast<float>(a[0] + (a[1] + a[2] * h) * h);
  }
  shard->axis_units = energy->empty() ? std::string(*units) : std::string(kEnergyUnits);
  if (shard->axis_units.empty() && cfg.input_units != nullptr) shard->axis_units = cfg.input_units;
  if (shard->axis_units.size() > kMaxUnitsBytes)
    return core::fail(core::Errc::invalid_argument,
                      detail::out_of_range("units", "'" + shard->axis_units + "'",
                                           "at most " + std::to_string(kMaxUnitsBytes) + " bytes"));
  auto axis_units = detail::add_key(cfg, ".spectrum_axis_units", WEIR_KEY_TEXT, kMaxUnitsBytes);
  if (!axis_units) return tl::make_unexpected(axis_units.error());
  shard->spectrum_axis_units = *axis_units;
  // Declared last, so that the earlier outputs keep their indices.
  auto out_of_range = detail::add_key(cfg, ".out_of_range", WEIR_KEY_U64, 8, "counts");
  if (!out_of_range) return tl::make_unexpected(out_of_range.error());
  shard->out_of_range = *out_of_range;
  const std::pair<const char*, std::uint32_t*> stamps[] = {{".spectrum.start_ns", &shard->start_ns},
                                                           {".spectrum.window_s", &shard->window_s},
                                                           {".spectrum.window_s_units", &shard->window_s_units},
                                                           {".spectrum.partial", &shard->partial}};
  for (const auto& [suffix, index] : stamps) {
    const bool text = index == &shard->window_s_units;
    auto key = detail::add_key(cfg, suffix, text ? WEIR_KEY_TEXT : index == &shard->window_s ? WEIR_KEY_F64 : WEIR_KEY_U64,
                               text ? 1 : 8, index == &shard->start_ns ? "ns" : "");
    if (!key) return tl::make_unexpected(key.error());
    *index = *key;
  }
  shard->rate_hz = rate;
  if (*events) {
    auto out = detail::add_pulses(cfg, config.max_events, shard->axis_units);
    if (!out) return tl::make_unexpected(out.error());
    auto dropped = detail::add_key(cfg, ".pulses_dropped", WEIR_KEY_U64, 8, "counts");
    if (!dropped) return tl::make_unexpected(dropped.error());
    shard->events = true;
    shard->events_out = *out;
    shard->events_dropped = *dropped;
  }
  // Declared after all the others, so that they keep their indices.
  for (const auto& [suffix, index] : {std::pair{".underflow", &shard->underflow}, std::pair{".overflow", &shard->overflow}}) {
    auto key = detail::add_key(cfg, suffix, WEIR_KEY_U64, 8, "counts");
    if (!key) return tl::make_unexpected(key.error());
    *index = *key;
  }
  return shard;
}

// The pulses finished while processing block `in`, as one block of the event channel stamped with
// in's time: each event's offset from it (negative for a pulse the block before began), height
// after gain, id 0 (one input), flags.
void publish_events(McaShard& shard, const weir_shard_block& in, const weir_shard_host& host) noexcept {
  const std::span<const McaEvent> events = shard.mca.events();
  std::uint32_t capacity = 0;
  auto* out = static_cast<double*>(host.claim(host.self, shard.events_out, &capacity));
  std::uint32_t n = 0;
  if (out != nullptr) {  // NULL: the block was dropped at the source (the arena counts it)
    n = std::min<std::uint32_t>(static_cast<std::uint32_t>(events.size()), capacity / core::kEventFields);
    for (std::uint32_t i = 0; i < n; ++i) {
      const McaEvent& e = events[i];
      const double offset_ns = (static_cast<double>(static_cast<std::int64_t>(e.index - in.first_sample))) * 1e9 / shard.rate_hz;
      std::uint32_t flags = 0;
      if ((e.flags & kMcaPileup) != 0) flags |= core::kEventFlagPileup;
      if ((e.flags & kMcaOutOfRange) != 0) flags |= core::kEventFlagOutOfRange;
      if ((e.flags & kMcaCut) != 0) flags |= core::kEventFlagPartial;
      detail::put_event(out + std::size_t{i} * core::kEventFields, offset_ns, e.height, 0, flags);
    }
    host.publish(host.self, shard.events_out, n * core::kEventFields, in.realtime_ns, 0);
    shard.over_capacity += events.size() - n;
  }
  const std::uint64_t dropped = shard.mca.events_dropped() + shard.over_capacity;
  shard.mca.clear_events();
  if (dropped != shard.dropped_written) {
    unsigned char word[8];
    detail::put_u64_le(dropped, word);
    if (host.set_key(host.self, shard.events_dropped, word, sizeof word) == 0) shard.dropped_written = dropped;
  }
}

void publish(McaShard& shard, const weir_shard_host& host, bool partial) noexcept {
  if (!shard.axis_written) {
    // The units first: whoever sees the axis sees its units (a recorder names the axis by them).
    shard.axis_written = host.set_key(host.self, shard.spectrum_axis_units, shard.axis_units.data(),
                                      shard.axis_units.size()) == 0;
    const std::span<const float> axis(shard.axis);
    if constexpr (std::endian::native != std::endian::little) {
      for (std::size_t i = 0; i < axis.size(); ++i) {
        const auto word = std::bit_cast<std::uint32_t>(axis[i]);
        for (std::size_t b = 0; b < 4; ++b)
          shard.le_spectrum[4 * i + b] = static_cast<unsigned char>((word >> (8 * b)) & 0xFFU);
      }
      shard.axis_written =
          host.set_key(host.self, shard.spectrum_axis, shard.le_spectrum.data(), axis.size_bytes()) == 0 && shard.axis_written;
    } else {
      shard.axis_written = host.set_key(host.self, shard.spectrum_axis, axis.data(), axis.size_bytes()) == 0 && shard.axis_written;
    }
    shard.axis_written = host.set_key(host.self, shard.window_s_units, "s", 1) == 0 && shard.axis_written;
  }
  // The accumulation's stamp and span first: a reader pairs the spectrum with them.
  unsigned char word[8];
  detail::put_u64_le(shard.origin_ns, word);
  (void)host.set_key(host.self, shard.start_ns, word, sizeof word);
  const double span = static_cast<double>(shard.mca.counts().real_samples) / shard.rate_hz;
  (void)host.set_key(host.self, shard.window_s, &span, sizeof span);
  detail::put_u64_le(partial ? 1U : 0U, word);
  (void)host.set_key(host.self, shard.partial, word, sizeof word);
  const std::span<const std::uint32_t> bins = shard.mca.spectrum();
  const void* bytes = bins.data();
  if constexpr (std::endian::native != std::endian::little) {
    for (std::size_t i = 0; i < bins.size(); ++i)
      for (std::size_t b = 0; b < 4; ++b)
        shard.le_spectrum[4 * i + b] = static_cast<unsigned char>((bins[i] >> (8 * b)) & 0xFFU);
    bytes = shard.le_spectrum.data();
  }
  (void)host.set_key(host.self, shard.spectrum, bytes, bins.size_bytes());  // failures: the host counts them
  const double live = shard.mca.live_s();
  const double dead = shard.mca.dead_s();
  (void)host.set_key(host.self, shard.live, &live, sizeof live);
  (void)host.set_key(host.self, shard.dead, &dead, sizeof dead);
  const McaCounts counts = shard.mca.counts();
  detail::put_u64_le(counts.accepted, word);
  (void)host.set_key(host.self, shard.counts, word, sizeof word);
  detail::put_u64_le(counts.piled_up, word);
  (void)host.set_key(host.self, shard.pileups, word, sizeof word);
  // Accepted but not binned (height below 0 or at or above the range): with the spectrum's sum it
  // makes up `counts` exactly, both taken from the same state as the spectrum above.
  detail::put_u64_le(counts.out_of_range, word);
  (void)host.set_key(host.self, shard.out_of_range, word, sizeof word);
  detail::put_u64_le(counts.underflow, word);
  (void)host.set_key(host.self, shard.underflow, word, sizeof word);
  detail::put_u64_le(counts.overflow, word);
  (void)host.set_key(host.self, shard.overflow, word, sizeof word);
}

int McaShard::process(const weir_shard_block& in, const weir_shard_host& host) noexcept {
  if (in.count == 0) return 0;
  if (started && (in.flags & WEIR_SHARD_AFTER_GAP) != 0) {
    // A gap: the accumulation so far is closed (published, marked partial) and a new one starts
    // here; its first publish comes a full interval later, so the closing one is seen.
    publish(*this, host, true);
    mca.reset();
    started = false;
    published = true;
    since_publish = 0;
  }
  if (!started) origin_ns = in.realtime_ns;
  started = true;
  const std::size_t chunk = scratch.size();
  for (std::size_t at = 0; at < in.count; at += chunk) {
    const std::size_t n = std::min<std::size_t>(chunk, in.count - at);
    to_double(static_cast<core::Dtype>(dtype), in.samples, at, std::span<double>(scratch.data(), n));
    mca.process(std::span<const double>(scratch.data(), n), in.first_sample + at);
  }
  if (events) publish_events(*this, in, host);
  since_publish += in.count;
  if (!published || since_publish >= publish_every) {
    publish(*this, host, false);
    published = true;
    since_publish = 0;
  }
  return 0;
}

int McaShard::flush(const weir_shard_host& host) noexcept {
  // At stop: the input since the last publish, and the close of the accumulation.
  if (started) publish(*this, host, true);
  return 0;
}


}  // namespace

}  // namespace weir::dsp

extern "C" const weir_shard_api* weir_builtin_mca(uint32_t v) { return weir::dsp::shard_entry<weir::dsp::McaShard>(v); }
