// Signal commands: watch (follow keys as they change, woken by signal groups, never polling) and
// label (give a key the labels that watchers subscribe to).
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <bit>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "command.hpp"
#include "time_units.hpp"
#include "weir/core/clock.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/signals.hpp"
#include "weir/tools/arena_access.hpp"
#include "weir/tools/change_feed.hpp"
#include "weir/tools/output.hpp"
#include "weir/tools/stop_signals.hpp"
#include "weir/tools/value_codec.hpp"

namespace weir::tools {
namespace {

using core::KvStatus;

constexpr std::string_view kKeyPrefix = "key:";       // a positional target naming a key, not a label
constexpr std::int64_t kWaitSliceNs = 100'000'000;    // longest sleep before re-checking signals and --timeout
constexpr double kMaxTimeoutSeconds = 1e9;            // --timeout limit: about 31 years, far from i64 overflow
constexpr std::int64_t kMaxSpinUs = 1'000'000;        // --spin-us limit: one second of spinning per wait
constexpr std::uint64_t kMaxCount = 1'000'000'000'000;  // --count limit, only to keep the message short
constexpr double kNsPerUs = 1e3;


// ---- watch ----

struct WatchArgs {
  std::string where;
  std::vector<std::string> targets;  // labels, or keys written key:NAME
  std::vector<std::string> keys;
  std::vector<std::string> labels;
  bool json = false;
  std::uint64_t count = 0;           // 0: no limit
  double timeout_s = 0;
  const CLI::Option* timeout_option = nullptr;  // owned by the app, which outlives the action
  std::int64_t spin_us = 0;
};

// Reads changes back for one Watcher and prints them. Thread: main only.
class ChangePrinter {
 public:
  ChangePrinter(const core::Arena& arena, const WatchArgs& args) : reader_(arena), args_(args) {}

  /// Remembers which key a key group follows, to name its changes after the key is deleted.
  void note_key_group(std::uint32_t group, const std::string& key) { reader_.note_key_group(group, key); }

  /// Prints one change line; `writes` > 1 when writes came faster than watch woke.
  void print(const PendingChange& change) {
    const ChangeRecord r = reader_.read(change);
    const std::string time = iso8601_utc(static_cast<std::uint64_t>(r.time_ns));
    if (args_.json) {
      JsonObject out;
      out.text("time", time).text("key", r.key);
      if (r.deleted) {
        out.boolean("deleted", true);
      } else if (!r.problem.empty()) {
        out.text("error", r.problem);
      } else {
        out.number("version", r.info.version())
            .text("type", core::value_type_name(r.info.type))
            .raw("value", value_to_json(r.info.type, r.value));
      }
      out.number("writes", r.writes);
      if (r.latency_ns) out.real("latency_us", static_cast<double>(*r.latency_ns) / kNsPerUs);
      print_json(out);
      return;
    }
    std::string what;
    if (r.deleted) {
      what = "deleted";
    } else if (!r.problem.empty()) {
      what = fmt::format("cannot be read ({})", r.problem);
    } else {
      what = fmt::format("v{} {} = {}", r.info.version(), core::value_type_name(r.info.type),
                         value_preview(r.info.type, r.value));
    }
    const std::string more = r.writes > 1 ? fmt::format(", {} writes", r.writes) : "";
    const std::string latency = r.latency_ns ? fmt::format("{:.1f} us", static_cast<double>(*r.latency_ns) / kNsPerUs) : "?";
    fmt::print("{} {} {}  ({}{})\n", time, r.key, what, latency, more);
  }

  /// Prints how many changes the group logs overwrote before they were read.
  void print_lost(std::uint64_t lost) const {
    if (args_.json) {
      print_json(JsonObject{}.number("lost", lost));
    } else {
      fmt::print("{} lost {} changes: the change log wrapped before they were read (`weir keys` lists current values)\n",
                 iso8601_utc(static_cast<std::uint64_t>(core::realtime_ns())), lost);
    }
  }

