// run_service: registration, the initial build, the follower loop, and the request thread.
#include "weir/ann/service.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

#include "partition_follower.hpp"
#include "request_server.hpp"
#include "weir/ann/hnsw_index.hpp"
#include "weir/ann/protocol.hpp"
#include "weir/core/clock.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/signals.hpp"

namespace weir::ann {

namespace {

constexpr std::int64_t kFollowPollNs = 100'000'000;    // longest sleep before the follower looks at its stop flag
constexpr std::int64_t kStatusPeriodNs = 250'000'000;  // the status key is rewritten at most this often
constexpr std::size_t kRedrainEvery = 32;              // changes applied between two drains of the log
constexpr std::int64_t kStatusWaitNs = 100'000'000;    // longest wait for the status key's slot
constexpr std::size_t kLongestPidDigits = 10;          // "<pid>.<n>": a u32 pid
constexpr std::size_t kLongestSerialDigits = 20;       // ... and a u64 serial

std::uint32_t cpus_allowed() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return static_cast<std::uint32_t>(std::max(CPU_COUNT(&set), 1));
  return std::max(1U, std::thread::hardware_concurrency());
}

core::Result<void> check_names(const core::Arena& arena, std::string_view part, std::uint32_t key_bytes) {
  const std::string where = arena.location().describe();
  if (part.empty()) return core::fail(core::Errc::invalid_argument, "ann: the partition label is empty");
  if (part.size() > key_bytes)
    return core::fail(core::Errc::invalid_argument, "ann: partition label '" + std::string(part) + "' is longer than the " +
                                                        std::to_string(key_bytes) + "-byte keys of " + where);
  const std::size_t longest = request_prefix(part).size() + kLongestPidDigits + 1 + kLongestSerialDigits;
  if (longest > key_bytes || status_key(part).size() > key_bytes)
    return core::fail(core::Errc::invalid_argument,
                      "ann: the request keys of partition '" + std::string(part) + "' need up to " + std::to_string(longest) +
                          " bytes, but " + where + " holds keys of at most " + std::to_string(key_bytes));
  return {};
}

class StatusWriter {
 public:
  StatusWriter(const core::Arena& arena, std::string_view part, const ServiceOptions& options, std::uint32_t dim,
               std::uint32_t threads)
      : kv_(arena), key_(status_key(part)) {
    s_.magic = kStatusMagic;
    s_.version = kProtocolVersion;
    s_.metric = static_cast<std::uint8_t>(options.metric);
    s_.pid = static_cast<std::uint32_t>(::getpid());
    s_.dim = dim;
    s_.m = options.m;
    s_.ef_construction = options.ef_construction;
    s_.ef = options.ef;
    s_.threads = threads;
    s_.started_ns = core::realtime_ns();
  }
  void write(ServiceState state, const ServiceReport& r) noexcept {
    s_.state = static_cast<std::uint8_t>(state);
    s_.indexed = r.indexed;
    s_.build_ns = r.build_ns;
    s_.inserts = r.built + r.inserts;
    s_.deletes = r.deletes;
    s_.rescans = r.rescans;
    s_.queries = r.queries;
    s_.updated_ns = core::realtime_ns();
    last_ns_ = core::monotonic_ns();
    (void)kv_.set_wait(key_, std::as_bytes(std::span(&s_, 1)), core::ValueType::bytes, kStatusWaitNs);
  }
  [[nodiscard]] bool due() const noexcept { return core::monotonic_ns() - last_ns_ >= kStatusPeriodNs; }

 private:
  core::KvStore kv_;
  std::string key_;
  ServiceStatus s_{};
  std::int64_t last_ns_ = 0;
};

core::Result<void> check_no_other(const core::Arena& arena, std::string_view part) {
  const core::KvStore kv(arena);
  ServiceStatus status{};
  core::ValueInfo info;
  const auto bytes = std::as_writable_bytes(std::span(&status, 1));
  if (kv.get(status_key(part), bytes, info) != core::KvStatus::ok) return {};
  const auto other = decode_status(std::span<const std::byte>(bytes.data(), info.length));
  if (!other || other->state == static_cast<std::uint8_t>(ServiceState::stopped)) return {};
  if (other->pid == static_cast<std::uint32_t>(::getpid()) || !pid_alive(other->pid)) return {};
  return core::fail(core::Errc::already_exists, "ann: a service of partition '" + std::string(part) + "' is already " +
                                                    service_state_name(other->state) + " in " +
                                                    arena.location().describe() + " (pid " + std::to_string(other->pid) + ")");
}

}  // namespace

