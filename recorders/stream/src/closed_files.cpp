// The closed-file thread (closed_files.hpp): manifests and hand-offs.
#include "closed_files.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>

#include "process_info.hpp"
#include "weir/ledger/manifest.hpp"
#include "weir/recorder/format.hpp"

namespace weir::rec {

namespace {

std::int64_t seconds_ns(double s) { return static_cast<std::int64_t>(s * 1e9); }

// "{path}" -> the file, "{name}" -> its name, "{dir}" -> its directory, "{sha256}" -> its digest.
std::string substitute(std::string arg, const std::string& file, const std::string& sha256) {
  const std::filesystem::path p(file);
  const std::pair<std::string_view, std::string> fields[] = {
      {"{path}", file}, {"{name}", p.filename().string()}, {"{dir}", p.parent_path().string()}, {"{sha256}", sha256}};
  for (const auto& [tag, value] : fields)
    for (std::size_t at = arg.find(tag); at != std::string::npos; at = arg.find(tag, at + value.size()))
      arg.replace(at, tag.size(), value);
  return arg;
}

std::string joined(const std::vector<std::string>& args) {
  std::string text;
  for (const std::string& a : args) text += (text.empty() ? "" : " ") + a;
  return text;
}

}  // namespace

ClosedFiles::ClosedFiles(std::uint64_t run, bool checksums, const HandoffOptions& handoff,
                         std::function<void(std::string_view)> notice)
    : run_(run), checksums_(checksums), handoff_(handoff), notice_(std::move(notice)), thread_([this] { work(); }) {}

ClosedFiles::~ClosedFiles() { finish(monotonic_ns()); }

void ClosedFiles::add(std::string file, bool hash, std::uint64_t run) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;
    items_.push_back(Item{std::move(file), run, hash, false, 0, 0});
    if (!handoff_.command.empty()) counters_.handoff_pending.fetch_add(1, std::memory_order_relaxed);
  }
  wake_.notify_one();
}

void ClosedFiles::finish(std::int64_t deadline_ns) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!stopping_) stop_deadline_ns_ = deadline_ns;
    stopping_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void ClosedFiles::hash(Item& item) {
  item.hashed = true;
  std::error_code ec;
  if (!checksums_ || (!item.hash && std::filesystem::exists(ledger::manifest_path(item.file), ec))) return;
  const std::int64_t began = monotonic_ns();
  auto digest = ledger::digest_file(item.file);
  if (digest) {
    digest->run = item.run != 0 ? item.run : run_;
    if (auto ok = ledger::write_manifest(item.file, *digest); !ok) digest = tl::make_unexpected(ok.error());
  }
  counters_.hash_ns.fetch_add(static_cast<std::uint64_t>(monotonic_ns() - began), std::memory_order_relaxed);
  if (!digest) {
    counters_.hash_failures.fetch_add(1, std::memory_order_relaxed);
    if (notice_) notice_("no manifest for " + item.file + ": " + digest.error().what);
    return;
  }
  counters_.hashed_files.fetch_add(1, std::memory_order_relaxed);
  counters_.hashed_bytes.fetch_add(digest->bytes, std::memory_order_relaxed);
}

