// The C ABI: channels. Listing, unregistered block copies, the pyramid envelope, and registered
// consumers that copy or view blocks and wait on the channel's signal group.
#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <span>
#include <vector>

#include "handles.hpp"
#include "weir/core/block_copier.hpp"
#include "weir/core/clock.hpp"

using weir::capi::fail;
using weir::capi::fail_null;
using weir::capi::guarded;
namespace core = weir::core;

namespace {

constexpr std::size_t kMaxBlockRecords = 4096;  // block records one weir_channel_read fills per core call

template <std::size_t N>
void copy_text(char (&dst)[N], std::string_view src) noexcept {
  const std::size_t n = std::min(N - 1, src.size());
  std::memcpy(dst, src.data(), n);
  dst[n] = '\0';
}

// Fills out from a listed channel and its descriptor.
void fill_info(const core::ChannelInfo& c, const core::ChannelDesc& d, weir_channel_info& out) noexcept {
  out = weir_channel_info{};
  copy_text(out.name, c.name);
  copy_text(out.units, c.units);
  copy_text(out.axis_name, c.frame.axis.name);
  copy_text(out.axis_units, c.frame.axis.units);
  copy_text(out.axis_values_key, c.frame.axis.values_key);
  out.rate_hz = c.rate_hz;
  out.axis_start = c.frame.axis.start;
  out.axis_step = c.frame.axis.step;
  out.head = d.head.load(std::memory_order_acquire);  // pairs with the writer's publish
  out.samples_written = c.samples_written;
  out.dropped_at_source = c.dropped_at_source;
  out.label_ids = d.label_ids;
  out.index = c.index;
  out.dtype = static_cast<std::uint32_t>(c.dtype);
  out.sample_bytes = d.sample_bytes;
  out.samples_per_block = c.samples_per_block;
  out.ring_blocks = c.ring_blocks;
  out.frames_per_block = c.frame.frames_per_block;
  out.frame_elements = c.frame.frame_elements;
  out.writer_pid = c.writer_pid;
  out.writer_alive = c.writer_alive ? 1U : 0U;
  out.consumers = static_cast<std::uint32_t>(
      std::count_if(c.consumers.begin(), c.consumers.end(), [](const core::ConsumerInfo& k) { return k.alive; }));
}

void fill_meta(const core::BlockView& v, weir_block_meta& out) noexcept {
  out = weir_block_meta{};
  out.sequence = v.sequence;
  out.realtime_ns = v.realtime_ns;
  out.monotonic_ns = v.monotonic_ns;
  out.first_sample = v.first_sample;
  out.samples = v.samples;
  out.flags = v.flags;
  out.state = WEIR_BLOCK_OK;
}

weir_block_state state_of(core::BlockStatus s) noexcept {
  switch (s) {
    case core::BlockStatus::ok: return WEIR_BLOCK_OK;
    case core::BlockStatus::overwritten: return WEIR_BLOCK_OVERWRITTEN;
    case core::BlockStatus::unwritten: return WEIR_BLOCK_UNWRITTEN;
    case core::BlockStatus::too_small: return WEIR_BLOCK_UNWRITTEN;  // copy_range never answers it
  }
  return WEIR_BLOCK_UNWRITTEN;
}

// Tries `once` (OK or EMPTY, adding to *lost) until it yields a block, the deadline passes or the
// reader is interrupted, sleeping on the channel's signal group in between.
template <class Once>
weir_status follow(weir_reader* r, std::int64_t timeout_ns, Once&& once) {
  const std::int64_t deadline = timeout_ns > 0 ? core::monotonic_ns() + timeout_ns : 0;
  for (;;) {
    if (once()) return WEIR_OK;
    if (timeout_ns <= 0) return WEIR_EMPTY;
    if (!r->watcher) {
      auto watcher = core::Watcher::create(r->state->arena);
      if (!watcher) return fail(watcher.error());
      if (auto g = watcher->subscribe_channel(r->channel); !g) return fail(g.error());
      r->watcher.emplace(std::move(*watcher));
      continue;  // look again: a block published before the subscription rang no bell for us
    }
    const weir_status st = weir::capi::sliced_wait(*r->watcher, r->interrupted, deadline);
    if (st == WEIR_INTERRUPTED) return st;
    if (st == WEIR_TIMEOUT) return once() ? WEIR_OK : WEIR_TIMEOUT;
  }
}

}  // namespace

