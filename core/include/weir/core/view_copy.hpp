#pragma once
// Copying out of a zero-copy view: a ChannelReader's BlockView, a KvStore ValueView, a VectorStore
// VectorView. The bytes a view points at may change under the copy (the writer is never stopped), so
// every copy is validated afterwards by the view's epoch or state word, and a torn copy discarded.
// The copy itself is the one audited racy copy of core (detail/seqlock.hpp, tests/tsan.supp).
#include <algorithm>
#include <cstddef>
#include <span>

#include "weir/core/channel.hpp"
#include "weir/core/detail/seqlock.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/vector_store.hpp"

namespace weir::core {

/// Copies `bytes` from the in-place memory of a view (view.data, view.data()) into dst, without
/// validating: follow it with the view's valid() or ChannelReader::done() and discard dst when that
/// is false. Thread: the viewing thread. Requires: [src, src + bytes) lies inside the viewed block,
/// value or vector.
inline void copy_unvalidated(void* dst, const void* src, std::size_t bytes) noexcept {
  detail::seqlock_copy_out(dst, src, bytes);
}

/// Copies the first dst.size() bytes of a block's samples, then validates: false means the writer
/// reused the slot meanwhile and dst must be discarded. A ChannelReader still calls done(view) after.
/// Thread: the viewing thread. Requires: dst.size() <= the view's samples times the sample size.
[[nodiscard]] inline bool copy_validated(const BlockView& view, std::span<std::byte> dst) noexcept {
  copy_unvalidated(dst.data(), view.data, dst.size());
  return view.valid();
}

/// Copies a value view's bytes (at most dst.size() of them), then validates: false means a writer
/// changed the value meanwhile and dst must be discarded. Thread: the viewing thread.
[[nodiscard]] inline bool copy_validated(const ValueView& view, std::span<std::byte> dst) noexcept {
  copy_unvalidated(dst.data(), view.data(), std::min<std::size_t>(dst.size(), view.size()));
  return view.valid();
}

/// Copies a vector view's floats (at most dst.size() of them), then validates: false means a writer
/// changed the row meanwhile and dst must be discarded. Thread: the viewing thread.
[[nodiscard]] inline bool copy_validated(const VectorView& view, std::span<float> dst) noexcept {
  copy_unvalidated(dst.data(), view.data(), std::min<std::size_t>(dst.size(), view.size()) * sizeof(float));
  return view.valid();
}

}  // namespace weir::core
