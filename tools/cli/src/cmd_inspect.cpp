// Reports on arenas without changing them: info, ls.
#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "channel_report.hpp"
#include "command.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/numa.hpp"
#include "weir/tools/arena_access.hpp"
#include "weir/tools/arena_report.hpp"
#include "weir/tools/output.hpp"

namespace weir::tools {
namespace {

using core::Region;

constexpr std::array<std::pair<Region, std::string_view>, static_cast<std::size_t>(Region::count)> kRegionNames = {{
    {Region::index, "index"},
    {Region::slots, "slots"},
    {Region::groups, "groups"},
    {Region::channels, "channels"},
    {Region::vectors, "vectors"},
    {Region::consumers, "consumers"},
    {Region::attach, "attach"},
    {Region::watchers, "watchers"},
}};
constexpr int kOffsetWidth = 14;  // columns for a region offset in the human table
constexpr int kRegionNameWidth = kLabelWidth - kColumnGap;  // region rows are indented one gap deeper

const core::RegionDesc& region_desc(const core::ArenaHeader& header, Region region) {
  return header.regions[static_cast<std::uint32_t>(region)];
}

std::string creator_text(const core::ArenaStatus& status) {
  return fmt::format("{} ({})", status.creator_pid, status.creator_alive ? "alive" : "dead");
}

std::string pids_json(const std::vector<std::uint32_t>& pids) {
  JsonArray out;
  for (const std::uint32_t pid : pids) out.number(pid);
  return out.str();
}

// ---- info ----

struct InfoArgs {
  std::string where;
  bool json = false;
};

std::string regions_json(const core::ArenaHeader& header) {
  JsonObject out;
  for (const auto& [region, name] : kRegionNames) {
    const core::RegionDesc& desc = region_desc(header, region);
    out.raw(name, JsonObject{}.number("offset", desc.offset).number("bytes", desc.bytes).str());
  }
  return out.str();
}

// The NUMA policy asked for at create and the one the kernel reports for the arena's first page.
std::string numa_json(const core::ArenaStatus& status) {
  JsonObject numa;
  numa.number("requested_node", status.numa_node)
      .boolean("prefaulted", status.prefaulted)
      .text("policy", status.numa_policy)
      .raw("policy_nodes", fmt::format("[{}]", fmt::join(status.numa_policy_nodes, ",")))
      .number("page_node", status.numa_page_node)
      .number("machine_nodes", core::numa_node_count())
      .boolean("libnuma", core::numa_library_loaded());
  return numa.str();
}

std::string numa_text(const core::ArenaStatus& status) {
  const std::string asked = status.numa_node < 0 ? "no node asked" : fmt::format("node {} asked", status.numa_node);
  return fmt::format("{}; policy {} [{}], first page on node {}{}; {} node(s), {}", asked, status.numa_policy,
                     fmt::join(status.numa_policy_nodes, ","), status.numa_page_node,
                     status.prefaulted ? ", prefaulted" : "", core::numa_node_count(),
                     core::numa_library_loaded() ? "libnuma" : "system calls (no libnuma)");
}

void print_info_json(const core::ArenaStatus& status, const core::Arena* arena) {
  JsonObject out;
  out.text("location", status.location)
      .text("name", status.name)
      .number("bytes", status.bytes)
      .number("creator_pid", status.creator_pid)
      .boolean("creator_alive", status.creator_alive)
      .raw("attached", pids_json(status.attached))
      .boolean("stale", status.stale)
      .text("mode", octal_mode(status.mode))
      .number("owner_uid", status.owner_uid)
      .number("live_keys", status.live_keys)
      .number("recovered_slots", status.recovered_slots)
      .number("created_ns", status.created_ns)
      .text("created", iso8601_utc(status.created_ns))
      .raw("geometry", geometry_json(status.geometry))
      .raw("numa", numa_json(status));
  if (arena != nullptr) {
    out.number("layout_version", arena->header().layout_version)
        .number("header_bytes", arena->header().header_bytes)
        .raw("regions", regions_json(arena->header()));
  }
  if (!status.error.empty()) out.text("error", status.error);
  print_json(out);
}

void print_info_human(const core::ArenaStatus& status, const core::Arena* arena) {
  const auto line = [](std::string_view label, const std::string& value) {
    fmt::print("  {:<{}}{}\n", label, kLabelWidth, value);
  };
  fmt::print("arena '{}' ({})\n", status.name, status.location);
  if (!status.error.empty()) line("ERROR", status.error);
  line("size", fmt::format("{} ({} bytes)", human_bytes(status.bytes), status.bytes));
  line("created", fmt::format("{} by pid {}", iso8601_utc(status.created_ns), creator_text(status)));
  line("owner", fmt::format("uid {}, mode {}", status.owner_uid, octal_mode(status.mode)));
  line("attached", status.attached.empty()
                       ? std::string{"none"}
                       : fmt::format("{} (pids {})", status.attached.size(), fmt::join(status.attached, ", ")));
  line("stale", status.stale ? "yes: creator dead and nobody attached" : "no");
  line("keys", fmt::format("{} live, {} slots recovered from dead writers", status.live_keys, status.recovered_slots));
  line("numa", numa_text(status));
  print_geometry(status.geometry);
  if (arena == nullptr) return;
  line("layout", fmt::format("version {}, header {} B", arena->header().layout_version, arena->header().header_bytes));
  fmt::print("  regions     {:<{}}{}\n", "offset", kOffsetWidth, "bytes");
  for (const auto& [region, name] : kRegionNames) {
    const core::RegionDesc& desc = region_desc(arena->header(), region);
    fmt::print("    {:<{}}{:<{}}{}\n", name, kRegionNameWidth, desc.offset, kOffsetWidth, desc.bytes);
  }
}

int run_info(const InfoArgs& args) {
  auto status = core::inspect(args.where);
  if (!status) return report_error(fmt::format("cannot inspect '{}'", args.where), status.error());
  // The region table is only in the header; a second read-only mapping reads it without side effects.
  std::optional<core::Arena> arena;
  if (status->error.empty()) {
    core::OpenOptions options;
    options.read_only = true;
    if (auto opened = core::Arena::open(args.where, options)) arena = std::move(*opened);
  }
  const core::Arena* header_source = arena ? &*arena : nullptr;
  if (args.json) {
    print_info_json(*status, header_source);
  } else {
    print_info_human(*status, header_source);
  }
  if (!status->error.empty()) {
    print_error(fmt::format("'{}' is not a valid arena: {}", args.where, status->error));
    return kExitError;
  }
  return kExitOk;
}

void add_info(CLI::App& app, Action& action) {
  auto args = std::make_shared<InfoArgs>();
  CLI::App* sub = app.add_subcommand("info", "Show an arena's geometry, regions, creator, attached processes, keys");
  add_name_option(*sub, args->where);
  add_json_flag(*sub, args->json);
  bind_action(*sub, action, args, &run_info);
}

// ---- ls ----

struct LsArgs {
  ChannelLsArgs channels;  // with a NAME: that arena's channels
};

std::string status_json(const core::ArenaStatus& status) {
  JsonObject out;
  out.text("name", status.name).text("location", status.location);
  if (!status.error.empty()) return out.text("error", status.error).str();
  out.number("bytes", status.bytes)
      .number("live_keys", status.live_keys)
      .number("creator_pid", status.creator_pid)
      .boolean("creator_alive", status.creator_alive)
      .raw("attached", pids_json(status.attached))
      .boolean("stale", status.stale)
      .text("created", iso8601_utc(status.created_ns));
  return out.str();
}

int run_ls(const LsArgs& ls) {
  if (!ls.channels.where.empty()) return run_channel_ls(ls.channels);
  const ChannelLsArgs& args = ls.channels;
  std::vector<core::ArenaStatus> arenas = core::list_shm_arenas();
  std::sort(arenas.begin(), arenas.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  if (args.json) {
    JsonArray list;
    for (const auto& status : arenas) list.raw(status_json(status));
    JsonObject out;
    out.number("count", arenas.size()).raw("arenas", list.str());
    print_json(out);
    return kExitOk;
  }
  if (arenas.empty()) {
    fmt::print("no weir arenas in /dev/shm\n");
    return kExitOk;
  }
  std::size_t name_width = std::string_view{"NAME"}.size();
  for (const auto& status : arenas) name_width = std::max(name_width, status.name.size());
  const int width = static_cast<int>(name_width) + kColumnGap;
  constexpr int kSizeWidth = 11;
  constexpr int kKeysWidth = 8;
  constexpr int kCreatorWidth = 16;
  fmt::print("{:<{}}{:<{}}{:<{}}{:<{}}{}\n", "NAME", width, "SIZE", kSizeWidth, "KEYS", kKeysWidth, "CREATOR",
             kCreatorWidth, "ATTACHED");
  for (const auto& status : arenas) {
    if (!status.error.empty()) {
      fmt::print("{:<{}}INVALID: {}\n", status.name, width, status.error);
      continue;
    }
    fmt::print("{:<{}}{:<{}}{:<{}}{:<{}}{}{}\n", status.name, width, human_bytes(status.bytes), kSizeWidth,
               status.live_keys, kKeysWidth, creator_text(status), kCreatorWidth, status.attached.size(),
               status.stale ? "  STALE" : "");
  }
  return kExitOk;
}

void add_ls(CLI::App& app, Action& action) {
  auto args = std::make_shared<LsArgs>();
  CLI::App* sub = app.add_subcommand(
      "ls", "List the weir arenas in /dev/shm (stale and invalid ones flagged), or one arena's channels and consumers");
  sub->add_option("NAME", args->channels.where, "an arena: list its channels, writers and consumers");
  sub->add_flag("--watch", args->channels.watch, "with NAME: refresh live until interrupted");
  sub->add_option("--interval", args->channels.interval_s, "seconds between refreshes")
      ->capture_default_str()
      ->check(CLI::Range(0.05, 3600.0));
  sub->add_option("--count", args->channels.count, "with --watch: stop after this many refreshes")
      ->check(CLI::NonNegativeNumber);
  add_json_flag(*sub, args->channels.json);
  bind_action(*sub, action, args, &run_ls);
}

}  // namespace

void add_inspect_commands(CLI::App& app, Action& action) {
  add_info(app, action);
  add_ls(app, action);
}

}  // namespace weir::tools
