// epics "serve", the update thread's reads of channels: a channel's newest block as a waveform, or
// its envelope (min and max waveforms) folded from the pyramid entries of the span its ring holds.
#include <algorithm>
#include <cmath>
#include <limits>
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
    const core::ChannelDesc& d = w.copier->desc();
    const std::uint64_t written = d.samples_written.load(std::memory_order_acquire);  // pairs with the writer's publish
    const std::uint64_t end = written / w.entry_samples * w.entry_samples;
    const std::uint64_t span = w.span_entries * w.entry_samples;
    const std::uint64_t first = end > span ? end - span : 0;
    const auto n = static_cast<std::size_t>((end - first) / w.entry_samples);
    if (n == 0) continue;
    core::envelope(arena_, w.channel, first, end - first, std::span<float>(w.entry_lo.data(), n),
                   std::span<float>(w.entry_hi.data(), n));
    const std::size_t buckets = std::min<std::size_t>(w.elements, n);
    const epicsTimeStamp t = epics_time(core::realtime_ns());
    for (Pv* pv : {w.min, w.max}) {
      const bool lo = pv == w.min;
      const std::vector<float>& src = lo ? w.entry_lo : w.entry_hi;
      {
        const std::lock_guard lock(pv->m);
        std::fill_n(pv->wave.begin(), buckets, std::numeric_limits<double>::quiet_NaN());
        for (std::size_t i = 0; i < n; ++i) {
          if (std::isnan(src[i])) continue;  // an entry the writer overtook, or a gap
          double& b = pv->wave[i * buckets / n];
          const auto v = static_cast<double>(src[i]);
          b = std::isnan(b) ? v : lo ? std::min(b, v) : std::max(b, v);
        }
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
