#pragma once
// The terminal side of `weir scope`: raw keyboard input (termios, restored on every exit path),
// stop and resize signals, the window size, and key decoding.
#include <termios.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace weir::scope {

enum class Key : std::uint8_t { quit, pause, zoom_in, zoom_out, level_up, level_down, toggle_trigger };

/// Decodes the keys in `bytes` (q, space, + or =, -, k or up arrow, j or down arrow, t), in order,
/// calling fn(Key) for each; other bytes are ignored. Thread: any.
template <class Fn>
void decode_keys(std::string_view bytes, Fn&& fn) {
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const char c = bytes[i];
    if (c == '\x1b' && i + 2 < bytes.size() && (bytes[i + 1] == '[' || bytes[i + 1] == 'O')) {
      if (bytes[i + 2] == 'A') fn(Key::level_up);
      if (bytes[i + 2] == 'B') fn(Key::level_down);
      i += 2;
      continue;
    }
    switch (c) {
      case 'q': case 'Q': fn(Key::quit); break;
      case ' ': fn(Key::pause); break;
      case '+': case '=': fn(Key::zoom_in); break;
      case '-': case '_': fn(Key::zoom_out); break;
      case 'k': fn(Key::level_up); break;
      case 'j': fn(Key::level_down); break;
      case 't': case 'T': fn(Key::toggle_trigger); break;
      default: break;
    }
  }
}

struct TermSize {
  std::size_t cols = 80;
  std::size_t rows = 24;
};

/// Owns the terminal while the scope runs. With stdin a terminal: no line buffering, no echo,
/// signals from Ctrl-C kept. With stdout a terminal: the alternate screen, cursor hidden. SIGINT
/// and SIGTERM set the stop flag, SIGWINCH the resize flag, SIGPIPE is ignored. The destructor
/// restores all of it. Thread: main only; one at a time.
class ScopeTerminal {
 public:
  ScopeTerminal();
  ScopeTerminal(const ScopeTerminal&) = delete;
  ScopeTerminal& operator=(const ScopeTerminal&) = delete;
  ~ScopeTerminal();

  [[nodiscard]] bool interactive_output() const noexcept { return tty_out_; }
  [[nodiscard]] bool keyboard() const noexcept { return raw_in_; }
  /// A stop signal arrived.
  [[nodiscard]] static bool stop_requested() noexcept;
  /// True once after each SIGWINCH.
  [[nodiscard]] static bool take_resized() noexcept;
  /// The window size of stdout; without a terminal: $COLUMNS and $LINES, else 80 x 24.
  [[nodiscard]] TermSize size() const noexcept;
  /// Every byte waiting on stdin (none without a keyboard). Never blocks.
  [[nodiscard]] std::string read_input();
  /// Sleeps up to timeout_ms, returning early when a key arrives. Without a keyboard, just sleeps.
  void wait_input(int timeout_ms) const noexcept;
  /// Writes the whole frame; false if stdout is gone.
  [[nodiscard]] bool write(std::string_view text) const noexcept;

 private:
  bool tty_out_ = false;
  bool raw_in_ = false;
  termios saved_{};
};

}  // namespace weir::scope
