// Arena lifecycle: create, rm, sync, snapshot, restore.
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "command.hpp"
#include "snapshot_h5.hpp"
#include "weir/config/arena_room.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/arena_copy.hpp"
#include "weir/core/arena_sizing.hpp"
#include "weir/tools/arena_access.hpp"
#include "weir/tools/arena_report.hpp"
#include "weir/tools/output.hpp"
#include "weir/tools/value_codec.hpp"

namespace weir::tools {
namespace {

// ---- create ----

struct CreateArgs {
  std::string where;
  core::ArenaOptions options;
  std::string mode = octal_mode(core::kDefaultMode);
  std::uint64_t pool_mib = core::kDefaultChannelDataBytes >> 20;
  std::uint64_t keys = 0;     // --keys: size the slot table to hold this many keys
  std::uint64_t vectors = 0;  // --vectors: the same, for keys that each carry a vector
  bool plan = false;
  bool json = false;
  CLI::Option* dim_option = nullptr;
  CLI::Option* value_bytes_option = nullptr;
};

// --keys / --vectors: the slot table and probe window of core's sizing rule; vectors get values
// sized for ann requests and answers, plain keys no vector rows, unless the options were given.
core::Result<core::ArenaOptions> sized_options(const CreateArgs& args, core::ArenaOptions options) {
  if (args.vectors > 0) {
    if (args.value_bytes_option->count() == 0) options.value_bytes = core::kVectorValueBytes;
    return core::sized_for_keys(args.vectors, options);
  }
  if (args.keys > 0) {
    if (args.dim_option->count() == 0) options.vector_dim = 0;
    return core::sized_for_keys(args.keys, options);
  }
  return options;
}

std::string cost_json(const core::ArenaCost& cost) {
  JsonObject out;
  out.number("slots", cost.slots).number("vectors", cost.vectors).number("other", cost.other).number("total", cost.total);
  return out.str();
}

void print_cost(const core::ArenaCost& cost, std::uint64_t sized_keys, bool vectors) {
  if (sized_keys > 0)
    fmt::print("  {:<{}}{} keys{} and {} more, whatever their names (slots sized at {}% load)\n", "holds", kLabelWidth,
               sized_keys, vectors ? " with vectors" : "", core::kSizedHeadroomKeys, core::kSizedLoadPercent);
  fmt::print("  {:<{}}slots {}, vector rows {}, other {}: {} in all\n", "memory", kLabelWidth, human_bytes(cost.slots),
             human_bytes(cost.vectors), human_bytes(cost.other), human_bytes(cost.total));
}

int run_create(const CreateArgs& args) {
  const std::string context = fmt::format("cannot create '{}'", args.where);
  core::ArenaOptions base = args.options;
  base.mode = parse_mode(args.mode).value_or(core::kDefaultMode);  // the CLI check already refused bad text
  base.channel_data_bytes = args.pool_mib << 20;
  auto sized = sized_options(args, base);
  if (!sized) return report_error(context, sized.error());
  const core::ArenaOptions& options = *sized;
  const std::uint64_t sized_keys = args.vectors > 0 ? args.vectors : args.keys;
  core::ArenaHeader planned{};
  if (auto layout = core::plan_layout(options, planned); !layout) return report_error(context, layout.error());
  auto cost = core::arena_cost(options);
  if (!cost) return report_error(context, cost.error());
  if (args.plan) {
    if (args.json) {
      JsonObject out;
      out.text("planned", args.where).number("bytes", cost->total).text("mode", octal_mode(options.mode))
          .raw("geometry", geometry_json(planned.geometry)).raw("memory", cost_json(*cost));
      if (sized_keys > 0) out.number("sized_keys", sized_keys).number("headroom_keys", core::kSizedHeadroomKeys);
      print_json(out);
    } else {
      fmt::print("would create '{}' (nothing made)\n", args.where);
      print_geometry(planned.geometry);
      print_cost(*cost, sized_keys, args.vectors > 0);
    }
    return kExitOk;
  }
  if (auto room = config::check_arena_room(args.where, planned.arena_bytes, options.channel_data_bytes); !room)
    return report_error(context, room.error());
  auto arena = core::Arena::create(args.where, options);
  if (!arena) return report_error(context, arena.error());

  const core::Location& location = arena->location();
  const bool memfd = location.backing == core::Backing::memfd;
  if (args.json) {
    JsonObject out;
    out.text("created", location.describe())
        .text("name", location.name)
        .text("path", location.path)
        .number("bytes", arena->bytes())
        .text("mode", octal_mode(options.mode))
        .raw("geometry", geometry_json(arena->geometry()))
        .raw("memory", cost_json(*cost));
    if (sized_keys > 0) out.number("sized_keys", sized_keys).number("headroom_keys", core::kSizedHeadroomKeys);
    print_json(out);
  } else {
    const bool shm = location.backing == core::Backing::shm;
    fmt::print("created {}{}\n", location.describe(), shm ? " at " + location.path : std::string{});
    fmt::print("  {:<{}}{} ({} bytes), mode {}\n", "size", kLabelWidth, human_bytes(arena->bytes()),
               arena->bytes(), octal_mode(options.mode));
    print_geometry(arena->geometry());
    print_cost(*cost, sized_keys, args.vectors > 0);
  }
  if (memfd) print_error("note: a memfd arena lives only while a process holds it; this one ends with weir");
  return kExitOk;
}

void add_create(CLI::App& app, Action& action) {
  auto args = std::make_shared<CreateArgs>();
  core::ArenaOptions& o = args->options;
  CLI::App* sub = app.add_subcommand("create", "Create an arena; it stays after weir exits (shm or file)");
  add_name_option(*sub, args->where);
  const std::string headroom = std::to_string(core::kSizedHeadroomKeys);
  CLI::Option* vectors =
      sub->add_option("--vectors", args->vectors,
                      "size the arena to hold this many keys with vectors (and " + headroom +
                          " more): slots, probe window, and values of " + std::to_string(core::kVectorValueBytes) +
                          " B unless --value-bytes")
          ->check(CLI::Range(std::uint64_t{1}, core::max_sized_keys()));
  CLI::Option* keys = sub->add_option("--keys", args->keys,
                                      "size the arena to hold this many keys (and " + headroom +
                                          " more), without vector rows unless --dim")
                          ->check(CLI::Range(std::uint64_t{1}, core::max_sized_keys()))
                          ->excludes(vectors);
  sub->add_option("--slots", o.slot_count,
                  "KV slot table size: not a count of keys that fit (a 64-entry probe window fills near two "
                  "thirds); --keys or --vectors size it for a count")
      ->capture_default_str()
      ->check(CLI::Range(1U, core::kMaxSlotCount))
      ->excludes(vectors)
      ->excludes(keys);
  sub->add_option("--key-bytes", o.key_bytes, "longest key")
      ->capture_default_str()
      ->check(CLI::Range(1U, core::kMaxKeyBytes));
  args->value_bytes_option = sub->add_option("--value-bytes", o.value_bytes, "largest value")
                                 ->capture_default_str()
                                 ->check(CLI::Range(1U, core::kMaxValueBytes));
  sub->add_option("--max-probe", o.max_probe, "linear-probe window")
      ->capture_default_str()
      ->excludes(vectors)
      ->excludes(keys);
  sub->add_option("--channels", o.channel_capacity, "channel descriptors")
      ->capture_default_str()
      ->check(CLI::Range(0U, core::kMaxChannelCapacity));
  sub->add_option("--pool", args->pool_mib, "channel pool in MiB: every channel's ring and pyramid")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{0}, core::kMaxArenaBytes >> 20));
  sub->add_option("--consumers", o.consumer_capacity, "consumer-table rows")
      ->capture_default_str()
      ->check(CLI::Range(0U, core::kMaxConsumerCapacity));
  args->dim_option = sub->add_option("--dim", o.vector_dim, "float32 per vector")
                         ->capture_default_str()
                         ->check(CLI::Range(1U, core::kMaxVectorDim));
  sub->add_option("--mode", args->mode, "permission bits, octal")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](const std::string& text) {
            return parse_mode(text) ? std::string{} : "must be octal permission bits such as 0660";
          },
          "MODE"));
  sub->add_option("--numa-node", o.numa_node, "bind the arena's pages to this NUMA node (and prefault them)")
      ->check(CLI::Range(0, 1023));
  sub->add_flag("--prefault", o.prefault, "touch every page at create so the hot path never page-faults");
  sub->add_flag("--replace", o.replace_stale,
                "replace an existing arena of that name if it is stale (creator dead, nobody attached)");
  sub->add_flag("--plan", args->plan, "print the geometry and what the arena costs in memory; create nothing");
  add_json_flag(*sub, args->json);
  bind_action(*sub, action, args, &run_create);
}