extern "C" {

weir_status weir_channel_list(const weir_arena* arena, weir_channel_info* out, uint32_t capacity, uint32_t* count) {
  if (arena == nullptr) return fail_null("weir_channel_list", "arena");
  if (count == nullptr) return fail_null("weir_channel_list", "count");
  if (out == nullptr && capacity > 0) return fail_null("weir_channel_list", "out");
  return guarded("weir_channel_list", [&]() -> weir_status {
    const core::Arena& a = arena->state->arena;
    std::uint32_t n = 0;
    for (const core::ChannelInfo& c : core::list_channels(a)) {
      auto copier = core::BlockCopier::open(a, c.index);
      if (!copier) continue;  // an inconsistent descriptor is left out; weir_channel_find names it
      if (n < capacity) fill_info(c, copier->desc(), out[n]);
      ++n;
    }
    *count = n;
    if (n > capacity) return fail(WEIR_E_TOO_SMALL, "weir_channel_list: more channels than capacity");
    return WEIR_OK;
  });
}

weir_status weir_channel_find(const weir_arena* arena, const char* name, weir_channel_info* out) {
  if (arena == nullptr) return fail_null("weir_channel_find", "arena");
  if (name == nullptr) return fail_null("weir_channel_find", "name");
  if (out == nullptr) return fail_null("weir_channel_find", "out");
  return guarded("weir_channel_find", [&]() -> weir_status {
    const core::Arena& a = arena->state->arena;
    auto copier = core::BlockCopier::open(a, std::string_view(name));
    if (!copier) return fail(copier.error());
    for (const core::ChannelInfo& c : core::list_channels(a)) {
      if (c.name != name) continue;
      fill_info(c, copier->desc(), *out);
      return WEIR_OK;
    }
    return fail(WEIR_E_NOT_FOUND, "no channel '" + std::string(name) + "' in " + a.location().describe());
  });
}

weir_status weir_channel_head(const weir_arena* arena, uint32_t index, uint64_t* head) {
  if (arena == nullptr) return fail_null("weir_channel_head", "arena");
  if (head == nullptr) return fail_null("weir_channel_head", "head");
  return guarded("weir_channel_head", [&]() -> weir_status {
    auto copier = core::BlockCopier::open(arena->state->arena, index);
    if (!copier) return fail(copier.error());
    *head = copier->head();
    return WEIR_OK;
  });
}

weir_status weir_channel_read(const weir_arena* arena, uint32_t index, uint64_t first, uint64_t count, void* dst,
                              size_t dst_bytes, weir_block_meta* metas, uint64_t* visited) {
  if (arena == nullptr) return fail_null("weir_channel_read", "arena");
  if (visited == nullptr) return fail_null("weir_channel_read", "visited");
  *visited = 0;
  if (count == 0) return WEIR_OK;
  if (dst == nullptr) return fail_null("weir_channel_read", "dst");
  if (metas == nullptr) return fail_null("weir_channel_read", "metas");
  return guarded("weir_channel_read", [&]() -> weir_status {
    auto copier = core::BlockCopier::open(arena->state->arena, index);
    if (!copier) return fail(copier.error());
    if (dst_bytes < copier->block_bytes()) {
      char text[160];
      std::snprintf(text, sizeof(text), "weir_channel_read: dst holds %zu bytes, a block of channel %u takes %llu",
                    dst_bytes, index, static_cast<unsigned long long>(copier->block_bytes()));
      return fail(WEIR_E_TOO_SMALL, text);
    }
    const std::span<std::byte> out(static_cast<std::byte*>(dst), dst_bytes);
    core::BlockRecord records[64];
    std::uint64_t done = 0;
    std::uint64_t bytes = 0;
    while (done < count) {
      const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>({count - done, std::size(records),
                                                                                   kMaxBlockRecords}));
      const core::BlockRange r =
          copier->copy_range(first + done, first + count, out.subspan(bytes), std::span(records, want));
      for (std::size_t i = 0; i < r.visited; ++i) {
        weir_block_meta& m = metas[done + i];
        const core::BlockRecord& rec = records[i];
        m = weir_block_meta{};
        m.sequence = rec.sequence;
        m.offset_bytes = bytes + rec.offset_bytes;
        m.realtime_ns = rec.realtime_ns;
        m.monotonic_ns = rec.monotonic_ns;
        m.first_sample = rec.first_sample;
        m.samples = rec.samples;
        m.flags = rec.flags;
        m.state = state_of(rec.status);
      }
      done += r.visited;
      bytes += r.bytes;
      if (r.visited < want) break;  // dst is full
    }
    *visited = done;
    return WEIR_OK;
  });
}

