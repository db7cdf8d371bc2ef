// Terminal ownership for `weir scope`: termios raw input, alternate screen, stop and resize signals.
#include "weir/scope/scope_terminal.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdlib>

namespace weir::scope {

namespace {

constexpr std::string_view kEnterScreen = "\x1b[?1049h\x1b[?25l\x1b[2J";  // alternate screen, hide cursor, clear
constexpr std::string_view kLeaveScreen = "\x1b[?25h\x1b[?1049l";         // show cursor, back to the main screen
constexpr std::size_t kInputChunk = 64;
constexpr long kNsPerMs = 1'000'000;
constexpr int kMsPerSecond = 1000;

// Set by the handlers, read between waits; lock-free so the handlers may touch them.
std::atomic<bool> stop_flag{false};
std::atomic<bool> resize_flag{false};
static_assert(std::atomic<bool>::is_always_lock_free);

void on_stop(int) { stop_flag.store(true, std::memory_order_relaxed); }      // only a flag
void on_resize(int) { resize_flag.store(true, std::memory_order_relaxed); }  // only a flag

struct SavedActions {
  struct sigaction int_ {};
  struct sigaction term {};
  struct sigaction winch {};
  struct sigaction pipe {};
};
SavedActions saved_actions;  // one ScopeTerminal at a time

void install(int sig, void (*handler)(int), struct sigaction& old) noexcept {
  struct sigaction action {};
  action.sa_handler = handler;  // no SA_RESTART: poll and nanosleep return early with EINTR
  sigemptyset(&action.sa_mask);
  sigaction(sig, &action, &old);
}

std::size_t env_size(const char* name, std::size_t fallback) noexcept {
  const char* text = std::getenv(name);
  if (text == nullptr) return fallback;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  return end != text && *end == '\0' && value > 0 ? static_cast<std::size_t>(value) : fallback;
}

}  // namespace

ScopeTerminal::ScopeTerminal() {
  stop_flag.store(false, std::memory_order_relaxed);
  resize_flag.store(false, std::memory_order_relaxed);
  install(SIGINT, &on_stop, saved_actions.int_);
  install(SIGTERM, &on_stop, saved_actions.term);
  install(SIGWINCH, &on_resize, saved_actions.winch);
  install(SIGPIPE, SIG_IGN, saved_actions.pipe);
  tty_out_ = isatty(STDOUT_FILENO) == 1;
  if (isatty(STDIN_FILENO) == 1 && tcgetattr(STDIN_FILENO, &saved_) == 0) {
    termios raw = saved_;
    raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);  // keys arrive one by one, unechoed; ISIG stays
    raw.c_cc[VMIN] = 0;                                     // read() never blocks
    raw.c_cc[VTIME] = 0;
    raw_in_ = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
  }
  if (tty_out_) (void)write(kEnterScreen);
}

ScopeTerminal::~ScopeTerminal() {
  if (tty_out_) (void)write(kLeaveScreen);
  if (raw_in_) tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
  sigaction(SIGINT, &saved_actions.int_, nullptr);
  sigaction(SIGTERM, &saved_actions.term, nullptr);
  sigaction(SIGWINCH, &saved_actions.winch, nullptr);
  sigaction(SIGPIPE, &saved_actions.pipe, nullptr);
}

bool ScopeTerminal::stop_requested() noexcept { return stop_flag.load(std::memory_order_relaxed); }

bool ScopeTerminal::take_resized() noexcept { return resize_flag.exchange(false, std::memory_order_relaxed); }

TermSize ScopeTerminal::size() const noexcept {
  winsize ws{};
  if (tty_out_ && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0)
    return TermSize{ws.ws_col, ws.ws_row};
  const TermSize fallback;
  return TermSize{env_size("COLUMNS", fallback.cols), env_size("LINES", fallback.rows)};
}

std::string ScopeTerminal::read_input() {
  std::string bytes;
  if (!raw_in_) return bytes;
  std::array<char, kInputChunk> chunk{};
  for (;;) {
    const ssize_t n = ::read(STDIN_FILENO, chunk.data(), chunk.size());
    if (n <= 0) break;  // 0: nothing waiting (VMIN 0); -1: EINTR or a closed terminal
    bytes.append(chunk.data(), static_cast<std::size_t>(n));
  }
  return bytes;
}

void ScopeTerminal::wait_input(int timeout_ms) const noexcept {
  if (timeout_ms <= 0) return;
  if (raw_in_) {
    pollfd in{STDIN_FILENO, POLLIN, 0};
    (void)poll(&in, 1, timeout_ms);  // a key, a signal or the timeout: the caller looks at all three
    return;
  }
  const timespec pause{timeout_ms / kMsPerSecond, (timeout_ms % kMsPerSecond) * kNsPerMs};
  nanosleep(&pause, nullptr);
}

bool ScopeTerminal::write(std::string_view text) const noexcept {
  while (!text.empty()) {
    const ssize_t n = ::write(STDOUT_FILENO, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace weir::scope
