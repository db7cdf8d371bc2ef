#include "channel_report.hpp"

#include <chrono>
#include <algorithm>
#include <thread>

#include <fmt/format.h>

#include "command.hpp"
#include "weir/core/block_copier.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/channel_activity.hpp"
#include "weir/tools/arena_access.hpp"
#include "weir/tools/output.hpp"
#include "weir/tools/stop_signals.hpp"

namespace weir::tools {

namespace {

// One channel with its activity: the true rate from its own block timestamps, at one look.
struct Row {
  core::ChannelInfo info;
  core::ChannelActivity activity;
};

std::vector<Row> look(const core::Arena& arena) {
  std::vector<Row> rows;
  for (auto& c : core::list_channels(arena)) {
    core::ChannelActivity a;
    if (auto copier = core::BlockCopier::open(arena, c.index)) a = core::channel_activity(*copier);
    rows.push_back({std::move(c), a});
  }
  return rows;
}

// A writer is stalled when its newest block is older than 2 s or four of its nominal block periods,
// whichever is longer (as `weir serve` marks a channel stale).
bool stalled(const Row& r) {
  if (!r.activity.known) return false;
  const double period_s = r.info.rate_hz > 0 ? r.info.samples_per_block / r.info.rate_hz : 0.0;
  return r.activity.age_s > std::max(2.0, 4.0 * period_s);
}

// A framed channel's shape and axis as JSON; null for a plain sample channel.
std::string frame_json(const core::FrameShape& f) {
  if (!f.framed()) return "null";
  JsonObject axis;
  axis.text("name", f.axis.name).text("units", f.axis.units).real("start", f.axis.start).real("step", f.axis.step);
  if (!f.axis.values_key.empty()) axis.text("values_key", f.axis.values_key);
  JsonObject o;
  o.number("frames_per_block", f.frames_per_block).number("frame_elements", f.frame_elements).raw("axis", axis.str());
  return o.str();
}

// "frames 1 x 2049 frequency [Hz] 0 + 30.5/bin" (values from a key: "frequency [Hz] from key K").
std::string frame_text(const core::FrameShape& f) {
  std::string axis = f.axis.name.empty() ? std::string("index") : f.axis.name;
  if (!f.axis.units.empty()) axis += fmt::format(" [{}]", f.axis.units);
  const std::string where = f.axis.values_key.empty()
                                ? fmt::format("{} + {}/bin", format_real(f.axis.start), format_real(f.axis.step))
                                : fmt::format("from key {}", f.axis.values_key);
  return fmt::format("frames {} x {} {} {}", f.frames_per_block, f.frame_elements, axis, where);
}

std::string channel_json(const Row& row) {
  const core::ChannelInfo& c = row.info;
  JsonArray consumers;
  for (const auto& k : c.consumers) {
    JsonObject o;
    o.number("pid", k.pid)
        .boolean("alive", k.alive)
        .text("name", k.name)
        .text("policy", core::policy_name(k.policy))
        .number("cursor", k.cursor)
        .number("blocks_read", k.blocks_read)
        .number("samples_read", k.samples_read)
        .number("blocks_lost", k.blocks_lost)
        .number("lag_blocks", k.lag)
        .text("kind", k.kind)
        .number("blocks_out", k.blocks_out)
        .number("blocks_skipped", k.blocks_skipped)
        .number("errors", k.errors)
        .number("proc_p50_ns", k.proc_p50_ns)
        .number("proc_p99_ns", k.proc_p99_ns)
        .number("bytes_out", k.bytes_out);
    consumers.raw(o.str());
  }
  JsonObject o;
  o.text("name", c.name)
      .text("dtype", core::dtype_name(c.dtype))
      .real("rate_hz", c.rate_hz)
      .text("units", c.units)
      .number("samples_per_block", c.samples_per_block)
      .number("ring_blocks", c.ring_blocks)
      .number("blocks_written", c.blocks_written)
      .number("samples_written", c.samples_written)
      .number("dropped_at_source", c.dropped_at_source)
      .number("writer_pid", c.writer_pid)
      .boolean("writer_alive", c.writer_alive)
      .real("blocks_per_s", row.activity.blocks_per_s)
      .real("samples_per_s", row.activity.samples_per_s)
      .raw("newest_block_age_s", row.activity.known ? format_real(row.activity.age_s) : std::string{"null"})
      .boolean("stalled", stalled(row))
      .raw("frame", frame_json(c.frame))
      .raw("consumers", consumers.str());
  return o.str();
}

void print_human(const std::string& where, const std::vector<Row>& now) {
  fmt::print("arena '{}': {} channel(s)\n", where, now.size());
  fmt::print("  {:<16}{:<6}{:>12}  {:<10}{:>12}{:>12}{:>10}  {}\n", "CHANNEL", "TYPE", "RATE Hz", "BLOCK", "WRITTEN",
             "BLOCKS/s", "DROPPED", "WRITER");
  for (const auto& row : now) {
    const core::ChannelInfo& c = row.info;
    fmt::print("  {:<16}{:<6}{:>12.6g}  {:<10}{:>12}{:>12.1f}{:>10}  {}{}\n", c.name, core::dtype_name(c.dtype), c.rate_hz,
               fmt::format("{}x{}", c.ring_blocks, c.samples_per_block), c.blocks_written, row.activity.blocks_per_s,
               c.dropped_at_source,
               c.writer_pid == 0 ? std::string{"none"}
                                 : fmt::format("pid {}{}", c.writer_pid, c.writer_alive ? "" : " (dead)"),
               stalled(row) ? fmt::format(", stalled: newest block {:.1f} s old", row.activity.age_s) : std::string{});
    if (c.frame.framed()) fmt::print("      {}\n", frame_text(c.frame));
    for (const auto& k : c.consumers) {
      fmt::print("      consumer {:<14} pid {:<8}{:<9} read {:<10} lost {:<8} lag {}{}\n", k.name, k.pid,
                 core::policy_name(k.policy), k.blocks_read, k.blocks_lost, k.lag, k.alive ? "" : "  (dead)");
      if (!k.kind.empty())
        fmt::print("        {:<20} out {:<10} skipped {:<8} errors {:<6} p50 {:.1f} us  p99 {:.1f} us{}\n", k.kind,
                   k.blocks_out, k.blocks_skipped, k.errors, static_cast<double>(k.proc_p50_ns) / 1e3,
                   static_cast<double>(k.proc_p99_ns) / 1e3,
                   k.bytes_out != 0 ? fmt::format("  wrote {:.1f} MiB", static_cast<double>(k.bytes_out) / 1048576.0)
                                    : std::string{});
    }
  }
}

}  // namespace

int run_channel_ls(const ChannelLsArgs& args) {
  auto arena = open_arena(args.where, Access::read_only);
  if (!arena) return kExitError;
  const StopSignals signals;
  for (int refresh = 0; !StopSignals::flag().load(std::memory_order_relaxed); ++refresh) {  // a flag only
    const std::vector<Row> now = look(*arena);
    if (args.json) {
      JsonArray list;
      for (const auto& row : now) list.raw(channel_json(row));
      JsonObject out;
      out.text("arena", args.where).raw("channels", list.str());
      print_json(out);
    } else {
      if (args.watch && isatty(STDOUT_FILENO)) fmt::print("\x1b[H\x1b[2J");  // redraw in place on a terminal
      print_human(args.where, now);
    }
    std::fflush(stdout);
    if (!args.watch || (args.count > 0 && refresh + 1 >= args.count)) break;
    std::this_thread::sleep_for(std::chrono::duration<double>(args.interval_s));
  }
  return kExitOk;
}

}  // namespace weir::tools
