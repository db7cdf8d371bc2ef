#pragma once
// Consistent copies of whole KV slots for readers outside the KV API (snapshots, a C or Python
// client, a web scope): key, value, type, labels, epoch, generation and change time of one slot, all
// from the same version, with a bounded wait for a writer inside. Protocol: docs/design/read_api.md.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "weir/core/arena.hpp"
#include "weir/core/arena_layout.hpp"
#include "weir/core/kv_store.hpp"

namespace weir::core {

enum class [[nodiscard]] SlotStatus : std::uint8_t {
  ok = 0,         // key, value and metadata from one version of the slot
  busy = 1,       // a writer held the slot past wait_ns (owner_pid names it), or rewrote it faster than
                  // `attempts` copies; no value, and the key only if it was live before the claim
  torn = 2,       // a writer died mid-write (or the slot's lengths are corrupt): metadata, the key if
                  // sane, no value; the key reads well again once rewritten
  empty = 3,      // the slot holds no key
  too_small = 4,  // the key or value is longer than the caller's buffer: key_length and value_length
                  // say how long; grow the buffers and copy again (the std::vector form never says it)
};

/// "ok", "busy", ... for messages and JSON.
[[nodiscard]] const char* slot_status_name(SlotStatus status) noexcept;

struct SlotCopyOptions {
  std::int64_t wait_ns = kDefaultWaitNs;    // longest wait for a writer inside the slot before busy
  int attempts = kDefaultSlotCopyAttempts;  // copies a concurrent write may tear before busy
};

/// What one copy found, besides the key and value bytes.
struct SlotRecord {
  SlotStatus status = SlotStatus::empty;
  ValueType type = ValueType::none;
  std::uint32_t slot = 0;
  std::uint32_t generation = 0;    // the slot's insert generation (KeyHandle::generation)
  std::uint32_t key_length = 0;    // bytes of key copied (needed, with too_small); 0 when not copied
  std::uint32_t value_length = 0;  // the value's length (ok, torn, too_small); its bytes only with ok
  std::uint32_t owner_pid = 0;     // busy: the pid in the held epoch; 0 otherwise
  std::uint32_t retries = 0;       // copies redone because a writer changed the slot meanwhile
  bool met_writer = false;         // a writer was inside when the copy began (it was waited for)
  std::uint64_t epoch = 0;         // the slot's seqlock word the copy is from (busy: the held word)
  std::uint64_t labels = 0;        // Bloom mask of the key's labels and its own name
  std::uint64_t label_ids = 0;     // exact labels: bit i = label dictionary entry i (LabelDictionary)
  std::uint64_t changed_ns = 0;    // CLOCK_REALTIME of the last write that pulsed a signal group
  ArrayShape array;                // type array: element dtype and shape, from the same version
  /// Completed writes to the slot (the epoch's version field).
  [[nodiscard]] std::uint64_t version() const noexcept { return epoch_version(epoch); }
};

/// A reusable copy: key and value grow to the largest seen, after which no copy allocates.
struct SlotCopy {
  SlotRecord record;
  std::string key;               // key_length bytes
  std::vector<std::byte> value;  // value_length bytes with ok, empty otherwise
};

/// Copies KV slots of one attached arena by index, in place under each slot's seqlock. Never writes
/// the arena, never recovers a dead writer's slot (it reports it busy). Cheap to construct; holds only
/// pointers into the mapping. Thread: any number of copiers in any threads and processes.
class SlotCopier {
 public:
  explicit SlotCopier(const Arena& arena, const SlotCopyOptions& options = {}) noexcept;

  [[nodiscard]] std::uint32_t slot_count() const noexcept { return slot_count_; }
  /// Longest key: a key buffer this long always fits.
  [[nodiscard]] std::uint32_t key_bytes() const noexcept { return key_bytes_; }
  /// Largest value: a value buffer this long always fits.
  [[nodiscard]] std::uint32_t value_bytes() const noexcept { return value_bytes_; }

  /// Copies slot `slot` into caller buffers and `out`; returns out.status. Allocates nothing. A key or
  /// value longer than its buffer answers too_small (a busy slot's key is left out instead). Spins,
  /// then yields, while a writer is inside, up to options.wait_ns. Thread: any.
  /// Requires: slot < slot_count() (enforced).
  SlotStatus copy(std::uint32_t slot, std::span<char> key, std::span<std::byte> value, SlotRecord& out) const noexcept;
  /// As above, into a reusable copy whose buffers grow as needed (never too_small). Thread: any.
  SlotStatus copy(std::uint32_t slot, SlotCopy& out) const;

 private:
  template <class Sink>
  SlotStatus copy_with(std::uint32_t slot, Sink& sink, SlotRecord& out) const;
  template <class Sink>
  void record_busy(std::uint32_t slot, std::uint64_t epoch, Sink& sink, SlotRecord& out) const;

  const std::byte* slots_;
  std::uint64_t stride_;
  std::uint64_t value_offset_;
  std::uint32_t slot_count_;
  std::uint32_t key_bytes_;
  std::uint32_t value_bytes_;
  SlotCopyOptions options_;
};

}  // namespace weir::core
