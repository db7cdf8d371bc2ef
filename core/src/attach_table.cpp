// Who has an arena open: the attach table, liveness, and the reports built on it.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <span>

#include "backing.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/numa.hpp"

namespace weir::core {

namespace {

std::span<AttachEntry> attach_rows(const Arena& arena) noexcept {
  auto* rows = reinterpret_cast<AttachEntry*>(arena.region(Region::attach));
  return {rows, arena.geometry().attach_capacity};
}

}  // namespace

bool pid_alive(std::uint32_t pid) noexcept {
  if (pid == 0) return false;
  if (kill(static_cast<pid_t>(pid), 0) != 0 && errno != EPERM) return false;
  // A killed process its parent has not reaped yet still answers kill(); /proc says it is a zombie.
  char path[32];
  std::snprintf(path, sizeof(path), "/proc/%u/stat", pid);
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return true;  // no /proc: trust kill()
  char buf[256];
  const ssize_t n = ::read(fd, buf, sizeof(buf) - 1);
  ::close(fd);
  if (n <= 0) return true;
  buf[n] = '\0';
  const char* close_paren = std::strrchr(buf, ')');  // "pid (comm) S ...": comm may hold spaces
  return close_paren == nullptr || close_paren[1] != ' ' || (close_paren[2] != 'Z' && close_paren[2] != 'X');
}

void Arena::attach() noexcept {
  const auto me = static_cast<std::uint32_t>(getpid());
  for (int pass = 0; pass < 2; ++pass) {
    std::int32_t row = 0;
    for (auto& e : attach_rows(*this)) {
      std::uint32_t expected = 0;
      if (e.pid.compare_exchange_strong(expected, me, std::memory_order_acq_rel)) {
        e.attached_ns.store(static_cast<std::uint64_t>(core::realtime_ns()), std::memory_order_relaxed);
        attach_row_ = row;
        return;
      }
      ++row;
    }
    (void)attached_pids(*this);  // reclaims rows of dead processes, then one more pass
  }
  header().attach_overflow.fetch_add(1, std::memory_order_relaxed);  // a counter only: nobody orders on it
}

void Arena::detach() noexcept {
  if (attach_row_ < 0 || read_only_) return;
  auto rows = attach_rows(*this);
  std::uint32_t expected = static_cast<std::uint32_t>(getpid());  // a forked child holds no row of its own
  rows[static_cast<std::size_t>(attach_row_)].pid.compare_exchange_strong(expected, 0, std::memory_order_acq_rel);
  attach_row_ = -1;
}

std::vector<std::uint32_t> attached_pids(const Arena& arena) {
  std::vector<std::uint32_t> live;
  for (auto& e : attach_rows(arena)) {
    std::uint32_t pid = e.pid.load(std::memory_order_acquire);
    if (pid == 0) continue;
    if (pid_alive(pid)) {
      live.push_back(pid);
    } else if (!arena.read_only()) {
      e.pid.compare_exchange_strong(pid, 0, std::memory_order_acq_rel);  // reap: the process is gone
    }
  }
  std::sort(live.begin(), live.end());
  live.erase(std::unique(live.begin(), live.end()), live.end());
  return live;
}

Result<ArenaStatus> inspect(std::string_view where) {
  OpenOptions options;
  options.read_only = true;
  auto arena = Arena::open(where, options);
  if (!arena) return tl::make_unexpected(arena.error());
  const ArenaHeader& h = arena->header();
  ArenaStatus s;
  s.location = std::string(where);
  s.name = h.name;
  s.bytes = arena->bytes();
  s.creator_pid = h.creator_pid;
  s.creator_alive = pid_alive(h.creator_pid);
  s.attached = attached_pids(*arena);
  s.stale = !s.creator_alive && s.attached.empty();
  s.created_ns = h.created_ns;
  s.mode = h.mode;
  s.geometry = h.geometry;
  s.recovered_slots = h.recovered_slots.load(std::memory_order_relaxed);
  if (auto owner = detail::backing_owner(arena->fd(), arena->location().describe())) s.owner_uid = owner->first;
  s.live_keys = KvStore(*arena).count();
  s.numa_node = h.numa_node;
  s.prefaulted = (h.create_flags & kCreatePrefaulted) != 0;
  if (auto policy = memory_policy_of(arena->base())) {
    s.numa_policy = policy->mode;
    s.numa_policy_nodes = policy->nodes;
    s.numa_page_node = policy->page_node;
  }
  return s;
}

std::vector<ArenaStatus> list_shm_arenas() {
  std::vector<ArenaStatus> out;
  DIR* dir = opendir("/dev/shm");
  if (dir == nullptr) return out;
  while (const dirent* entry = readdir(dir)) {
    const std::string_view file = entry->d_name;
    if (!file.starts_with("weir.") || file.size() <= 5) continue;
    const std::string name(file.substr(5));
    auto status = inspect(name);
    if (status) {
      out.push_back(std::move(*status));
    } else {
      ArenaStatus bad;
      bad.location = name;
      bad.name = name;
      bad.error = status.error().what;
      out.push_back(std::move(bad));
    }
  }
  closedir(dir);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

}  // namespace weir::core