weir_status weir_channel_envelope(const weir_arena* arena, uint32_t index, uint64_t first_sample, uint64_t count,
                                  float* mins, float* maxs, size_t columns) {
  if (arena == nullptr) return fail_null("weir_channel_envelope", "arena");
  if (columns > 0 && (mins == nullptr || maxs == nullptr)) return fail_null("weir_channel_envelope", "mins or maxs");
  return guarded("weir_channel_envelope", [&]() -> weir_status {
    auto copier = core::BlockCopier::open(arena->state->arena, index);  // a ready, consistent channel
    if (!copier) return fail(copier.error());
    core::envelope(arena->state->arena, index, first_sample, count, std::span(mins, columns), std::span(maxs, columns));
    return WEIR_OK;
  });
}

weir_status weir_reader_open(weir_arena* arena, const char* channel, uint32_t policy, uint32_t start,
                             uint64_t sequence, const char* consumer_name, weir_reader** out) {
  if (out == nullptr) return fail_null("weir_reader_open", "out");
  *out = nullptr;
  if (arena == nullptr) return fail_null("weir_reader_open", "arena");
  if (channel == nullptr) return fail_null("weir_reader_open", "channel");
  if (policy > WEIR_LATEST) return fail(WEIR_E_INVALID, "weir_reader_open: policy must be lossy, lossless or latest");
  if (start > WEIR_START_SEQUENCE) return fail(WEIR_E_INVALID, "weir_reader_open: start must be oldest, newest or sequence");
  return guarded("weir_reader_open", [&]() -> weir_status {
    const core::Arena& a = arena->state->arena;
    auto copier = core::BlockCopier::open(a, std::string_view(channel));  // checks the descriptor first
    if (!copier) return fail(copier.error());
    auto reader = core::ChannelReader::open(a, channel, static_cast<core::ConsumerPolicy>(policy),
                                            consumer_name != nullptr ? consumer_name : "c",
                                            static_cast<core::StartAt>(start), sequence);
    if (!reader) return fail(reader.error());
    auto handle = std::unique_ptr<weir_reader>(
        new weir_reader{arena->state, std::move(*reader), channel, copier->block_bytes(), std::nullopt, {false}});
    *out = handle.release();
    return WEIR_OK;
  });
}

weir_status weir_reader_close(weir_reader* reader) {
  delete reader;  // leaves the consumer table; the arena stays mapped while other handles hold it
  return WEIR_OK;
}

