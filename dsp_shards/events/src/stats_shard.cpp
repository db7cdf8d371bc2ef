// The "stats" shard: per-block and sliding-window statistics as f64 keys, each set stamped with the
// acquisition time of its first input sample (u64 keys <output>.block_start_ns and
// <output>.window.start_ns). The window never spans an input gap: it starts afresh, and
// <output>.window.partial is 1 while it holds fewer samples than <output>.window.window_s.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "shard_params.hpp"
#include "weir/dsp/detail/number_text.hpp"
#include "weir/dsp/sample_convert.hpp"
#include "weir/dsp/shard_adapter.hpp"
#include "weir/dsp/event_shards.hpp"
#include "weir/dsp/moments.hpp"
#include "weir/dsp/sample_clock.hpp"
#include "weir/dsp/sliding_moments.hpp"

namespace weir::dsp {

namespace {

constexpr double kMaxWindowSamples = 1099511627776.0;  // 2^40: the window is checked in blocks afterwards

constexpr weir_shard_param kStatsParams[] = {
    {"window", WEIR_PARAM_INT, 0, "0", 0, kMaxWindowSamples, nullptr,
     "sliding window in samples, a multiple of the input's samples per block; 0: no window keys"},
    {"outputs", WEIR_PARAM_TEXT, 0, "mean,rms,std,min,max,p2p", 0, 0, nullptr,
     "comma-separated statistics to publish: mean, rms, std, min, max, p2p"},
    {"block", WEIR_PARAM_BOOL, 0, "true", 0, 0, nullptr, "publish per-block values as <output>.<stat>"},
};

enum class Stat : std::uint8_t { mean, rms, std, min, max, p2p };
constexpr std::size_t kStatCount = 6;
constexpr const char* kStatNames[kStatCount] = {"mean", "rms", "std", "min", "max", "p2p"};

double stat_value(std::size_t stat, const Moments& m) noexcept {
  switch (static_cast<Stat>(stat)) {
    case Stat::mean: return m.mean;
    case Stat::rms: return m.rms();
    case Stat::std: return m.stddev();
    case Stat::min: return m.min;
    case Stat::max: return m.max;
    case Stat::p2p: return m.peak_to_peak();
  }
  return 0;
}

constexpr std::uint32_t kNoKey = ~0U;

struct StatsShard {
  static constexpr const char* kKind = "stats";
  static constexpr const char* kDescription = "mean, RMS, standard deviation, min, max and peak-to-peak per block and over a sliding window";
  static constexpr const auto& kParams = kStatsParams;
  static constexpr std::uint32_t kInputDtypes = kRealDtypes;
  static core::Result<std::unique_ptr<StatsShard>> configure(weir_shard_config& cfg);
  int process(const weir_shard_block& in, const weir_shard_host& host) noexcept;