bool ClosedFiles::hand_over(Item& item) {
  ++item.attempts;
  std::string sha256;
  if (auto digest = ledger::read_manifest(ledger::manifest_path(item.file))) sha256 = digest->sha256;
  std::vector<std::string> args;
  for (const std::string& a : handoff_.command) args.push_back(substitute(a, item.file, sha256));
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {  // the child: async-signal-safe calls only, up to exec
    (void)::setpgid(0, 0);                   // its own group: a timeout kills all it started
    (void)::prctl(PR_SET_PDEATHSIG, SIGKILL);  // dies with this thread (a killed recorder leaves no hand-off behind)
    if (::getppid() != parent) ::_exit(127);
    sigset_t none;
    sigemptyset(&none);
    (void)::sigprocmask(SIG_SETMASK, &none, nullptr);
    (void)::signal(SIGPIPE, SIG_DFL);
    const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null >= 0) (void)::dup2(null, STDIN_FILENO);
    ::execvp(argv[0], argv.data());
    ::_exit(127);
  }
  std::string why;
  bool ok = false;
  if (pid < 0) {
    why = std::string("fork: ") + std::strerror(errno);
  } else {
    (void)::setpgid(pid, pid);  // either side may win the race; both ask for the same
    const std::int64_t deadline = monotonic_ns() + seconds_ns(handoff_.timeout_s);
    int status = 0;
    bool killed = false;
    for (;;) {
      const pid_t done = ::waitpid(pid, &status, WNOHANG);
      if (done == pid || (done < 0 && errno != EINTR)) break;
      if (!killed && monotonic_ns() >= deadline) {
        (void)::kill(-pid, SIGKILL);
        killed = true;
        counters_.handoff_timeouts.fetch_add(1, std::memory_order_relaxed);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(kHandoffPollMs));  // a killed group goes at once
    }
    if (killed)
      why = "killed after its timeout of " + std::to_string(handoff_.timeout_s) + " s";
    else if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
      ok = true;
    else if (WIFEXITED(status))
      why = "exit status " + std::to_string(WEXITSTATUS(status)) + (WEXITSTATUS(status) == 127 ? " (not found?)" : "");
    else
      why = std::string("killed by signal ") + std::to_string(WTERMSIG(status));
  }
  if (ok) {
    if (auto marked = ledger::mark_handed(item.file, static_cast<std::int64_t>(realtime_ns()), item.attempts, joined(args)); !marked) {
      ok = false;
      why = "the command succeeded, its record did not: " + marked.error().what;
    }
  }
  if (ok) {
    counters_.handoff_ok.fetch_add(1, std::memory_order_relaxed);
    counters_.handoff_pending.fetch_sub(1, std::memory_order_relaxed);
    if (notice_) notice_("handed over " + item.file + " (attempt " + std::to_string(item.attempts) + ")");
    return true;
  }
  counters_.handoff_failures.fetch_add(1, std::memory_order_relaxed);
  const double back_off =
      std::min(handoff_.retry_max_s, handoff_.retry_s * std::pow(2.0, static_cast<double>(std::min<std::uint64_t>(item.attempts - 1, 30))));
  item.due_ns = monotonic_ns() + seconds_ns(back_off);
  if (notice_)
    notice_("hand-off of " + item.file + " failed (attempt " + std::to_string(item.attempts) + "): " + joined(args) + ": " +
            why + "; next try in " + std::to_string(back_off) + " s");
  return false;
}

void ClosedFiles::work() {
  const bool handing = !handoff_.command.empty();
  for (;;) {
    Item item;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      for (;;) {
        // Hashes first, in order; then the hand-off due first.
        auto next = std::find_if(items_.begin(), items_.end(), [](const Item& i) { return !i.hashed; });
        const std::int64_t now = monotonic_ns();
        if (next == items_.end() && handing && !items_.empty()) {
          next = std::min_element(items_.begin(), items_.end(), [](const Item& a, const Item& b) { return a.due_ns < b.due_ns; });
          // Stopping: only what is due now (never tried, or its back-off over), and only until the deadline.
          if (next->due_ns > now) {
            if (stopping_) break;
            wake_.wait_for(lock, std::chrono::nanoseconds(next->due_ns - now));
            continue;
          }
          if (stopping_ && now >= stop_deadline_ns_) break;
        }
        if (next != items_.end()) {
          item = std::move(*next);
          items_.erase(next);
          break;
        }
        if (stopping_) break;
        wake_.wait(lock);
      }
      if (item.file.empty()) {
        if (handing && !items_.empty() && notice_)
          notice_(std::to_string(items_.size()) + " closed file(s) not handed over yet: the run's next recorder tries again");
        return;
      }
    }
    bool done = true;
    if (!item.hashed) {
      hash(item);
      done = !handing || ledger::handed_over(item.file);
      if (handing && done) counters_.handoff_pending.fetch_sub(1, std::memory_order_relaxed);  // an earlier recorder's
    } else {
      done = hand_over(item);
    }
    if (!done) {
      const std::lock_guard<std::mutex> lock(mutex_);
      items_.push_back(std::move(item));
    }
  }
}

}  // namespace weir::rec
