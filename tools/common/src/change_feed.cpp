#include "weir/tools/change_feed.hpp"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

#include "weir/core/clock.hpp"

namespace weir::tools {

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

ChangeReader::ChangeReader(const core::Arena& arena)
    : arena_(arena), kv_(arena), value_(kv_.value_bytes()), key_(kv_.key_bytes()) {}

void ChangeReader::note_key_group(std::uint32_t group, const std::string& key) {
  key_groups_[group] = key;
  core::KeyHandle handle;
  if (kv_.resolve(key, handle) == core::KvStatus::ok) names_[handle.slot] = {handle.generation, key};
}

ChangeRecord ChangeReader::read(const PendingChange& change) {
  ChangeRecord r;
  r.key = key_name(change);
  r.latency_ns = write_to_wake_ns(change.slot);
  r.time_ns = core::realtime_ns();
  r.writes = change.writes;
  const core::KvStatus status = kv_.get(core::KeyHandle{change.slot, change.generation}, value_, r.info);
  r.value = std::span<const std::byte>(value_.data(), std::min<std::size_t>(r.info.length, value_.size()));
  switch (status) {
    case core::KvStatus::ok: break;
    case core::KvStatus::not_found:
    case core::KvStatus::stale_handle: r.deleted = true; break;  // deleted, or deleted and its slot reused
    case core::KvStatus::busy:
    case core::KvStatus::torn:
    case core::KvStatus::full:
    case core::KvStatus::key_too_long:
    case core::KvStatus::key_empty:
    case core::KvStatus::value_too_large:
    case core::KvStatus::type_mismatch:
    case core::KvStatus::read_only: r.problem = core::kv_status_name(status); break;
  }
  return r;
}

const core::SlotHeader* ChangeReader::slot_header(std::uint32_t slot) const noexcept {
  if (slot >= arena_.geometry().slot_count) return nullptr;
  return reinterpret_cast<const core::SlotHeader*>(arena_.region(core::Region::slots) +
                                                   std::uint64_t{slot} * arena_.geometry().slot_stride);
}

// The slot's key, read only while the slot still holds the generation that changed; a deleted
// key is named from what was read before, or from the key group that follows it.
std::string ChangeReader::key_name(const PendingChange& change) {
  if (const core::SlotHeader* s = slot_header(change.slot)) {
    const std::uint32_t before = s->generation.load(std::memory_order_acquire);  // pairs with insert's release
    std::uint32_t length = 0;
    core::ValueInfo info;
    if (before == change.generation && kv_.key_at(change.slot, key_, length, info) == core::KvStatus::ok &&
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
std::optional<std::int64_t> ChangeReader::write_to_wake_ns(std::uint32_t slot) const noexcept {
  const core::SlotHeader* s = slot_header(slot);
  if (s == nullptr) return std::nullopt;
  // relaxed: a display timestamp; the change log's release/acquire already ordered the write before us
  const std::uint64_t changed = s->changed_ns.load(std::memory_order_relaxed);
  if (changed == 0) return std::nullopt;
  return core::realtime_ns() - static_cast<std::int64_t>(changed);
}

}  // namespace weir::tools
