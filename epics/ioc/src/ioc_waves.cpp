// epics "serve", the update thread's reads of channels: a channel's newest block as a waveform, or
// its envelope (min and max waveforms) folded from the pyramid entries of the span its ring holds.
#include <algorithm>
#include <mutex>
#include <span>
#include <vector>

#include "ioc_server_impl.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/clock.hpp"
#include "weir/tools/value_codec.hpp"

namespace weir::epics::detail {

void Server::update_channels() {
  for (WaveRow& w : waves_) {
    const std::uint64_t head = w.copier->head();
    if (head == 0 || head == w.head_seen) continue;
    if (w.wave != nullptr) {
      core::BlockRecord meta;
      if (w.copier->copy(head - 1, std::span<std::byte>(w.block), meta) != core::BlockStatus::ok) continue;  // next cycle
      w.head_seen = head;
      if ((meta.flags & core::kBlockGapFlag) != 0) continue;  // a gap carries no samples
      const std::uint32_t n = std::min(meta.samples, w.elements);
      {
        Pv& pv = *w.wave;
        const std::lock_guard lock(pv.m);
        for (std::uint32_t i = 0; i < n; ++i) pv.wave[i] = tools::sample_as_f64(w.block.data(), w.dtype, i);
        pv.wave_len = n;
        pv.sevr = pv.stat = NO_ALARM;
        pv.time = epics_time(static_cast<std::int64_t>(meta.realtime_ns));
        pv.staged = true;
      }
      post(*w.wave);
      continue;
    }
    // The envelope: complete pyramid entries of the newest span, folded into `elements` buckets.
    w.head_seen = head;
    if (w.envelope->read(arena_) == 0) continue;
    const epicsTimeStamp t = epics_time(core::realtime_ns());
    for (Pv* pv : {w.min, w.max}) {
      {
        const std::lock_guard lock(pv->m);
        const std::size_t buckets = w.envelope->fold(pv == w.min, pv->wave);
        pv->wave_len = static_cast<std::uint32_t>(buckets);
        pv->sevr = pv->stat = NO_ALARM;
        pv->time = t;
        pv->staged = true;
      }
      post(*pv);
    }
  }
}

}  // namespace weir::epics::detail