weir_status weir_reader_next(weir_reader* reader, void* dst, size_t dst_bytes, weir_block_meta* meta, uint64_t* lost,
                             int64_t timeout_ns) {
  if (reader == nullptr) return fail_null("weir_reader_next", "reader");
  if (meta == nullptr) return fail_null("weir_reader_next", "meta");
  if (lost == nullptr) return fail_null("weir_reader_next", "lost");
  *lost = 0;
  if (dst == nullptr) return fail_null("weir_reader_next", "dst");
  if (dst_bytes < reader->block_bytes) {
    char text[200];
    std::snprintf(text, sizeof(text), "channel '%s': dst holds %zu bytes, a block takes %llu", reader->channel.c_str(),
                  dst_bytes, static_cast<unsigned long long>(reader->block_bytes));
    return fail(WEIR_E_TOO_SMALL, text);
  }
  return guarded("weir_reader_next", [&]() -> weir_status {
    const std::span<std::byte> out(static_cast<std::byte*>(dst), dst_bytes);
    return follow(reader, timeout_ns, [&]() noexcept {
      for (;;) {
        core::BlockView view;
        std::uint64_t n = 0;
        switch (reader->reader.read_copy(out, view, n)) {
          case core::NextStatus::ok: fill_meta(view, *meta); return true;
          case core::NextStatus::empty: *lost += n; return false;
          case core::NextStatus::lost: *lost += n; break;  // counted; the cursor moved past them
        }
      }
    });
  });
}

weir_status weir_reader_view(weir_reader* reader, weir_block_view* out, uint64_t* lost, int64_t timeout_ns) {
  if (reader == nullptr) return fail_null("weir_reader_view", "reader");
  if (out == nullptr) return fail_null("weir_reader_view", "out");
  if (lost == nullptr) return fail_null("weir_reader_view", "lost");
  *lost = 0;
  *out = weir_block_view{};
  return guarded("weir_reader_view", [&]() -> weir_status {
    return follow(reader, timeout_ns, [&]() noexcept {
      for (;;) {
        core::BlockView view;
        std::uint64_t n = 0;
        switch (reader->reader.next(view, n)) {
          case core::NextStatus::ok:
            out->data = view.data;
            out->bytes = std::uint64_t{view.samples} * reader->reader.desc().sample_bytes;
            fill_meta(view, out->meta);
            out->token = view.state;
            out->token_expected = view.expected_state;
            return true;
          case core::NextStatus::empty: *lost += n; return false;
          case core::NextStatus::lost: *lost += n; break;
        }
      }
    });
  });
}

int weir_block_view_valid(const weir_block_view* view) {
  if (view == nullptr || view->token == nullptr) return 0;
  core::BlockView v;
  v.state = static_cast<const std::atomic<std::uint64_t>*>(view->token);
  v.expected_state = view->token_expected;
  return v.valid() ? 1 : 0;
}

weir_status weir_reader_release(weir_reader* reader, const weir_block_view* view, int* valid) {
  if (reader == nullptr) return fail_null("weir_reader_release", "reader");
  if (view == nullptr || view->token == nullptr) return fail_null("weir_reader_release", "view");
  core::BlockView v;
  v.data = static_cast<const std::byte*>(view->data);
  v.samples = view->meta.samples;
  v.sequence = view->meta.sequence;
  v.state = static_cast<const std::atomic<std::uint64_t>*>(view->token);
  v.expected_state = view->token_expected;
  const bool ok = reader->reader.done(v);
  if (valid != nullptr) *valid = ok ? 1 : 0;
  return WEIR_OK;
}

weir_status weir_reader_get_stats(const weir_reader* reader, weir_reader_stats* out) {
  if (reader == nullptr) return fail_null("weir_reader_get_stats", "reader");
  if (out == nullptr) return fail_null("weir_reader_get_stats", "out");
  // relaxed: counters for people, each read on its own
  const core::ConsumerRow& row = reader->reader.row();
  out->cursor = reader->reader.cursor();
  out->head = reader->reader.desc().head.load(std::memory_order_acquire);
  out->blocks_read = row.blocks_read.load(std::memory_order_relaxed);
  out->samples_read = row.samples_read.load(std::memory_order_relaxed);
  out->blocks_lost = row.blocks_lost.load(std::memory_order_relaxed);
  return WEIR_OK;
}

weir_status weir_reader_interrupt(weir_reader* reader) {
  if (reader == nullptr) return WEIR_E_INVALID;  // no message: a signal handler may call this
  reader->interrupted.store(true, std::memory_order_relaxed);  // only a flag; see sliced_wait
  return WEIR_OK;
}

}  // extern "C"