 private:
  ChangeReader reader_;
  const WatchArgs& args_;
};

// Splits positional targets into keys (key:NAME) and labels, and adds --key and --label.
bool collect_targets(const WatchArgs& args, std::vector<std::string>& keys, std::vector<std::string>& labels) {
  for (const std::string& target : args.targets) {
    if (target.starts_with(kKeyPrefix)) {
      keys.push_back(target.substr(kKeyPrefix.size()));
    } else {
      labels.push_back(target);
    }
  }
  keys.insert(keys.end(), args.keys.begin(), args.keys.end());
  labels.insert(labels.end(), args.labels.begin(), args.labels.end());
  const auto empty = [](const std::string& s) { return s.empty(); };
  return std::none_of(keys.begin(), keys.end(), empty) && std::none_of(labels.begin(), labels.end(), empty);
}

enum class [[nodiscard]] Flush : std::uint8_t { ok, reader_gone, failed };

// A reader that closed the pipe (`weir watch ... | head`) wants no more: that ends watch quietly.
Flush flush_stdout() {
  if (std::fflush(stdout) == 0 && std::ferror(stdout) == 0) return Flush::ok;
  return errno == EPIPE ? Flush::reader_gone : Flush::failed;
}

// The exit code for a failed flush, with a message unless the reader simply left.
int flush_exit(Flush flush) {
  switch (flush) {
    case Flush::ok:
    case Flush::reader_gone: return kExitOk;
    case Flush::failed: break;
  }
  print_error(fmt::format("watch: cannot write to stdout: {}", std::strerror(errno)));
  return kExitError;
}

int run_watch(const WatchArgs& args) {
  std::vector<std::string> keys;
  std::vector<std::string> labels;
  if (!collect_targets(args, keys, labels)) return report_usage("watch: keys and labels cannot be empty");
  if (keys.empty() && labels.empty()) return report_usage("watch needs a LABEL, key:KEY, --key or --label to follow");
  const bool has_timeout = args.timeout_option->count() > 0;

  const StopSignals stop_signals(Sigpipe::ignore);  // before the watcher exists, so a stop always runs its destructor
  auto arena = open_arena(args.where, Access::read_write);  // a watcher row needs a writable mapping
  if (!arena) return kExitError;
  const std::string arena_text = arena->location().describe();
  const core::KvStore kv(*arena);
  auto watcher = core::Watcher::create(*arena);
  if (!watcher) return report_error(fmt::format("cannot watch {}", arena_text), watcher.error());

  ChangePrinter printer(*arena, args);
  for (const std::string& key : keys) {
    if (key.size() > kv.key_bytes()) {
      return report_kv_failure(KvStatus::key_too_long, KeyContext{*arena, kv, key}, "watch");
    }
    auto group = watcher->subscribe_key(key);
    if (!group) return report_error(fmt::format("cannot watch key '{}' in {}", key, arena_text), group.error());
    printer.note_key_group(*group, key);
  }
  for (const std::string& label : labels) {
    auto group = watcher->subscribe_label(label);
    if (!group) return report_error(fmt::format("cannot watch label '{}' in {}", label, arena_text), group.error());
  }
  if (!args.json) {
    std::vector<std::string> targets;
    for (const std::string& key : keys) targets.push_back(fmt::format("key '{}'", key));
    for (const std::string& label : labels) targets.push_back(fmt::format("label '{}'", label));
    fmt::print("watching {} in {}\n", fmt::join(targets, ", "), arena_text);
    if (const Flush flush = flush_stdout(); flush != Flush::ok) return flush_exit(flush);
  }

  // Room for every entry one drain can hand over, so the noexcept drain callback never allocates.
  std::vector<core::Change> changes;
  changes.reserve(static_cast<std::size_t>(std::popcount(watcher->groups())) * arena->geometry().group_log_entries);
  const std::int64_t spin_ns = args.spin_us * 1000;
  const std::int64_t deadline_ns = has_timeout ? core::monotonic_ns() +
                                                     static_cast<std::int64_t>(args.timeout_s * static_cast<double>(kNsPerSecond))
                                               : std::numeric_limits<std::int64_t>::max();
  std::uint64_t seen = 0;
  // relaxed: the flag orders nothing; it is only read between waits
  while (!StopSignals::flag().load(std::memory_order_relaxed) && (args.count == 0 || seen < args.count)) {
    const std::int64_t left_ns = deadline_ns - core::monotonic_ns();
    if (left_ns <= 0) {
      if (args.count == 0) return kExitOk;
      print_error(fmt::format("watch {}: timed out after {} s with {} of {} changes", arena_text, args.timeout_s,
                              seen, args.count));
      return kExitError;
    }
    if (watcher->wait(std::min(left_ns, kWaitSliceNs), spin_ns) == core::WaitStatus::timed_out) continue;
    changes.clear();
    const std::uint64_t lost = watcher->drain([&changes](const core::Change& c) { changes.push_back(c); });
    if (lost != 0) printer.print_lost(lost);
    for (const PendingChange& change : merge_changes(changes)) {
      if (args.count != 0 && seen >= args.count) break;
      printer.print(change);
      seen += change.writes;
    }
    if (const Flush flush = flush_stdout(); flush != Flush::ok) return flush_exit(flush);
  }
  return kExitOk;  // --count reached, or stopped by SIGINT or SIGTERM
}

void add_watch(CLI::App& app, Action& action) {
  auto args = std::make_shared<WatchArgs>();
  CLI::App* sub = app.add_subcommand(
      "watch", "Print keys as they change, woken by signal groups (no polling); Ctrl-C stops");
  add_name_option(*sub, args->where);
  sub->add_option("TARGET", args->targets, "a label to follow, or key:KEY for one key");
  sub->add_option("--key", args->keys, "a key to follow (repeatable)");
  sub->add_option("--label", args->labels, "a label to follow (repeatable)");
  add_json_flag(*sub, args->json)->description("print one JSON object per change, one per line");
  sub->add_option("--count", args->count, "stop after this many changes")->check(CLI::Range(std::uint64_t{1}, kMaxCount));
  args->timeout_option = sub->add_option("--timeout", args->timeout_s,
                                         "stop after this many seconds (an error if --count is not reached)")
                             ->check(CLI::Range(0.0, kMaxTimeoutSeconds));
  sub->add_option("--spin-us", args->spin_us, "spin this long before each sleep, for lower wake latency")
      ->check(CLI::Range(std::int64_t{0}, kMaxSpinUs));
  bind_action(*sub, action, args, &run_watch);
}

// ---- label ----

struct LabelArgs {
  std::string where;
  std::string key;
  std::vector<std::string> labels;
  bool json = false;
};

int run_label(const LabelArgs& args) {
  auto arena = open_arena(args.where, Access::read_write);
  if (!arena) return kExitError;
  const core::KvStore kv(*arena);
  if (args.key.size() > kv.key_bytes() || args.key.empty()) {
    const KvStatus status = args.key.empty() ? KvStatus::key_empty : KvStatus::key_too_long;
    return report_kv_failure(status, KeyContext{*arena, kv, args.key}, "label");
  }
  if (auto labelled = core::set_labels(*arena, args.key, args.labels); !labelled) {
    return report_error(fmt::format("cannot label key '{}' in {}", args.key, arena->location().describe()),
                        labelled.error());
  }
  if (args.json) {
    JsonArray list;
    for (const std::string& label : args.labels) list.text(label);
    print_json(JsonObject{}.text("arena", args.where).text("key", args.key).raw("labels", list.str()));
  } else {
    fmt::print("labelled '{}' in {}: {}\n", args.key, arena->location().describe(), fmt::join(args.labels, ", "));
  }
  return kExitOk;
}

void add_label(CLI::App& app, Action& action) {
  auto args = std::make_shared<LabelArgs>();
  CLI::App* sub = app.add_subcommand(
      "label", "Set a key's labels (creating the key, empty, if missing); watchers of a label hear its writes");
  add_name_option(*sub, args->where);
  add_key_option(*sub, args->key);
  sub->add_option("LABEL", args->labels, "the key's labels, replacing any it had")->required();
  add_json_flag(*sub, args->json);
  bind_action(*sub, action, args, &run_label);
}

}  // namespace

void add_watch_commands(CLI::App& app, Action& action) {
  add_watch(app, action);
  add_label(app, action);
}

}  // namespace weir::tools
