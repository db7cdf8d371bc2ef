// One look at the arena for the alert conditions, read as /metrics reads it (tools/serve/src/metrics.cpp).
#include "weir/alerts/figures.hpp"

#include <sys/statvfs.h>

#include <algorithm>
#include <array>
#include <span>
#include <string_view>

#include "weir/core/block_copier.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/channel_activity.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/runctl/doors.hpp"
#include "weir/tools/clock_sync.hpp"

namespace weir::alerts {

namespace {

void read_parts(const core::KvStore& kv, Figures& f) {
  constexpr std::string_view kPrefix = "weir.part.", kState = ".state", kRestarts = ".restarts";
  constexpr std::string_view kAccounting = ".accounting.", kHandoff = kHandoffFailuresSuffix;
  std::vector<std::string> keys;
  kv.for_each_key([&](std::string_view key, const core::ValueInfo&) { keys.emplace_back(key); });
  const auto u64 = [&](const std::string& key) -> std::optional<std::uint64_t> {
    std::uint64_t bits = 0;
    core::ValueType type = core::ValueType::none;
    if (kv.get_scalar(key, bits, type) != core::KvStatus::ok || type != core::ValueType::u64) return std::nullopt;
    return bits;
  };
  for (const std::string& key : keys) {
    const std::string_view k = key;
    if (k.starts_with(kPrefix) && k.ends_with(kState) && k.size() > kPrefix.size() + kState.size()) {
      const std::string part(k.substr(kPrefix.size(), k.size() - kPrefix.size() - kState.size()));
      std::array<char, 64> buf{};
      core::ValueInfo info;
      if (kv.get(key, std::as_writable_bytes(std::span{buf}), info) == core::KvStatus::ok)
        f.parts[part].state.assign(buf.data(), std::min<std::size_t>(info.length, buf.size()));
      if (const auto restarts = u64(std::string(kPrefix) + part + std::string(kRestarts))) f.parts[part].restarts = *restarts;
    } else if (const std::size_t at = k.rfind(kAccounting); at != std::string_view::npos && at > 0 &&
                                                           !k.starts_with(kPrefix)) {
      const std::string_view term = k.substr(at + kAccounting.size());
      if (term.empty() || term == "recorded" || term.find('.') != std::string_view::npos) continue;
      if (const auto n = u64(key)) f.parts[std::string(k.substr(0, at))].lost_units += *n;
    } else if (k.ends_with(kHandoff) && k.size() > kHandoff.size() && !k.starts_with(kPrefix)) {
      if (const auto n = u64(key)) f.parts[std::string(k.substr(0, k.size() - kHandoff.size()))].handoff_failures = *n;
    }
  }
}

}  // namespace

Figures read_figures(const core::Arena& arena, const std::vector<std::string>& paths) {
  Figures f;
  for (const core::ChannelInfo& c : core::list_channels(arena)) {
    ChannelFigures ch;
    ch.name = c.name;
    ch.rate_hz = c.rate_hz;
    ch.samples_per_block = c.samples_per_block;
    ch.ring_blocks = c.ring_blocks;
    ch.dropped_at_source = c.dropped_at_source;
    if (auto copier = core::BlockCopier::open(arena, c.index))
      if (const core::ChannelActivity a = core::channel_activity(*copier); a.known) {
        ch.active = true;
        ch.age_s = a.age_s;
        ch.samples_per_s = a.samples_per_s;
      }
    for (const core::ConsumerInfo& k : c.consumers)
      ch.consumers.push_back({k.name.empty() ? "#" + std::to_string(k.row) : k.name, k.alive,
                              k.policy == core::ConsumerPolicy::latest, k.lag, k.blocks_lost});
    f.channels.push_back(std::move(ch));
  }
  const core::KvStore kv(arena);
  read_parts(kv, f);
  std::uint64_t closed = 0, exact = 0;
  core::ValueType type = core::ValueType::none;
  if (kv.get_scalar(runctl::kClosedRunKey, closed, type) == core::KvStatus::ok && type == core::ValueType::u64 &&
      kv.get_scalar(runctl::kClosedExactKey, exact, type) == core::KvStatus::ok && type == core::ValueType::u64)
    f.run_exact = exact != 0;
  for (const std::string& path : paths) {
    struct statvfs s {};
    DiskFigures& d = f.disks[path];
    if (statvfs(path.c_str(), &s) != 0) continue;
    d.known = true;
    d.free_bytes = std::uint64_t{s.f_bavail} * s.f_frsize;
    d.size_bytes = std::uint64_t{s.f_blocks} * s.f_frsize;
  }
  if (const auto sync = tools::read_clock_sync()) f.clock_synchronised = sync->synchronized;
  return f;
}

}  // namespace weir::alerts
