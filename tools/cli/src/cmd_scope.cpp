// `weir scope`: a live oscilloscope for one channel in the terminal. Attaches as a `latest`
// consumer (never holds the writer back), sleeps on the channel's signal group between blocks, and
// redraws the min/max envelope in braille at most --fps times a second.
#include <time.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "command.hpp"
#include "time_units.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/clock.hpp"
#include "weir/core/signals.hpp"
#include "weir/scope/scope_display.hpp"
#include "weir/scope/scope_terminal.hpp"
#include "weir/tools/arena_access.hpp"
#include "weir/tools/output.hpp"

namespace weir::tools {
namespace {

using scope::decode_keys;
using scope::display_width;
using scope::Key;
using scope::ScopeDisplay;
using scope::ScopeSettings;
using scope::ScopeTerminal;
using scope::TermSize;

constexpr double kDefaultFps = 20;
constexpr double kMaxFps = 1000;
constexpr double kMaxSpanSeconds = 1e9;
constexpr std::uint64_t kMaxFrames = 1'000'000'000;
constexpr std::int64_t kWaitSliceNs = 50'000'000;   // longest sleep before looking at keys and signals
constexpr std::int64_t kIdleFrameNs = 500'000'000;  // redraw this often even when no block arrives

struct ScopeArgs {
  std::string where;
  std::string channel;
  double span_s = 0;
  double trigger = 0;
  std::uint64_t frames = 0;  // 0: until q or a signal
  double fps = kDefaultFps;
  const CLI::Option* span_option = nullptr;     // owned by the app, which outlives the action
  const CLI::Option* trigger_option = nullptr;  // likewise
};

using core::monotonic_ns;

// A frame for a terminal: each line placed at its row (no scrolling, no flicker), the rest of a
// short line and everything below the frame cleared. For a pipe: the lines, then a blank line.
std::string frame_text(const std::vector<std::string>& lines, const TermSize& size, bool escapes) {
  std::string out;
  if (!escapes) {
    for (const std::string& line : lines) out += line + "\n";
    return out + "\n";
  }
  const std::size_t shown = std::min(lines.size(), size.rows);
  for (std::size_t i = 0; i < shown; ++i) {
    out += fmt::format("\x1b[{};1H{}", i + 1, lines[i]);
    if (display_width(lines[i]) < size.cols) out += "\x1b[K";  // at the last column it would erase that column
  }
  if (shown < size.rows) out += fmt::format("\x1b[{};1H\x1b[J", shown + 1);
  return out;
}

// The channel's description as list_channels() reports it.
std::optional<core::ChannelInfo> channel_info(const core::Arena& arena, std::uint32_t index) {
  for (core::ChannelInfo& c : core::list_channels(arena))
    if (c.index == index) return std::move(c);
  return std::nullopt;
}

int run_scope(const ScopeArgs& args) {
  auto arena = open_arena(args.where, Access::read_write);  // a consumer row needs a writable mapping
  if (!arena) return kExitError;
  auto reader = core::ChannelReader::open(*arena, args.channel, core::ConsumerPolicy::latest, "scope");
  if (!reader) return report_error("scope", reader.error());
  auto info = channel_info(*arena, reader->channel_index());
  if (!info) {
    print_error(fmt::format("scope: channel '{}' in {} disappeared", args.channel, arena->location().describe()));
    return kExitError;
  }
  std::optional<core::Watcher> watcher;
  if (auto created = core::Watcher::create(*arena); !created) {
    report_error("scope: cannot wait for blocks; redrawing on a timer instead", created.error());
  } else if (auto group = created->subscribe_channel(args.channel); !group) {
    report_error("scope: cannot wait for blocks; redrawing on a timer instead", group.error());
  } else {
    watcher.emplace(std::move(*created));
  }

  ScopeSettings settings;
  if (args.span_option->count() > 0)
    settings.span_samples = static_cast<std::uint64_t>(std::max(1.0, std::round(args.span_s * info->rate_hz)));
  if (args.trigger_option->count() > 0) settings.trigger_level = args.trigger;
  ScopeDisplay display(*arena, *reader, *info, settings);

  ScopeTerminal terminal;  // from here on the terminal is ours; its destructor gives it back
  const auto frame_ns = static_cast<std::int64_t>(std::llround(static_cast<double>(kNsPerSecond) / args.fps));
  TermSize size = terminal.size();
  std::int64_t last_frame = 0;
  std::int64_t next_frame = 0;
  bool fresh = true;  // a block arrived since the last frame
  std::uint64_t frames = 0;
  while (!ScopeTerminal::stop_requested()) {
    bool dirty = false;
    bool quit = false;
    decode_keys(terminal.read_input(), [&](Key key) {
      quit = quit || !display.apply(key);
      dirty = true;
    });
    if (quit) break;
    if (ScopeTerminal::take_resized()) {
      size = terminal.size();
      dirty = true;
    }
    if (!display.paused() && display.read_blocks()) fresh = true;
    const std::int64_t now = monotonic_ns();
    if (dirty || (now >= next_frame && (fresh || now - last_frame >= kIdleFrameNs))) {
      if (!terminal.write(frame_text(display.frame(size), size, terminal.interactive_output()))) break;
      last_frame = now;
      next_frame = now + frame_ns;
      fresh = false;
      if (args.frames != 0 && ++frames >= args.frames) break;
      continue;
    }
    const std::int64_t wait_ns = now >= next_frame ? kWaitSliceNs : std::min(next_frame - now, kWaitSliceNs);
    if (watcher && !display.paused()) {
      (void)watcher->wait(wait_ns);  // woken by each published block, so none is skipped needlessly
    } else {
      terminal.wait_input(static_cast<int>(std::max<std::int64_t>(1, wait_ns / kNsPerMs)));
    }
  }
  return kExitOk;  // q, --frames reached, a stop signal, or stdout gone
}

}  // namespace

void add_scope_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<ScopeArgs>();
  CLI::App* sub = app.add_subcommand(
      "scope", "Live oscilloscope of a channel in the terminal (braille min/max envelope); keys: q quit, "
               "space pause, +/- zoom, t trigger, j/k or arrows move the level");
  add_name_option(*sub, args->where);
  sub->add_option("CHANNEL", args->channel, "channel to show")->required();
  args->span_option = sub->add_option("--span", args->span_s, "seconds across the screen (default: 4 blocks)")
                          ->check(CLI::Range(0.0, kMaxSpanSeconds))
                          ->check(CLI::PositiveNumber);
  args->trigger_option = sub->add_option("--trigger", args->trigger,
                                         "trigger on rising crossings of this level (in the channel's units)");
  sub->add_option("--frames", args->frames, "exit after this many frames")->check(CLI::Range(std::uint64_t{1}, kMaxFrames));
  sub->add_option("--fps", args->fps, "most frames per second")->capture_default_str()->check(CLI::Range(0.1, kMaxFps));
  bind_action(*sub, action, args, &run_scope);
}

}  // namespace weir::tools
