// The recorder's encoder threads (encode_pool.hpp).
#include "encode_pool.hpp"

#include <sched.h>

#include <algorithm>
#include <chrono>

namespace weir::rec {

namespace {

constexpr auto kEncodeTimeout = std::chrono::seconds(30);  // one chunk takes milliseconds
constexpr unsigned kMaxThreads = 8;

}  // namespace

struct EncodePool::Worker {
  std::vector<std::pair<codec::Codec, std::size_t>> keys;  // (codec, element bytes) of encoders[i]
  std::vector<codec::Encoder> encoders;
};

unsigned EncodePool::threads_for(unsigned requested) noexcept {
  if (requested > 0) return std::min(requested, kMaxThreads);
  cpu_set_t set;
  CPU_ZERO(&set);
  const int cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
  return std::clamp<unsigned>(static_cast<unsigned>(cpus), 1, kMaxThreads);
}

EncodePool::EncodePool(unsigned threads) {
  if (threads == 0) {
    inline_ = std::make_unique<Worker>();
    return;
  }
  workers_.reserve(threads);
  threads_.reserve(threads);
  for (unsigned i = 0; i < threads; ++i) {
    workers_.push_back(std::make_unique<Worker>());
    threads_.emplace_back([this, w = workers_.back().get()] { run(*w); });
  }
}

EncodePool::~EncodePool() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void EncodePool::encode(EncodeJob& job, std::vector<std::pair<codec::Codec, std::size_t>>& keys,
                        std::vector<codec::Encoder>& encoders) {
  // One encoder per (codec, element size) a thread has seen: made once, reused for every chunk.
  const auto key = std::make_pair(job.codec, job.element_bytes);
  auto it = std::find(keys.begin(), keys.end(), key);
  if (it == keys.end()) {
    keys.push_back(key);
    encoders.emplace_back(job.codec, job.element_bytes);
    it = keys.end() - 1;
  }
  codec::Encoder& encoder = encoders[static_cast<std::size_t>(it - keys.begin())];
  auto encoded = encoder.encode(job.in);
  if (!encoded) {
    job.error = encoded.error();
    return;
  }
  job.error.reset();
  job.out.assign(encoded->begin(), encoded->end());
}

void EncodePool::submit(EncodeJob& job) {
  job.done.store(false, std::memory_order_relaxed);
  if (inline_) {
    encode(job, inline_->keys, inline_->encoders);
    encoded_.fetch_add(1, std::memory_order_relaxed);
    job.done.store(true, std::memory_order_release);
    return;
  }
  {
    const std::lock_guard lock(mutex_);
    queue_.push_back(&job);
  }
  work_.notify_one();
}

core::Result<void> EncodePool::wait(EncodeJob& job) {
  if (job.done.load(std::memory_order_acquire)) return {};
  std::unique_lock lock(mutex_);
  if (!finished_.wait_for(lock, kEncodeTimeout, [&] { return job.done.load(std::memory_order_acquire); }))
    return core::fail(core::Errc::io_error, "no encoded chunk after " +
                                                 std::to_string(std::chrono::seconds(kEncodeTimeout).count()) +
                                                 " s: an encoder thread is stuck");
  return {};
}

void EncodePool::run(Worker& worker) {
  for (;;) {
    EncodeJob* job = nullptr;
    {
      std::unique_lock lock(mutex_);
      work_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and every job handed over is done
      job = queue_.front();
      queue_.pop_front();
    }
    encode(*job, worker.keys, worker.encoders);
    encoded_.fetch_add(1, std::memory_order_relaxed);
    {
      // Under the lock, so a wait() that just found it not done cannot miss the notification.
      const std::lock_guard lock(mutex_);
      job->done.store(true, std::memory_order_release);
    }
    finished_.notify_all();
  }
}

}  // namespace weir::rec
