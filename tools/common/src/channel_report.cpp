#include "weir/tools/channel_report.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "weir/core/block_copier.hpp"
#include "weir/tools/output.hpp"

namespace weir::tools {
namespace {

constexpr double kMinStallS = 2;           // a writer is stalled after at least this long ...
constexpr double kStallBlockPeriods = 4;   // ... and at least this many nominal block periods

}  // namespace

std::vector<ChannelRow> look_channels(const core::Arena& arena) {
  std::vector<ChannelRow> rows;
  for (auto& c : core::list_channels(arena)) {
    core::ChannelActivity a;
    if (auto copier = core::BlockCopier::open(arena, c.index)) a = core::channel_activity(*copier);
    rows.push_back({std::move(c), a});
  }
  return rows;
}

double stall_after_s(const core::ChannelInfo& channel, double given_s) {
  if (given_s > 0) return given_s;
  const double period_s = channel.rate_hz > 0 ? static_cast<double>(channel.samples_per_block) / channel.rate_hz : 0.0;
  return std::max(kMinStallS, kStallBlockPeriods * period_s);
}

bool stalled(const ChannelRow& row) {
  return row.activity.known && row.activity.age_s > stall_after_s(row.info);
}

std::string frame_json(const core::FrameShape& f) {
  if (!f.framed()) return "null";
  JsonObject axis;
  axis.text("name", f.axis.name).text("units", f.axis.units).real("start", f.axis.start).real("step", f.axis.step);
  if (!f.axis.values_key.empty()) axis.text("values_key", f.axis.values_key);
  JsonObject o;
  o.number("frames_per_block", f.frames_per_block).number("frame_elements", f.frame_elements).raw("axis", axis.str());
  return o.str();
}

std::string frame_text(const core::FrameShape& f) {
  std::string axis = f.axis.name.empty() ? std::string("index") : f.axis.name;
  if (!f.axis.units.empty()) axis += fmt::format(" [{}]", f.axis.units);
  const std::string where = f.axis.values_key.empty()
                                ? fmt::format("{} + {}/bin", format_real(f.axis.start), format_real(f.axis.step))
                                : fmt::format("from key {}", f.axis.values_key);
  return fmt::format("frames {} x {} {} {}", f.frames_per_block, f.frame_elements, axis, where);
}

std::string channel_json(const ChannelRow& row) {
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

}  // namespace weir::tools
