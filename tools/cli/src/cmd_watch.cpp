// Signal commands: watch (follow keys as they change, woken by signal groups, never polling) and
// label (give a key the labels that watchers subscribe to).
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <bit>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "command.hpp"
#include "time_units.hpp"
#include "weir/core/clock.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/signals.hpp"
#include "weir/tools/arena_access.hpp"
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
constexpr std::size_t kPreviewChars = 60;             // text and vector previews are cut to this many characters
constexpr std::size_t kPreviewBytes = 16;             // bytes previews show this many bytes in hex
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

// One key's changes in one drain: a write pulses every matching group, so a key reached through
// several subscriptions appears once per group. writes is the most any one group logged.
struct PendingChange {
  std::uint32_t slot = 0;
  std::uint32_t generation = 0;
  std::uint32_t group = 0;  // the group that logged it first
  std::uint64_t writes = 0;
  std::size_t first = 0;    // position of its first log entry, to print in log order
};

std::vector<PendingChange> merge_changes(std::span<const core::Change> changes) {
  std::vector<std::size_t> order(changes.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto item = [&changes](std::size_t i) {
    const core::Change& c = changes[i];
    return std::tuple(c.slot, c.generation, c.group, i);
  };
  std::sort(order.begin(), order.end(), [&item](std::size_t a, std::size_t b) { return item(a) < item(b); });
  std::vector<PendingChange> merged;
  for (std::size_t i = 0; i < order.size();) {
    const core::Change& head = changes[order[i]];
    PendingChange pending{head.slot, head.generation, head.group, 0, order[i]};
    std::uint64_t in_group = 0;  // entries of the current group so far
    std::size_t j = i;
    for (; j < order.size() && changes[order[j]].slot == head.slot && changes[order[j]].generation == head.generation;
         ++j) {
      const core::Change& c = changes[order[j]];
      in_group = j > i && changes[order[j - 1]].group == c.group ? in_group + 1 : 1;
      pending.writes = std::max(pending.writes, in_group);
      if (order[j] < pending.first) {
        pending.first = order[j];
        pending.group = c.group;
      }
    }
    merged.push_back(pending);
    i = j;
  }
  std::sort(merged.begin(), merged.end(),
            [](const PendingChange& a, const PendingChange& b) { return a.first < b.first; });
  return merged;
}

// Cuts text to kPreviewChars characters on a UTF-8 boundary, marking the cut with "…".
std::string cut_preview(std::string_view text) {
  std::size_t chars = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const bool starts_char = (static_cast<unsigned char>(text[i]) & 0xC0U) != 0x80U;
    if (starts_char && chars++ == kPreviewChars) return std::string(text.substr(0, i)) + "…";
  }
  return std::string(text);
}

// A value as one short line for people: text quoted (control characters escaped), numbers as
// numbers, bytes as a hex prefix plus length.
std::string value_preview(core::ValueType type, std::span<const std::byte> bytes) {
  switch (type) {
    case core::ValueType::none: return "(empty)";
    case core::ValueType::text: return json_quote(cut_preview({reinterpret_cast<const char*>(bytes.data()), bytes.size()}));
    case core::ValueType::bytes: {
      const std::string hex = encode_hex(bytes.first(std::min(bytes.size(), kPreviewBytes)));
      return fmt::format("0x{}{} ({} bytes)", hex, bytes.size() > kPreviewBytes ? "…" : "", bytes.size());
    }
    case core::ValueType::i64:
    case core::ValueType::u64:
    case core::ValueType::f64: return value_to_text(type, bytes);
    case core::ValueType::vector:
      return fmt::format("[{}] ({} floats)", cut_preview(value_to_text(type, bytes)), bytes.size() / sizeof(float));
    case core::ValueType::array: return fmt::format("(array, {} bytes)", bytes.size());
  }
  return fmt::format("({} bytes of an unknown type)", bytes.size());
}

// Follows changes for one Watcher and prints them. Thread: main only.
class ChangePrinter {
 public:
  ChangePrinter(const core::Arena& arena, const WatchArgs& args)
      : arena_(arena), kv_(arena), args_(args), value_(kv_.value_bytes()), key_(kv_.key_bytes()) {}

  /// Remembers which key a key group follows, to name its changes after the key is deleted.
  void note_key_group(std::uint32_t group, const std::string& key) {
    key_groups_[group] = key;
    core::KeyHandle handle;
    if (kv_.resolve(key, handle) == KvStatus::ok) names_[handle.slot] = {handle.generation, key};
  }

