// `weir sim`: the simulator acquisition driver. Feeds sine, square, chirp, noise or detector-pulse
// signals into arena channels, paced in real time or as fast as possible, and reports what it
// produced and dropped when it stops (block or time limit, SIGINT, SIGTERM).
#include <signal.h>

#include <atomic>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "channel_writer.hpp"
#include "command.hpp"
#include "weir/acq/sim_driver.hpp"
#include "weir/core/channel.hpp"
#include "weir/tools/arena_access.hpp"
#include "weir/tools/output.hpp"
#include "weir/tools/stop_signals.hpp"

namespace weir::tools {
namespace {

struct SimArgs {
  std::string where;
  std::vector<std::string> channels;
  double rate_hz = 0;
  std::uint32_t block = 0;
  std::string signal = "sine";
  std::uint64_t seed = 0;
  double duration_s = 0;
  std::uint64_t blocks = 0;
  bool fast = false;
  std::string dtype = "f32";
  double amplitude = 1.0;
  double offset = 0;
  double frequency_hz = 1000;
  double chirp_to_hz = 0;
  double sweep_s = acq::kDefaultChirpSweepS;
  double count_rate_hz = acq::kDefaultCountRateHz;
  double rise_s = acq::kDefaultPulseRiseS;
  double tau_s = acq::kDefaultPulseDecayS;
  double noise = acq::kDefaultBaselineNoise;
  double full_scale_v = acq::kDefaultFullScaleV;
  std::string units;
  ChannelWriterArgs writer;
  bool json = false;
};

// The library options from the command line; fails with a usage message.
core::Result<acq::SimOptions> to_options(const SimArgs& args) {
  acq::SimOptions o;
  o.channels = args.channels;
  o.rate_hz = args.rate_hz;
  o.block_samples = args.block;
  auto dtype = core::parse_dtype(args.dtype);
  if (!dtype) return tl::make_unexpected(dtype.error());
  o.dtype = *dtype;
  auto signal = acq::parse_signal(args.signal);
  if (!signal) return tl::make_unexpected(signal.error());
  o.signal.kind = *signal;
  o.signal.seed = args.seed;
  o.signal.amplitude = args.amplitude;
  o.signal.offset = args.offset;
  o.signal.frequency_hz = args.frequency_hz;
  o.signal.chirp_end_hz = args.chirp_to_hz;
  o.signal.chirp_sweep_s = args.sweep_s;
  o.signal.pulses.count_rate_hz = args.count_rate_hz;
  o.signal.pulses.rise_s = args.rise_s;
  o.signal.pulses.decay_s = args.tau_s;
  o.signal.pulses.baseline_noise = args.noise;
  o.max_blocks = args.blocks;
  o.duration_s = args.duration_s;
  o.fast = args.fast;
  o.full_scale_v = args.full_scale_v;
  o.units = args.units;
  args.writer.apply_to(o);
  if (auto ok = acq::validate(o); !ok) return tl::make_unexpected(ok.error());
  return o;
}

void print_text(const SimArgs& args, const acq::SimOptions& o, const acq::SimReport& r) {
  const char* why = r.stopped ? "stopped by a signal"
                    : o.max_blocks != 0 && r.ticks == o.max_blocks ? "block limit reached"
                                                                   : "time limit reached";
  fmt::print("sim {} into {} channel{} of {} ({} x {} per block, {} Hz{}): {}\n", args.signal, r.channels.size(),
             r.channels.size() == 1 ? "" : "s", args.where, o.block_samples, core::dtype_name(o.dtype),
             format_real(o.rate_hz), r.fast ? ", fast" : "", why);
  fmt::print("  {} blocks attempted, {} published ({} samples), {} dropped at the source", r.blocks_attempted,
             r.blocks_published, r.samples_published, r.blocks_dropped);
  if (r.samples_saturated > 0) fmt::print(", {} samples saturated", r.samples_saturated);
  fmt::print("\n  {:.3f} s: {} Hz per channel achieved, {} Hz requested", r.elapsed_s,
             format_real(std::round(r.achieved_rate_hz * 10) / 10), format_real(r.requested_rate_hz));
  if (!r.fast)
    fmt::print("; max lateness {:.3f} ms, {} overrun{}", static_cast<double>(r.max_lateness_ns) / kNsPerMs,
               r.overruns, r.overruns == 1 ? "" : "s");
  fmt::print("\n");
  for (const acq::SimChannelReport& c : r.channels)
    fmt::print("  {:<16} {:<8} {:>10} blocks {:>12} samples {:>8} dropped{}\n", c.name,
               c.created ? "created" : "attached", c.blocks_published, c.samples_published, c.blocks_dropped,
               c.samples_saturated > 0 ? fmt::format(" {:>10} saturated", c.samples_saturated) : "");
}

void print_json_report(const SimArgs& args, const acq::SimOptions& o, const acq::SimReport& r) {
  JsonArray channels;
  for (const acq::SimChannelReport& c : r.channels) {
    channels.raw(fed_channel_json(c).number("samples_saturated", c.samples_saturated).str());
  }
  JsonObject out;
  out.text("arena", args.where)
      .text("signal", args.signal)
      .text("dtype", core::dtype_name(o.dtype))
      .number("samples_per_block", o.block_samples)
      .boolean("fast", r.fast)
      .boolean("stopped", r.stopped)
      .number("ticks", r.ticks)
      .number("blocks_attempted", r.blocks_attempted)
      .number("blocks_published", r.blocks_published)
      .number("samples_published", r.samples_published)
      .number("blocks_dropped", r.blocks_dropped)
      .number("samples_saturated", r.samples_saturated)
      .real("elapsed_s", r.elapsed_s)
      .real("requested_rate_hz", r.requested_rate_hz)
      .real("achieved_rate_hz", r.achieved_rate_hz)
      .number("max_lateness_ns", r.max_lateness_ns)
      .number("overruns", r.overruns)
      .raw("channels", channels.str());
  print_json(out);
}

int run_sim_command(const SimArgs& args) {
  auto options = to_options(args);
  if (!options) return report_usage(options.error().what);
  auto arena = open_arena(args.where, Access::read_write);
  if (!arena) return kExitError;
  const StopSignals signals(Sigpipe::ignore);  // a log no one reads any more (EPIPE) does not stop a writer
  auto report = acq::run_sim(*arena, *options, StopSignals::flag());
  if (!report) return report_error("", report.error());
  print_unless_closed([&] {
    if (args.json)
      print_json_report(args, *options, *report);
    else
      print_text(args, *options, *report);
  });
  return kExitOk;
}

}  // namespace

void add_sim_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<SimArgs>();
  CLI::App* sub = app.add_subcommand(
      "sim", "Simulate an ADC: feed sine, square, chirp, noise or detector pulses into channels, "
             "paced in real time (absolute deadlines) or --fast; Ctrl-C stops and reports");
  add_name_option(*sub, args->where);
  sub->add_option("CHANNEL", args->channels, "channels to feed; created if missing, else attached (same dtype, "
                                              "block and rate)")
      ->required();
  sub->add_option("--rate", args->rate_hz, "samples per second per channel")->required()->check(CLI::PositiveNumber);
  sub->add_option("--block", args->block, "samples per block")->required()->check(CLI::Range(1U, core::kMaxSamplesPerBlock));
  sub->add_option("--signal", args->signal, "sine, square, chirp, noise or pulses")
      ->capture_default_str()
      ->check(CLI::IsMember({"sine", "square", "chirp", "noise", "pulses"}));
  sub->add_option("--seed", args->seed, "random seed; channel i uses seed + i; same seed, same samples")
      ->capture_default_str();
  CLI::Option* duration = sub->add_option("--duration", args->duration_s, "stop after this many seconds")
                              ->check(CLI::PositiveNumber);
  sub->add_option("--blocks", args->blocks, "stop after this many blocks per channel")
      ->check(CLI::PositiveNumber)
      ->excludes(duration);
  sub->add_flag("--fast", args->fast, "no pacing: publish as fast as possible");
  sub->add_option("--dtype", args->dtype, "sample type: i8 u8 i16 u16 i32 u32 i64 f32 f64 c64")->capture_default_str();
  sub->add_option("--amplitude", args->amplitude, "peak (sine, square, chirp), sigma (noise), height scale (pulses)")
      ->capture_default_str();
  sub->add_option("--offset", args->offset, "DC offset added to every sample")->capture_default_str();
  sub->add_option("--frequency", args->frequency_hz, "sine and square frequency; chirp start, in Hz")
      ->capture_default_str();
  sub->add_option("--chirp-to", args->chirp_to_hz, "chirp end frequency in Hz (default: rate / 10)");
  sub->add_option("--sweep", args->sweep_s, "chirp sweep time in seconds; the sweep then repeats")
      ->capture_default_str();
  sub->add_option("--count-rate", args->count_rate_hz, "pulses: mean counts per second (Poisson)")
      ->capture_default_str();
  sub->add_option("--rise", args->rise_s, "pulses: rise time constant in seconds")->capture_default_str();
  sub->add_option("--tau", args->tau_s, "pulses: decay time constant in seconds")->capture_default_str();
  sub->add_option("--noise", args->noise, "pulses: baseline noise sigma, in units of the amplitude")
      ->capture_default_str();
  sub->add_option("--full-scale", args->full_scale_v, "integer dtypes: volts that map to the largest code")
      ->capture_default_str();
  sub->add_option("--units", args->units, "units of a created channel (default: V, or counts for integers)");
  add_channel_writer_options(*sub, args->writer, "run");
  add_json_flag(*sub, args->json);
  bind_action(*sub, action, args, &run_sim_command);
}

}  // namespace weir::tools
