#include "channel_report.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include <fmt/format.h>

#include "command.hpp"
#include "weir/tools/arena_access.hpp"
#include "weir/tools/channel_report.hpp"
#include "weir/tools/output.hpp"
#include "weir/tools/stop_signals.hpp"

namespace weir::tools {

namespace {

void print_human(const std::string& where, const std::vector<ChannelRow>& now) {
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
    const std::vector<ChannelRow> now = look_channels(*arena);
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