  /// Prints one change line; `writes` > 1 when writes came faster than watch woke.
  void print(const PendingChange& change) {
    const std::string key = key_name(change);
    const std::optional<std::int64_t> latency_ns = write_to_wake_ns(change.slot);
    const std::string time = iso8601_utc(static_cast<std::uint64_t>(core::realtime_ns()));
    core::ValueInfo info;
    const KvStatus status = kv_.get(core::KeyHandle{change.slot, change.generation}, value_, info);
    const std::span<const std::byte> value(value_.data(), std::min<std::size_t>(info.length, value_.size()));
    bool deleted = false;
    std::string problem;  // why the value cannot be shown
    switch (status) {
      case KvStatus::ok: break;
      case KvStatus::not_found:
      case KvStatus::stale_handle: deleted = true; break;  // deleted, or deleted and its slot reused
      case KvStatus::busy:
      case KvStatus::torn:
      case KvStatus::full:
      case KvStatus::key_too_long:
      case KvStatus::key_empty:
      case KvStatus::value_too_large:
      case KvStatus::type_mismatch:
      case KvStatus::read_only: problem = core::kv_status_name(status); break;
    }
    if (args_.json) {
      JsonObject out;
      out.text("time", time).text("key", key);
      if (deleted) {
        out.boolean("deleted", true);
      } else if (!problem.empty()) {
        out.text("error", problem);
      } else {
        out.number("version", info.version())
            .text("type", core::value_type_name(info.type))
            .raw("value", value_to_json(info.type, value));
      }
      out.number("writes", change.writes);
      if (latency_ns) out.real("latency_us", static_cast<double>(*latency_ns) / kNsPerUs);
      print_json(out);
      return;
    }
    std::string what;
    if (deleted) {
      what = "deleted";
    } else if (!problem.empty()) {
      what = fmt::format("cannot be read ({})", problem);
    } else {
      what = fmt::format("v{} {} = {}", info.version(), core::value_type_name(info.type), value_preview(info.type, value));
    }
    const std::string more = change.writes > 1 ? fmt::format(", {} writes", change.writes) : "";
    const std::string latency = latency_ns ? fmt::format("{:.1f} us", static_cast<double>(*latency_ns) / kNsPerUs) : "?";
    fmt::print("{} {} {}  ({}{})\n", time, key, what, latency, more);
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
  struct SlotName {
    std::uint32_t generation = 0;
    std::string key;
  };

  [[nodiscard]] const core::SlotHeader* slot_header(std::uint32_t slot) const noexcept {
    if (slot >= arena_.geometry().slot_count) return nullptr;
    return reinterpret_cast<const core::SlotHeader*>(arena_.region(core::Region::slots) +
                                                     std::uint64_t{slot} * arena_.geometry().slot_stride);
  }

  // The slot's key, read only while the slot still holds the generation that changed; a deleted
  // key is named from what was read before, or from the key group that follows it.
  std::string key_name(const PendingChange& change) {
    if (const core::SlotHeader* s = slot_header(change.slot)) {
      const std::uint32_t before = s->generation.load(std::memory_order_acquire);  // pairs with insert's release
      std::uint32_t length = 0;
      core::ValueInfo info;
      if (before == change.generation && kv_.key_at(change.slot, key_, length, info) == KvStatus::ok &&
          s->generation.load(std::memory_order_acquire) == before) {
        SlotName& name = names_[change.slot];
        name.generation = change.generation;
        name.key.assign(key_.data(), length);
        return name.key;
      }
    }
    if (auto it = names_.find(change.slot); it != names_.end() && it->second.generation == change.generation)
      return it->second.key;
    if (auto it = key_groups_.find(change.group); it != key_groups_.end()) return it->second;
    return fmt::format("(slot {})", change.slot);
  }

  // From the slot's last signalled write (changed_ns, CLOCK_REALTIME) to now; empty if never set.
  [[nodiscard]] std::optional<std::int64_t> write_to_wake_ns(std::uint32_t slot) const noexcept {
    const core::SlotHeader* s = slot_header(slot);
    if (s == nullptr) return std::nullopt;
    // relaxed: a display timestamp; the change log's release/acquire already ordered the write before us
    const std::uint64_t changed = s->changed_ns.load(std::memory_order_relaxed);
    if (changed == 0) return std::nullopt;
    return core::realtime_ns() - static_cast<std::int64_t>(changed);
  }

  const core::Arena& arena_;
  core::KvStore kv_;  // not const: resolve() is non-const even when it does not create
  const WatchArgs& args_;
  std::vector<std::byte> value_;
  std::vector<char> key_;
  std::map<std::uint32_t, SlotName> names_;         // slot -> last key read there
  std::map<std::uint32_t, std::string> key_groups_;  // group -> key, for key subscriptions
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