  std::uint32_t dtype = 0;
  std::vector<double> scratch;  // one input block, converted
  std::array<std::uint32_t, kStatCount> block_key{};   // output index per statistic, or kNoKey
  std::array<std::uint32_t, kStatCount> window_key{};
  std::optional<SlidingMoments> window;
  std::optional<SampleClock> clock;  // the stamps of the blocks in the window
  std::uint64_t window_samples = 0;
  double window_s = 0;
  std::uint32_t block_start = kNoKey;  // output indices of the stamps and the window's description
  std::uint32_t window_start = kNoKey, window_partial = kNoKey, window_len = kNoKey, window_len_units = kNoKey;
  std::uint64_t next_index = 0;
  bool started = false;
  bool meta_written = false;  // window_s and its units: written until one write succeeds
};

core::Result<std::array<bool, kStatCount>> parse_outputs(const std::string& list) {
  std::array<bool, kStatCount> chosen{};
  bool any = false;
  std::string_view rest(list);
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    std::string_view word = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    while (!word.empty() && word.front() == ' ') word.remove_prefix(1);
    while (!word.empty() && word.back() == ' ') word.remove_suffix(1);
    bool known = false;
    for (std::size_t s = 0; s < kStatCount; ++s) {
      if (word == kStatNames[s]) {
        chosen[s] = known = any = true;
      }
    }
    if (!known)
      return core::fail(core::Errc::invalid_argument,
                        detail::out_of_range("outputs", "'" + list + "'", "unknown statistic '" + std::string(word) +
                                                                              "': use mean, rms, std, min, max, p2p"));
  }
  if (!any)
    return core::fail(core::Errc::invalid_argument,
                      detail::out_of_range("outputs", "''", "name at least one of mean, rms, std, min, max, p2p"));
  return chosen;
}

core::Result<std::unique_ptr<StatsShard>> StatsShard::configure(weir_shard_config& cfg) {
  if (auto ok = detail::check_input(cfg, kRealDtypes); !ok) return tl::make_unexpected(ok.error());
  const ParamReader params(kParams, cfg, detail::events_wording);
  if (auto ok = params.check_names(); !ok) return tl::make_unexpected(ok.error());
  auto window = params.integer("window");
  if (!window) return tl::make_unexpected(window.error());
  auto list = params.text("outputs");
  if (!list) return tl::make_unexpected(list.error());
  auto chosen = parse_outputs(std::string(*list));
  if (!chosen) return tl::make_unexpected(chosen.error());
  auto per_block = params.boolean("block");
  if (!per_block) return tl::make_unexpected(per_block.error());

  const std::uint64_t block = cfg.input_samples_per_block;
  const auto w = static_cast<std::uint64_t>(*window);
  if (w % block != 0) {
    const std::uint64_t below = w / block * block;
    return core::fail(core::Errc::invalid_argument,
                      detail::out_of_range("window", std::to_string(w),
                                           "must be a multiple of the input's " + std::to_string(block) +
                                               " samples per block: use " +
                                               (below > 0 ? std::to_string(below) + " or " : "") +
                                               std::to_string(below + block)));
  }
  if (w / block > SlidingMoments::kMaxWindowBlocks)
    return core::fail(core::Errc::invalid_argument,
                      detail::out_of_range("window", std::to_string(w),
                                           "at most " + std::to_string(SlidingMoments::kMaxWindowBlocks) +
                                               " blocks of " + std::to_string(block) + " samples"));
  if (!*per_block && w == 0)
    return core::fail(core::Errc::invalid_argument,
                      "parameter 'block' = false and 'window' = 0: nothing to publish; enable one");

  auto shard = std::make_unique<StatsShard>();
  shard->dtype = cfg.input_dtype;
  shard->scratch.resize(block);
  shard->block_key.fill(kNoKey);
  shard->window_key.fill(kNoKey);
  // Every statistic is in the input's units (the moments of a signal in V are in V).
  const std::string units = cfg.input_units != nullptr ? cfg.input_units : "";
  for (std::size_t s = 0; s < kStatCount; ++s) {
    if (!(*chosen)[s]) continue;
    if (*per_block) {
      auto key = detail::add_key(cfg, (std::string(".") + kStatNames[s]).c_str(), WEIR_KEY_F64, sizeof(double), units);
      if (!key) return tl::make_unexpected(key.error());
      shard->block_key[s] = *key;
    }
    if (w > 0) {
      auto key = detail::add_key(cfg, (std::string(".window.") + kStatNames[s]).c_str(), WEIR_KEY_F64, sizeof(double), units);
      if (!key) return tl::make_unexpected(key.error());
      shard->window_key[s] = *key;
    }
  }
  const auto add = [&cfg](const char* suffix, std::uint32_t type, std::uint64_t bytes, std::uint32_t& index,
                          const char* key_units = "") {
    auto key = detail::add_key(cfg, suffix, type, bytes, key_units);
    if (key) index = *key;
    return key;
  };
  if (*per_block)
    if (auto key = add(".block_start_ns", WEIR_KEY_U64, 8, shard->block_start, "ns"); !key)
      return tl::make_unexpected(key.error());
  if (w > 0) {
    auto sliding = SlidingMoments::create(static_cast<std::uint32_t>(w / block));
    if (!sliding) return tl::make_unexpected(sliding.error());
    shard->window.emplace(std::move(*sliding));
    shard->clock.emplace(static_cast<std::size_t>(w / block) + 1, cfg.input_rate_hz);
    shard->window_samples = w;
    shard->window_s = static_cast<double>(w) / cfg.input_rate_hz;
    for (auto key : {add(".window.start_ns", WEIR_KEY_U64, 8, shard->window_start, "ns"),
                     add(".window.partial", WEIR_KEY_U64, 8, shard->window_partial),
                     add(".window.window_s", WEIR_KEY_F64, 8, shard->window_len),
                     add(".window.window_s_units", WEIR_KEY_TEXT, 1, shard->window_len_units)})
      if (!key) return tl::make_unexpected(key.error());
  }
  return shard;
}

int StatsShard::process(const weir_shard_block& in, const weir_shard_host& host) noexcept {
  Moments block;
  const std::size_t chunk = scratch.size();
  const bool in_place = static_cast<core::Dtype>(dtype) == core::Dtype::f32 &&
                        reinterpret_cast<std::uintptr_t>(in.samples) % alignof(float) == 0;
  if (in_place)  // f32 straight from the slot: no conversion pass, no copy
    block = moments_of(std::span<const float>(static_cast<const float*>(in.samples), in.count));
  for (std::size_t at = 0; !in_place && at < in.count; at += chunk) {
    const std::size_t n = std::min<std::size_t>(chunk, in.count - at);
    to_double(static_cast<core::Dtype>(dtype), in.samples, at, std::span<double>(scratch.data(), n));
    block = merge(block, moments_of(std::span<const double>(scratch.data(), n)));
  }
  if (block.count == 0) return 0;

  const auto set = [&host](std::uint32_t key, double value) noexcept {
    if (key != kNoKey) (void)host.set_key(host.self, key, &value, sizeof value);  // failures: the host counts them
  };
  const auto set_u64 = [&host](std::uint32_t key, std::uint64_t value) noexcept {
    unsigned char word[8];
    detail::put_u64_le(value, word);
    if (key != kNoKey) (void)host.set_key(host.self, key, word, sizeof word);
  };
  // The stamp first: a reader pairs each value with the stamp logged at or before it.
  set_u64(block_start, in.realtime_ns);
  for (std::size_t s = 0; s < kStatCount; ++s) set(block_key[s], stat_value(s, block));
  if (window) {
    if (!meta_written)
      meta_written = host.set_key(host.self, window_len, &window_s, sizeof window_s) == 0 &&
                     host.set_key(host.self, window_len_units, "s", 1) == 0;
    // A window spans contiguous samples only: a gap in the input (the host's flag, or a jump in
    // the sample index) starts it afresh.
    if (started && ((in.flags & WEIR_SHARD_AFTER_GAP) != 0 || in.first_sample != next_index)) {
      window->clear();
      clock->clear();
    }
    window->push(block);
    clock->add(in);
    const Moments w = window->value();
    set_u64(window_start, clock->realtime_of(in.first_sample + in.count - w.count));
    set_u64(window_partial, w.count < window_samples ? 1U : 0U);
    for (std::size_t s = 0; s < kStatCount; ++s) set(window_key[s], stat_value(s, w));
  }
  started = true;
  next_index = in.first_sample + in.count;
  return 0;
}


}  // namespace

}  // namespace weir::dsp

extern "C" const weir_shard_api* weir_builtin_stats(uint32_t v) { return weir::dsp::shard_entry<weir::dsp::StatsShard>(v); }