// ---- rm ----

struct RmArgs {
  std::string where;
  bool force = false;
  bool json = false;
};

// Who has the arena attached, or an error when that cannot be told (missing or invalid arena).
core::Result<std::vector<std::uint32_t>> attached_to(std::string_view where) {
  auto status = core::inspect(where);
  if (!status) return tl::make_unexpected(status.error());
  if (!status->error.empty()) return core::fail(core::Errc::layout_mismatch, status->error);
  return status->attached;
}

int run_rm(const RmArgs& args) {
  const std::string context = fmt::format("cannot remove '{}'", args.where);
  auto maybe_attached = attached_to(args.where);
  if (!maybe_attached && !args.force) {
    if (maybe_attached.error().code == core::Errc::not_found) return report_error(context, maybe_attached.error());
    print_error(fmt::format("{}: cannot tell who has it attached ({}); use --force to remove it anyway", context,
                            maybe_attached.error().what));
    return kExitError;
  }
  const std::vector<std::uint32_t> attached = maybe_attached.value_or(std::vector<std::uint32_t>{});
  if (!attached.empty() && !args.force) {
    print_error(fmt::format("{}: {} live process(es) have it attached (pids {}); use --force to remove it anyway",
                            context, attached.size(), fmt::join(attached, ", ")));
    return kExitError;
  }
  auto removed = core::Arena::remove(args.where);
  if (!removed) return report_error(context, removed.error());

  if (args.json) {
    JsonArray pids;
    for (const std::uint32_t pid : attached) pids.number(pid);
    JsonObject out;
    out.text("removed", args.where).boolean("forced", args.force).raw("attached", pids.str());
    print_json(out);
  } else {
    fmt::print("removed '{}'\n", args.where);
    if (!attached.empty()) {
      fmt::print("  pids {} still have it mapped until they close it\n", fmt::join(attached, ", "));
    }
  }
  return kExitOk;
}

