// tango "serve", the update thread's reads of channels: a channel's newest block as a SPECTRUM, or its
// envelope (min and max SPECTRUMs) folded from the pyramid entries of the span its ring holds.
#include <algorithm>
#include <cstring>
#include <span>
#include <vector>

#include "server_impl.hpp"
#include "weir/core/channel.hpp"
#include "weir/tools/value_codec.hpp"

namespace weir::tango::detail {

void Server::update_channels() {
  for (WaveRow& w : waves_) {
    const std::uint64_t head = w.copier->head();
    if (head == 0 || head == w.head_seen) continue;
    if (w.wave) {
      core::BlockRecord meta;
      if (w.copier->copy(head - 1, std::span<std::byte>(w.block), meta) != core::BlockStatus::ok) continue;  // next cycle
      w.head_seen = head;
      if ((meta.flags & core::kBlockGapFlag) != 0) continue;  // a gap carries no samples
      Value& v = values_[*w.wave];
      const std::uint32_t n = std::min(meta.samples, w.elements);
      for (std::uint32_t i = 0; i < n; ++i) v.wave[i] = tools::sample_as_f64(w.block.data(), w.dtype, i);
      v.wave_len = n;
      publish_wave(*w.wave, time_of_ns(meta.realtime_ns));
      continue;
    }
    w.head_seen = head;
    if (w.envelope->read(arena_) == 0) continue;
    for (const bool lo : {true, false}) {
      Value& v = values_[lo ? *w.min : *w.max];
      v.wave_len = static_cast<long>(w.envelope->fold(lo, v.wave));
      publish_wave(lo ? *w.min : *w.max, now_);
    }
  }
}

}  // namespace weir::tango::detail
