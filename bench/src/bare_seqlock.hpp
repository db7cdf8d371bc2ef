#pragma once
// The floor the KV store is measured against: a bare seqlock over a shared mapping with the same
// slot count and stride as the bench arena, and nothing else (no hashing, metadata or owner pid).
#include <sys/mman.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <utility>

namespace weir::bench {

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

/// An anonymous MAP_SHARED mapping: shared with children forked after it is made.
class SharedMapping {
 public:
  SharedMapping() = default;
  explicit SharedMapping(std::size_t bytes) noexcept {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED) {
      data_ = static_cast<std::byte*>(p);
      bytes_ = bytes;
    }
  }
  SharedMapping(SharedMapping&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  SharedMapping& operator=(SharedMapping&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(bytes_, other.bytes_);
    return *this;
  }
  SharedMapping(const SharedMapping&) = delete;
  SharedMapping& operator=(const SharedMapping&) = delete;
  ~SharedMapping() {
    if (data_ != nullptr) (void)::munmap(data_, bytes_);
  }

  [[nodiscard]] bool valid() const noexcept { return data_ != nullptr; }
  [[nodiscard]] std::byte* data() const noexcept { return data_; }

 private:
  std::byte* data_ = nullptr;
  std::size_t bytes_ = 0;
};

/// slot_count slots of `stride` bytes: an atomic epoch at +0, the payload at +payload_offset.
/// Thread: publish from one writer per slot at a time (others spin), read from any thread or any
/// process forked after construction.
class BareSeqlock {
 public:
  BareSeqlock(std::uint32_t slot_count, std::uint64_t stride, std::uint64_t payload_offset) noexcept
      : map_(slot_count * stride), stride_(stride), payload_offset_(payload_offset) {
    if (!map_.valid()) return;
    for (std::uint32_t i = 0; i < slot_count; ++i) new (map_.data() + i * stride_) std::atomic<std::uint64_t>(0);
  }

  [[nodiscard]] bool valid() const noexcept { return map_.valid(); }
  [[nodiscard]] const std::byte* payload(std::uint32_t slot) const noexcept {
    return map_.data() + slot * stride_ + payload_offset_;
  }

  void publish(std::uint32_t slot, const std::byte* src, std::size_t n) noexcept {
    std::atomic<std::uint64_t>& epoch = epoch_at(slot);
    std::uint64_t e = epoch.load(std::memory_order_relaxed);  // a guess only: the CAS orders
    for (;;) {
      // acquire: our payload writes stay after taking the slot; relaxed failure: we only retry.
      if ((e & 1U) == 0 && epoch.compare_exchange_weak(e, e + 1, std::memory_order_acquire, std::memory_order_relaxed))
        break;
      if ((e & 1U) != 0) {
        cpu_relax();
        e = epoch.load(std::memory_order_relaxed);
      }
    }
    std::atomic_thread_fence(std::memory_order_release);  // the odd epoch is visible before any payload byte
    std::memcpy(map_.data() + slot * stride_ + payload_offset_, src, n);
    epoch.store(e + 2, std::memory_order_release);         // every payload byte is visible before the even epoch
  }

  /// Copies a consistent payload out; false (busy) after max_attempts inconsistent tries.
  [[nodiscard]] bool read(std::uint32_t slot, std::byte* dst, std::size_t n, int max_attempts) const noexcept {
    const std::atomic<std::uint64_t>& epoch = epoch_at(slot);
    for (int attempt = 0; attempt < max_attempts; ++attempt) {
      const std::uint64_t before = epoch.load(std::memory_order_acquire);  // pairs with publish's final store
      if ((before & 1U) != 0) {
        cpu_relax();
        continue;
      }
      // Racy copy, validated by the epoch re-check below: the same scheme as the KV store's bulk values.
      std::memcpy(dst, payload(slot), n);
      std::atomic_thread_fence(std::memory_order_acquire);  // keeps the copy above the re-check
      if (epoch.load(std::memory_order_relaxed) == before) return true;
    }
    return false;
  }

 private:
  [[nodiscard]] std::atomic<std::uint64_t>& epoch_at(std::uint32_t slot) const noexcept {
    return *std::launder(reinterpret_cast<std::atomic<std::uint64_t>*>(map_.data() + slot * stride_));
  }

  SharedMapping map_;
  std::uint64_t stride_ = 0;
  std::uint64_t payload_offset_ = 0;
};

}  // namespace weir::bench
