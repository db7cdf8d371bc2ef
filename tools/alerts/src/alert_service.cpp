#include "weir/alerts/alert_service.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "http_post.hpp"
#include "run_command.hpp"
#include "weir/alerts/figures.hpp"
#include "weir/core/clock.hpp"
#include "weir/core/kv_store.hpp"

namespace weir::alerts {

namespace {

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

double now_s() { return static_cast<double>(core::monotonic_ns()) / 1e9; }

std::chrono::milliseconds millis(double s) { return std::chrono::milliseconds(static_cast<std::int64_t>(s * 1000)); }

std::string notice_text(const Notice& n) {
  return fmt::format("alert \"{}\" ({}) {}{}: {} (value {:g}, threshold {:g})", n.name, n.condition, n.state,
                     n.repeat ? " again" : "", n.subject, n.value, n.threshold);
}

}  // namespace

AlertService::AlertService(const core::Arena& arena, const std::vector<config::AlertDecl>& alerts,
                           const std::vector<std::string>& default_paths)
    : arena_(arena), alerts_(alerts), engine_(alerts, default_paths, arena.location().name, host_name()),
      paths_(engine_.paths()) {}

AlertService::~AlertService() { stop(); }

void AlertService::start() {
  core::KvStore kv(arena_);
  for (const auto& a : alerts_)
    for (const char* what : {".sent", ".failed", ".firing"}) (void)kv.set_u64("weir.alert." + a.name + what, 0);
  evaluator_ = std::thread([this] { evaluate_loop(); });
  deliverer_ = std::thread([this] { deliver_loop(); });
}

void AlertService::stop() {
  if (!evaluator_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stop_.store(true, std::memory_order_relaxed);  // read under the mutex by the waits: no lost wake-up
  }
  wake_.notify_all();
  evaluator_.join();
  deliverer_.join();
  for (const Pending& p : queue_) log("alert: not sent as weir run stops: " + notice_text(p.notice));
  queue_.clear();
}

std::vector<std::string> AlertService::take_log() {
  std::unique_lock lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return {};
  return std::exchange(log_, {});
}

void AlertService::log(std::string line) {
  std::lock_guard lock(mutex_);
  log_.push_back(std::move(line));
}

void AlertService::count(std::size_t alert, const char* what) {
  std::uint64_t after = 0;
  (void)core::KvStore(arena_).atomic("weir.alert." + alerts_[alert].name + what, core::AtomicOp::add, 1, after);
}

void AlertService::evaluate_loop() {
  core::KvStore kv(arena_);
  double next = now_s();
  while (!stop_.load(std::memory_order_relaxed)) {
    const Figures f = read_figures(arena_, paths_);
    std::vector<Notice> notices = engine_.step(now_s(), core::realtime_ns(), f);
    const std::vector<std::uint64_t> firing = engine_.firing();
    for (std::size_t i = 0; i < alerts_.size(); ++i) (void)kv.set_u64("weir.alert." + alerts_[i].name + ".firing", firing[i]);
    (void)kv.set_u64(kPassesKey, passes_.fetch_add(1, std::memory_order_relaxed) + 1);
    if (!notices.empty()) {
      std::lock_guard lock(mutex_);
      for (Notice& n : notices) {
        log_.push_back(notice_text(n));
        const auto alert = static_cast<std::size_t>(
            std::find_if(alerts_.begin(), alerts_.end(), [&](const config::AlertDecl& a) { return a.name == n.name; }) -
            alerts_.begin());
        queue_.push_back(Pending{alert, std::move(n), alerts_[alert].webhook.empty(), alerts_[alert].command.empty(), 0, 0});
      }
      wake_.notify_all();
    }
    next += kEvaluateEveryS;
    if (next < now_s()) next = now_s();  // fell behind (a slow look): no burst of passes to catch up
    std::unique_lock lock(mutex_);
    wake_.wait_for(lock, millis(next - now_s()), [&] { return stop_.load(std::memory_order_relaxed); });
  }
}

void AlertService::deliver_loop() {
  std::unique_lock lock(mutex_);
  while (!stop_.load(std::memory_order_relaxed)) {
    // The first due notice whose alert and subject have none queued before it: an incident's
    // notices go out in order, and one dead target does not hold up the other alerts.
    const double t = now_s();
    double soonest = t + kEvaluateEveryS;
    auto due = queue_.end();
    for (auto it = queue_.begin(); it != queue_.end(); ++it) {
      const bool blocked = std::any_of(queue_.begin(), it, [&](const Pending& q) {
        return q.alert == it->alert && q.notice.subject == it->notice.subject;
      });
      if (blocked) continue;
      if (it->next_try_s <= t) {
        due = it;
        break;
      }
      soonest = std::min(soonest, it->next_try_s);
    }
    if (due == queue_.end()) {
      wake_.wait_for(lock, millis(soonest - t), [&] { return stop_.load(std::memory_order_relaxed); });
      continue;
    }
    Pending p = std::move(*due);
    queue_.erase(due);
    lock.unlock();
    deliver(p);
    const bool done = p.webhook_done && p.command_done;
    const config::AlertDecl& a = alerts_[p.alert];
    lock.lock();
    if (done) continue;
    if (p.attempts > a.retries) {
      log_.push_back(fmt::format("alert: gave up after {} attempt(s): {}", p.attempts, notice_text(p.notice)));
      continue;
    }
    p.next_try_s = now_s() + std::min(kMaxRetryS, kFirstRetryS * std::pow(2.0, p.attempts - 1));
    queue_.push_front(std::move(p));  // before later notices of its incident
  }
}

void AlertService::deliver(Pending& p) {
  const config::AlertDecl& a = alerts_[p.alert];
  ++p.attempts;
  bool failed = false;
  if (!p.webhook_done) {
    const auto url = config::parse_http_url(a.webhook);  // checked when the pipeline loaded
    auto posted = url ? http_post(*url, notice_json(p.notice), millis(a.timeout_s))
                      : core::Result<unsigned>(tl::make_unexpected(url.error()));
    if (posted) {
      p.webhook_done = true;
    } else {
      failed = true;
      log(fmt::format("alert \"{}\": attempt {}: {}", a.name, p.attempts, posted.error().what));
    }
  }
  if (!p.command_done) {
    if (auto ran = run_command(notice_argv(a.command, p.notice), millis(a.timeout_s))) {
      p.command_done = true;
    } else {
      failed = true;
      log(fmt::format("alert \"{}\": attempt {}: {}", a.name, p.attempts, ran.error().what));
    }
  }
  if (failed) count(p.alert, ".failed");
  if (p.webhook_done && p.command_done) count(p.alert, ".sent");
}

}  // namespace weir::alerts
