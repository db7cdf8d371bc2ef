// Snapshot and restore: key-by-key copies through the seqlock, so writers never stop.
#include "weir/core/arena_copy.hpp"

#include <cstdio>
#include <string>
#include <vector>

#include "backing.hpp"
#include "weir/core/kv_store.hpp"

namespace weir::core {

namespace {

Result<SnapshotStats> copy_keys(const Arena& from, Arena& to, const std::string& what) {
  const KvStore src(from);
  KvStore dst(to);
  SnapshotStats stats;
  std::vector<std::byte> value(src.value_bytes());
  std::vector<std::string> keys;
  src.for_each_key([&](std::string_view key, const ValueInfo&) { keys.emplace_back(key); });
  for (const auto& key : keys) {
    ValueInfo info;
    const KvStatus got = src.get(key, value, info);
    if (got == KvStatus::torn) {
      ++stats.torn_skipped;
      continue;
    }
    if (got == KvStatus::not_found) continue;  // deleted while we copied
    if (got != KvStatus::ok) return fail(Errc::io_error, what + ": reading key '" + key + "': " + kv_status_text(got));
    const KvStatus put = dst.set_wait(key, std::span<const std::byte>(value.data(), info.length), info.type);
    if (put != KvStatus::ok) return fail(Errc::io_error, what + ": writing key '" + key + "': " + kv_status_text(put));
    ++stats.keys_copied;
  }
  stats.bytes = to.bytes();
  return stats;
}

}  // namespace

Result<SnapshotStats> snapshot_arena(const Arena& src, std::string_view file_path) {
  const std::string final_path(file_path);
  const std::string what = "snapshot of " + src.location().describe() + " to '" + final_path + "'";
  std::string tmp = final_path + ".tmp." + std::to_string(getpid());
  if (tmp.find('/') == std::string::npos) tmp = "./" + tmp;  // a path, so Location reads it as a file
  ArenaOptions options = options_of(src.header());
  options.mode = kDefaultMode;
  auto dst = Arena::create(tmp, options);
  if (!dst) return tl::make_unexpected(with_context(dst.error(), what));
  auto stats = copy_keys(src, *dst, what);
  if (stats) {
    if (auto synced = dst->sync(); !synced) stats = tl::make_unexpected(with_context(synced.error(), what));
  }
  dst->close();
  if (stats && std::rename(tmp.c_str(), final_path.c_str()) != 0)
    stats = fail(Errc::io_error, what + ": " + detail::errno_text("rename", errno));
  if (!stats) (void)std::remove(tmp.c_str());
  return stats;
}

Result<SnapshotStats> restore_arena(std::string_view file_path, std::string_view where, bool replace) {
  std::string path(file_path);
  if (path.find('/') == std::string::npos) path = "./" + path;
  const std::string what = "restore of '" + std::string(file_path) + "' into " + std::string(where);
  OpenOptions ro;
  ro.read_only = true;
  auto src = Arena::open(path, ro);
  if (!src) return tl::make_unexpected(with_context(src.error(), what));
  ArenaOptions options = options_of(src->header());
  if (replace) {
    if (auto status = inspect(where); status && status->error.empty()) {
      if (!status->attached.empty())
        return fail(Errc::already_exists, what + ": the arena is in use by pid " + std::to_string(status->attached[0]));
      if (auto removed = Arena::remove(where); !removed) return tl::make_unexpected(with_context(removed.error(), what));
    }
  }
  auto dst = Arena::create(where, options);
  if (!dst) return tl::make_unexpected(with_context(dst.error(), what));
  auto stats = copy_keys(*src, *dst, what);
  if (stats) dst->header().generation.fetch_add(1, std::memory_order_relaxed);  // a counter for observers only
  return stats;
}

}  // namespace weir::core
