#pragma once
// What `weir watch` makes of a watcher's change log: the changes of one drain merged per key, and
// each change read back as the key's name, its value now, and how long after the write it was seen.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "weir/core/arena.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/signals.hpp"

namespace weir::tools {

/// One key's changes in one drain: a write pulses every matching group, so a key reached through
/// several subscriptions appears once per group. `writes` is the most any one group logged.
struct PendingChange {
  std::uint32_t slot = 0;
  std::uint32_t generation = 0;
  std::uint32_t group = 0;  // the group that logged it first
  std::uint64_t writes = 0;
  std::size_t first = 0;    // position of its first log entry, to report in log order
};

/// Merges the entries of one drain into one PendingChange per (slot, generation), in the order of
/// each key's first entry. Thread: any.
[[nodiscard]] std::vector<PendingChange> merge_changes(std::span<const core::Change> changes);

/// One change as read back from the arena.
struct ChangeRecord {
  std::string key;                        // "(slot N)" when no name is known any more
  std::optional<std::int64_t> latency_ns; // from the slot's last signalled write to the read; empty if never set
  std::int64_t time_ns = 0;               // CLOCK_REALTIME when it was read
  bool deleted = false;                   // deleted, or deleted and its slot reused
  std::string problem;                    // why the value cannot be read (a KvStatus name); "" when it can
  core::ValueInfo info;                   // valid when !deleted and problem is empty
  std::span<const std::byte> value;       // the value's bytes; valid until the next read()
  std::uint64_t writes = 0;               // > 1 when writes came faster than the watcher woke
};

/// Reads changes back: names the key even after it was deleted (from what was read before, or
/// from the key group that follows it), and reads its value now. Thread: one at a time.
class ChangeReader {
 public:
  explicit ChangeReader(const core::Arena& arena);

  /// Remembers which key a key group follows, to name its changes after the key is deleted.
  void note_key_group(std::uint32_t group, const std::string& key);

  /// The change's key, latency, time and current value. Never fails: what cannot be read is said
  /// in `deleted` or `problem`.
  [[nodiscard]] ChangeRecord read(const PendingChange& change);

 private:
  struct SlotName {
    std::uint32_t generation = 0;
    std::string key;
  };

  [[nodiscard]] const core::SlotHeader* slot_header(std::uint32_t slot) const noexcept;
  std::string key_name(const PendingChange& change);
  [[nodiscard]] std::optional<std::int64_t> write_to_wake_ns(std::uint32_t slot) const noexcept;

  const core::Arena& arena_;
  core::KvStore kv_;  // not const: resolve() is non-const even when it does not create
  std::vector<std::byte> value_;
  std::vector<char> key_;
  std::map<std::uint32_t, SlotName> names_;          // slot -> last key read there
  std::map<std::uint32_t, std::string> key_groups_;  // group -> key, for key subscriptions
};

}  // namespace weir::tools
