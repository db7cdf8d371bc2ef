#include "run_schedule.hpp"

#include <bit>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "weir/core/channel.hpp"
#include "weir/core/clock.hpp"
#include "weir/core/run_control.hpp"
#include "weir/runctl/doors.hpp"

namespace weir::supervisor {

namespace {

constexpr std::int64_t kLookNs = 5'000'000;  // the schedule looks at its run and channel this often at most
constexpr std::string_view kDoor = "schedule";

// Ends a run after `limit` blocks of one channel: finds the run's first block of the channel (a lossy
// reader of block headers, from the oldest block in the ring) and sets the stop half a block period
// before the block after the last one, ahead of time, so every recorder knows it before that block is
// published and the run holds exactly `limit` blocks of the channel (of a channel whose blocks keep
// their period; a late or early block moves the count, never the ledger).
class BlockCounter {
 public:
  static std::optional<BlockCounter> open(const core::Arena& arena, const std::string& channel, std::int64_t start_ns) {
    auto reader = core::ChannelReader::open(arena, channel, core::ConsumerPolicy::lossy, "run schedule",
                                            core::StartAt::oldest);
    if (!reader) return std::nullopt;
    return BlockCounter(std::move(*reader), start_ns);
  }
  /// The run's stop time once its first block of the channel is known, else 0.
  std::int64_t stop_time(std::uint64_t limit) {
    core::BlockView view;
    std::uint64_t lost = 0;
    for (;;) {
      const core::NextStatus status = reader_.next(view, lost);
      if (status == core::NextStatus::empty) return 0;
      if (status == core::NextStatus::lost) continue;
      const auto t = static_cast<std::int64_t>(view.realtime_ns);
      if (!reader_.done(view) || t < start_ns_) continue;
      const core::ChannelDesc& d = reader_.desc();
      const double rate = std::bit_cast<double>(d.rate_bits);
      const double period_ns = rate > 0 ? d.samples_per_block / rate * 1e9 : 0;
      return t + static_cast<std::int64_t>(std::llround((static_cast<double>(limit) - 0.5) * period_ns));
    }
  }

 private:
  BlockCounter(core::ChannelReader reader, std::int64_t start_ns) : reader_(std::move(reader)), start_ns_(start_ns) {}
  core::ChannelReader reader_;
  std::int64_t start_ns_;
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
