#pragma once
// What the bridge tests share: a free TCP port, arenas with one channel, key and counter reads, a
// far-side consumer that counts every block it read or lost, and block-by-block comparison.
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "arena_guard.hpp"
#include "background_weir.hpp"
#include "run_weir.hpp"
#include "scratch_dir.hpp"
#include "weir/core/block_copier.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/kv_store.hpp"

namespace weir::test {

constexpr std::chrono::seconds kSettle{30};  // the longest any bridge state may take to come about

/// A TCP port nothing listens on now (the kernel's pick for port 0).
inline int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  socklen_t len = sizeof a;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
  ::close(fd);
  return ntohs(a.sin_port);
}

inline core::Arena make_arena(const std::string& where) {
  auto arena = core::Arena::create(where);
  REQUIRE(arena);
  return std::move(*arena);
}

/// A channel as `weir sim --rate RATE --block BLOCK` makes it, with a ring of `ring` blocks.
inline void make_channel(const core::Arena& arena, const std::string& name, std::uint32_t block, std::uint32_t ring,
                         double rate_hz = 1e6) {
  core::ChannelSpec spec;
  spec.name = name;
  spec.rate_hz = rate_hz;
  spec.units = "V";
  spec.labels = {"adc"};
  spec.samples_per_block = block;
  spec.ring_blocks = ring;
  REQUIRE(core::create_channel(arena, spec));
}

/// A u64 key's value, 0 while it is missing.
inline std::uint64_t key_u64(const core::Arena& arena, const std::string& key) {
  core::KvStore kv(arena);
  std::uint64_t bits = 0;
  core::ValueType type{};
  return kv.get_scalar(key, bits, type) == core::KvStatus::ok ? bits : 0;
}

inline std::string key_text(const core::Arena& arena, const std::string& key) {
  core::KvStore kv(arena);
  char buf[64] = {};
  core::ValueInfo info;
  if (kv.get(key, std::as_writable_bytes(std::span(buf)), info) != core::KvStatus::ok) return "";
  return std::string(buf, info.length);
}

/// Blocks published so far in a channel (its head), 0 while it does not exist.
inline std::uint64_t head_of(const core::Arena& arena, const std::string& channel) {
  auto copier = core::BlockCopier::open(arena, channel);
  return copier ? copier->head() : 0;
}

/// A far-side consumer in a thread: follows a channel from its first block (once it exists) and
/// counts every block it read and every block it lost (gaps included), as a recorder would.
class FarFollower {
 public:
  FarFollower(const core::Arena& arena, std::string channel)
      : thread_([this, &arena, channel = std::move(channel)] { run(arena, channel); }) {}
  ~FarFollower() { stop(); }
  FarFollower(const FarFollower&) = delete;
  FarFollower& operator=(const FarFollower&) = delete;
  void stop() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
  }
  [[nodiscard]] std::uint64_t read() const { return read_.load(); }
  [[nodiscard]] std::uint64_t lost() const { return lost_.load(); }

 private:
  void run(const core::Arena& arena, const std::string& channel) {
    std::optional<core::ChannelReader> reader;
    while (!stop_.load()) {
      if (!reader) {
        if (auto r = core::ChannelReader::open(arena, channel, core::ConsumerPolicy::lossless, "far-follower",
                                               core::StartAt::sequence, 0))
          reader.emplace(std::move(*r));
        else
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
        continue;
      }
      core::BlockView view;
      std::uint64_t lost = 0;
      switch (reader->next(view, lost)) {
        case core::NextStatus::ok:
          if (reader->done(view)) {
            read_.fetch_add(1);
          } else {
            lost_.fetch_add(1);
          }
          break;
        case core::NextStatus::lost:
          lost_.fetch_add(lost);
          break;
        case core::NextStatus::empty:
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
          break;
      }
    }
  }
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> read_{0}, lost_{0};
  std::thread thread_;
};

/// Keygen into dir: NAME.key and NAME.pub.
inline void keygen(const ScratchDir& dir, const std::string& name) {
  const RunResult r = run_weir({"bridge", "keygen", dir.file(name)});
  REQUIRE_MESSAGE(r.exit_code == kExitOk, r.err);
}

}  // namespace weir::test
