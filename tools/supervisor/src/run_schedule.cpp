#include "run_schedule.hpp"

#include <bit>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "weir/core/channel.hpp"
#include "weir/core/clock.hpp"
#include "weir/core/run_control.hpp"
#include "weir/core/signals.hpp"
#include "weir/runctl/doors.hpp"

namespace weir::supervisor {

namespace {

constexpr std::int64_t kLookNs = 5'000'000;  // the schedule looks at its run and channel this often at most
constexpr std::string_view kDoor = "schedule";

// Ends a run after `limit` blocks of one channel: counts the channel's blocks that begin inside the
// run (a lossy reader of block headers from the oldest block in the ring, woken by every publish),
// and once the last of them is published sets the stop half a block period after its first sample:
// before the next block begins, and before it is published, so no recorder has read it. The run then
// holds exactly `limit` blocks of the channel, unless this thread was held off the CPU for a whole
// block period (the count moves then, never the ledger).
class BlockCounter {
 public:
  static std::optional<BlockCounter> open(const core::Arena& arena, const std::string& channel, std::int64_t start_ns) {
    auto reader = core::ChannelReader::open(arena, channel, core::ConsumerPolicy::lossy, "run schedule",
                                            core::StartAt::oldest);
    if (!reader) return std::nullopt;
    std::optional<core::Watcher> watcher;
    if (auto w = core::Watcher::create(arena); w && w->subscribe_channel(channel)) watcher.emplace(std::move(*w));
    return BlockCounter(std::move(*reader), std::move(watcher), start_ns);
  }
  /// Reads what is new; the run's stop time once its `limit`-th block of the channel is there, else 0.
  std::int64_t stop_time(std::uint64_t limit) {
    core::BlockView view;
    std::uint64_t lost = 0;
    for (;;) {
      const core::NextStatus status = reader_.next(view, lost);
      if (status == core::NextStatus::empty) return 0;
      if (status == core::NextStatus::lost) {
        if (counted_ > 0) counted_ += lost;  // inside the run: they count, whatever their time
        continue;
      }
      const auto t = static_cast<std::int64_t>(view.realtime_ns);
      const bool whole = reader_.done(view);
      if (t < start_ns_ && counted_ == 0) continue;
      ++counted_;
      if (whole && counted_ >= limit) {
        const core::ChannelDesc& d = reader_.desc();
        const double rate = std::bit_cast<double>(d.rate_bits);
        const double half_period_ns = rate > 0 ? 0.5 * d.samples_per_block / rate * 1e9 : 1;
        return t + std::max<std::int64_t>(1, std::llround(half_period_ns));
      }
    }
  }
  /// Sleeps until the channel publishes again, or timeout_ns.
  void wait(std::int64_t timeout_ns) {
    if (watcher_)
      (void)watcher_->wait(timeout_ns);
    else
      (void)core::sleep_until(core::monotonic_ns() + timeout_ns);
  }

 private:
  BlockCounter(core::ChannelReader reader, std::optional<core::Watcher> watcher, std::int64_t start_ns)
      : reader_(std::move(reader)), watcher_(std::move(watcher)), start_ns_(start_ns) {}
  core::ChannelReader reader_;
  std::optional<core::Watcher> watcher_;
  std::int64_t start_ns_;
  std::uint64_t counted_ = 0;
};

}  // namespace

RunSchedule::RunSchedule(const core::Arena& arena, config::RunScheduleDecl decl, std::string channel,
                         std::function<void(const std::string&)> log)
    : arena_(arena), decl_(std::move(decl)), channel_(std::move(channel)), log_(std::move(log)) {}

RunSchedule::~RunSchedule() { stop(); }

void RunSchedule::start() { thread_ = std::thread([this] { loop(); }); }

void RunSchedule::stop() {
  stop_.store(true, std::memory_order_relaxed);
  if (thread_.joinable()) thread_.join();
}

void RunSchedule::loop() {
  core::RunControl rc(arena_);
  bool want_start = decl_.start;
  std::uint64_t counting_run = 0;
  std::optional<BlockCounter> counter;
  while (!stop_.load(std::memory_order_relaxed)) {
    const core::RunStatus s = rc.status();
    if (s.state == core::RunState::idle) {
      counter.reset();
      counting_run = 0;
      if (want_start && (decl_.runs == 0 || started_.load() < decl_.runs)) {
        auto started = runctl::start_run(arena_, core::RunMeta{}, kDoor);
        if (started) {
          started_.fetch_add(1, std::memory_order_relaxed);
          log_(fmt::format("schedule: run {} started", started->number));
        } else {
          log_(fmt::format("schedule: {}", started.error().what));
        }
        want_start = false;
        continue;
      }
      (void)rc.wait(s.changes, 10 * kLookNs);
      continue;
    }
    // A run is running: its limits.
    std::int64_t stop_at = 0;  // 0: not yet; else the stop's time (a block count's is exact)
    bool by_blocks = false;
    if (decl_.stop_after_s > 0 &&
        static_cast<double>(core::realtime_ns() - s.start_ns) / 1e9 >= decl_.stop_after_s)
      stop_at = core::realtime_ns();
    if (decl_.stop_after_blocks > 0 && stop_at == 0) {
      if (counting_run != s.number) {
        counter.reset();
        if (auto opened = BlockCounter::open(arena_, channel_, s.start_ns)) counter.emplace(std::move(*opened));
        counting_run = s.number;
        if (!counter) log_(fmt::format("schedule: cannot count the blocks of '{}': no such channel", channel_));
      }
      if (counter) stop_at = counter->stop_time(decl_.stop_after_blocks);
      by_blocks = stop_at != 0;
      if (counter && stop_at == 0) {
        counter->wait(kLookNs);  // the channel's next block, or a look at the run again
        continue;
      }
    }
    if (stop_at != 0) {
      auto stopped = runctl::stop_run(arena_, kDoor, core::RunEnd::stopped, s.number, runctl::kDefaultCloseWaitNs,
                                      by_blocks ? stop_at : 0);
      if (stopped) {
        log_(fmt::format("schedule: {}", runctl::ledger_line(stopped->row)));
        want_start = decl_.restart;
      } else {
        log_(fmt::format("schedule: {}", stopped.error().what));  // another door stopped it first
      }
      continue;
    }
    (void)rc.wait(s.changes, kLookNs);
  }
}

}  // namespace weir::supervisor