void add_rm(CLI::App& app, Action& action) {
  auto args = std::make_shared<RmArgs>();
  CLI::App* sub = app.add_subcommand("rm", "Remove an arena's name; refuses while live processes have it attached");
  add_name_option(*sub, args->where);
  sub->add_flag("--force", args->force, "remove even if processes are attached or the arena is invalid");
  add_json_flag(*sub, args->json);
  bind_action(*sub, action, args, &run_rm);
}

// ---- sync ----

struct SyncArgs {
  std::string where;
  bool json = false;
};

int run_sync(const SyncArgs& args) {
  auto arena = open_arena(args.where, Access::read_only);
  if (!arena) return kExitError;
  const std::string arena_text = arena->location().describe();
  if (auto synced = arena->sync(); !synced) {
    return report_error(fmt::format("cannot sync {}", arena_text), synced.error());
  }
  if (args.json) {
    JsonObject out;
    out.text("synced", arena_text).number("bytes", arena->bytes());
    print_json(out);
  } else {
    fmt::print("synced {} ({})\n", arena_text, human_bytes(arena->bytes()));
  }
  return kExitOk;
}

void add_sync(CLI::App& app, Action& action) {
  auto args = std::make_shared<SyncArgs>();
  CLI::App* sub = app.add_subcommand("sync", "Flush the arena's mapping to its backing (msync; for file arenas)");
  add_name_option(*sub, args->where);
  add_json_flag(*sub, args->json);
  bind_action(*sub, action, args, &run_sync);
}

// ---- snapshot and restore ----

struct CopyArgs {
  std::string where;
  std::string file;
  bool replace = false;
  bool json = false;
  H5SnapshotArgs h5;  // FILE.h5 or DIR/: an HDF5 snapshot instead of the raw key copy
};

void print_copy_stats(std::string_view verb, const CopyArgs& args, const core::SnapshotStats& stats) {
  if (args.json) {
    JsonObject out;
    out.text("arena", args.where)
        .text("file", args.file)
        .number("keys_copied", stats.keys_copied)
        .number("torn_skipped", stats.torn_skipped)
        .number("bytes", stats.bytes);
    print_json(out);
    return;
  }
  fmt::print("{}: {} keys, {}\n", verb, stats.keys_copied, human_bytes(stats.bytes));
  if (stats.torn_skipped > 0) {
    fmt::print("  skipped {} torn key(s): a writer died while writing them\n", stats.torn_skipped);
  }
}

int run_snapshot(const CopyArgs& args) {
  if (wants_h5_snapshot(args.file, args.h5)) return run_h5_snapshot(args.where, args.file, args.h5, args.json);
  auto arena = open_arena(args.where, Access::read_only);
  if (!arena) return kExitError;
  auto stats = core::snapshot_arena(*arena, args.file);
  if (!stats) return report_error("", stats.error());  // core names the arena and the file
  print_copy_stats(fmt::format("snapshot of {} written to '{}'", arena->location().describe(), args.file), args,
                   *stats);
  return kExitOk;
}

int run_restore(const CopyArgs& args) {
  auto stats = core::restore_arena(args.file, args.where, args.replace);
  if (!stats) return report_error("", stats.error());  // core names the file and the arena
  print_copy_stats(fmt::format("restored '{}' into '{}'", args.file, args.where), args, *stats);
  return kExitOk;
}

void add_snapshot(CLI::App& app, Action& action) {
  auto args = std::make_shared<CopyArgs>();
  CLI::App* sub = app.add_subcommand("snapshot", "Write a consistent copy of an arena's keys to a file");
  add_name_option(*sub, args->where);
  sub->add_option("FILE", args->file, "snapshot file to write")->required();
  add_h5_snapshot_options(*sub, args->h5);
  add_json_flag(*sub, args->json);
  bind_action(*sub, action, args, &run_snapshot);
}

void add_restore(CLI::App& app, Action& action) {
  auto args = std::make_shared<CopyArgs>();
  CLI::App* sub = app.add_subcommand("restore", "Create an arena from a snapshot file");
  sub->add_option("FILE", args->file, "snapshot file to read")->required();
  add_name_option(*sub, args->where);
  sub->add_flag("--replace", args->replace, "overwrite an existing arena of that name");
  add_json_flag(*sub, args->json);
  bind_action(*sub, action, args, &run_restore);
}

}  // namespace

void add_arena_commands(CLI::App& app, Action& action) {
  add_create(app, action);
  add_rm(app, action);
  add_sync(app, action);
  add_snapshot(app, action);
  add_restore(app, action);
}

}  // namespace weir::tools
