#pragma once
// The state of `weir scope` between frames: span, trigger, pause, the samples read so far, and
// how one frame is drawn from them and from the channel's min/max pyramid.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "weir/core/arena.hpp"
#include "weir/core/channel.hpp"
#include "weir/scope/braille_canvas.hpp"
#include "weir/scope/scope_terminal.hpp"
#include "weir/scope/scope_trace.hpp"
#include "weir/scope/scope_view.hpp"

namespace weir::scope {

struct ScopeSettings {
  std::uint64_t span_samples = 0;      // 0: a few blocks
  std::optional<double> trigger_level;  // set: start with the trigger on at this level
};

/// One channel's scope. Thread: main only.
class ScopeDisplay {
 public:
  /// Requires: reader follows channel info.index of arena with the latest policy; both outlive this.
  ScopeDisplay(const core::Arena& arena, core::ChannelReader& reader, core::ChannelInfo info,
               const ScopeSettings& settings);

  /// Reads the newest blocks in place into the sample history. Returns whether any arrived.
  bool read_blocks();
  /// Applies one key; returns false for quit.
  bool apply(Key key);
  [[nodiscard]] bool paused() const noexcept { return paused_; }
  [[nodiscard]] std::uint64_t span_samples() const noexcept { return span_; }
  /// The lines of a frame for a terminal of `size`.
  [[nodiscard]] std::vector<std::string> frame(TermSize size);

 private:
  struct View {
    std::uint64_t anchor = 0;  // the trigger crossing, or the end of the data shown
    TriggerState trigger = TriggerState::off;
  };
  [[nodiscard]] std::uint64_t pretrigger() const noexcept;
  [[nodiscard]] View choose_view() const;
  void fill_envelope(std::uint64_t first, std::uint64_t count, std::size_t dots);

  const core::Arena* arena_;
  core::ChannelReader* reader_;
  core::ChannelInfo info_;
  std::uint64_t span_;
  std::uint64_t max_span_;
  bool trigger_on_;
  double level_;
  bool level_set_;
  bool paused_ = false;
  View view_;
  YRange range_;
  SampleHistory history_;
  std::vector<std::byte> raw_;  // one block as copied out of its slot
  std::vector<float> scratch_;  // the same block as floats
  std::vector<float> mins_;
  std::vector<float> maxs_;
};

}  // namespace weir::scope