core::Result<ServiceReport> run_service(const core::Arena& arena, std::string_view part, const ServiceOptions& options,
                                        const std::atomic<bool>& stop,
                                        const std::function<void(const ServiceReport&)>& on_serving) {
  const std::string where = arena.location().describe();
  const core::VectorStore vectors(arena);
  if (vectors.dim() == 0)
    return core::fail(core::Errc::invalid_argument, "ann: " + where + " has no vectors (created with vector dimension 0)");
  if (arena.read_only()) return core::fail(core::Errc::permission_denied, "ann: " + where + " is mapped read-only");
  if (auto names = check_names(arena, part, vectors.key_bytes()); !names) return tl::make_unexpected(names.error());
  if (auto alone = check_no_other(arena, part); !alone) return tl::make_unexpected(alone.error());

  ServiceReport report;
  report.threads = options.threads != 0 ? options.threads : cpus_allowed();
  StatusWriter status(arena, part, options, vectors.dim(), report.threads);
  status.write(ServiceState::building, report);

  // Both watchers subscribe before the scan: a change during the build is in a log, not missed.
  auto follow = core::Watcher::create(arena);
  if (!follow) return tl::make_unexpected(follow.error());
  if (auto g = follow->subscribe_label(part); !g) return tl::make_unexpected(g.error());
  auto requests = core::Watcher::create(arena);
  if (!requests) return tl::make_unexpected(requests.error());
  if (auto g = requests->subscribe_label(request_label(part)); !g) return tl::make_unexpected(g.error());
  core::GroupTable groups(arena);
  auto part_id = groups.label_id(part);
  if (!part_id) return tl::make_unexpected(part_id.error());

  IndexParams params{.m = options.m, .ef_construction = options.ef_construction, .metric = options.metric};
  auto index = HnswIndex::create(vectors.dim(), vectors.rows(), params);
  if (!index) return tl::make_unexpected(index.error());
  report.kernel = index->kernel();
  detail::PartitionFollower follower(arena, *index, *part_id);

  const std::int64_t build_start = core::monotonic_ns();
  report.built = follower.build(report.threads);
  report.build_ns = core::monotonic_ns() - build_start;
  report.indexed = index->live();
  status.write(ServiceState::serving, report);
  if (on_serving) on_serving(report);

  std::atomic<std::uint64_t> lag{0};
  std::atomic<bool> halt{false};
  detail::RequestServer server(arena, part, std::move(*requests), *index, follower, options.ef, lag);
  std::thread request_thread([&] { server.run(halt); });

  std::vector<std::uint32_t> pending;
  pending.reserve(follower.rows());
  bool rescan = false;
  const auto take = [&](const core::Change& c) {
    if (pending.size() < pending.capacity()) pending.push_back(c.slot);
    else rescan = true;  // more changes than slots: a rescan is cheaper
  };
  const std::int64_t end_ns = options.duration_ns > 0 ? core::monotonic_ns() + options.duration_ns : 0;
  while (!stop.load(std::memory_order_relaxed) && (end_ns == 0 || core::monotonic_ns() < end_ns)) {
    std::int64_t sleep_ns = kFollowPollNs;
    if (end_ns != 0) sleep_ns = std::clamp<std::int64_t>(end_ns - core::monotonic_ns(), 0, sleep_ns);
    if (follow->wait(sleep_ns) == core::WaitStatus::pulsed) {
      std::uint64_t lost = follow->drain(take);
      for (std::size_t i = 0; i < pending.size(); ++i) {
        if (i % kRedrainEvery == kRedrainEvery - 1) lost += follow->drain(take);
        lag.store(pending.size() - i, std::memory_order_relaxed);  // a figure for answers: orders nothing
        follower.refresh(pending[i]);
      }
      pending.clear();
      report.lost += lost;
      if (lost != 0 || rescan) {
        ++report.rescans;
        follower.rescan();
        rescan = false;
      }
      lag.store(0, std::memory_order_relaxed);
    }
    if (status.due()) {
      report.indexed = index->live();
      report.inserts = follower.inserts() - report.built;
      report.deletes = follower.deletes();
      report.queries = server.answered();
      status.write(ServiceState::serving, report);
    }
  }
  halt.store(true, std::memory_order_relaxed);  // a flag: the thread reads nothing we wrote after
  request_thread.join();
  report.indexed = index->live();
  report.inserts = follower.inserts() - report.built;
  report.deletes = follower.deletes();
  report.queries = server.answered();
  report.refused = server.refused();
  status.write(ServiceState::stopped, report);
  return report;
}

}  // namespace weir::ann
