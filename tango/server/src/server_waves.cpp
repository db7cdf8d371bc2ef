// tango "serve", the update thread's reads of channels: a channel's newest block as a SPECTRUM, or its
// envelope (min and max SPECTRUMs) folded from the pyramid entries of the span its ring holds.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
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
    for (const bool lo : {true, false}) {
      Value& v = values_[lo ? *w.min : *w.max];
      const std::vector<float>& src = lo ? w.entry_lo : w.entry_hi;
      std::fill_n(v.wave.begin(), buckets, std::numeric_limits<double>::quiet_NaN());
      for (std::size_t i = 0; i < n; ++i) {
        if (std::isnan(src[i])) continue;  // an entry the writer overtook, or a gap
        double& b = v.wave[i * buckets / n];
        const auto x = static_cast<double>(src[i]);
        b = std::isnan(b) ? x : lo ? std::min(b, x) : std::max(b, x);
      }
      v.wave_len = static_cast<long>(buckets);
      publish_wave(lo ? *w.min : *w.max, now_);
    }
  }
}

}  // namespace weir::tango::detail
