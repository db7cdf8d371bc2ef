#pragma once
// What the Kafka tests share: librdkafka's mock cluster in the test process (3 brokers on
// loopback), arenas with one channel, key reads, block-by-block comparison of two channels, and a
// far channel read back as runs of data and of gap reasons.
#include <doctest/doctest.h>

#include <array>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "arena_guard.hpp"
#include "background_weir.hpp"
#include "run_weir.hpp"
#include "weir/core/block_copier.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/kafka/mock_cluster.hpp"

namespace weir::test {

constexpr std::chrono::seconds kSettle{20};  // the longest any Kafka state may take to come about

/// A 3-broker mock cluster with `topic` made with 1 partition, replication 3, led by broker 1.
inline kafka::MockCluster make_cluster(const std::string& topic) {
  auto cluster = kafka::MockCluster::start(3);
  REQUIRE_MESSAGE(cluster, (cluster ? std::string() : cluster.error().what));  // the message is read on success too (-s)
  REQUIRE(cluster->create_topic(topic, 1, 3));
  REQUIRE(cluster->set_leader(topic, 0, 1));
  return std::move(*cluster);
}

inline core::Arena make_arena(const std::string& where) {
  auto arena = core::Arena::create(where);
  REQUIRE(arena);
  return std::move(*arena);
}

/// A channel as `weir sim --rate RATE --block BLOCK` makes it (f32, units V), ring of `ring` blocks.
inline void make_channel(const core::Arena& arena, const std::string& name, std::uint32_t block, std::uint32_t ring,
                         double rate_hz = 1e6) {
  core::ChannelSpec spec;
  spec.name = name;
  spec.rate_hz = rate_hz;
  spec.units = "V";
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

/// Blocks published so far in a channel (its head), 0 while it does not exist.
inline std::uint64_t head_of(const core::Arena& arena, const std::string& channel) {
  auto copier = core::BlockCopier::open(arena, channel);
  return copier ? copier->head() : 0;
}

/// Checks blocks [first, blocks) of channel `a_name` in `a` and `b_name` in `b` are the same samples,
/// sample counts and times.
inline void check_identical_as(const core::Arena& a_arena, const std::string& a_name, const core::Arena& b_arena,
                               const std::string& b_name, std::uint64_t first, std::uint64_t blocks) {
  auto a = core::BlockCopier::open(a_arena, a_name);
  auto b = core::BlockCopier::open(b_arena, b_name);
  REQUIRE(a);
  REQUIRE(b);
  REQUIRE(a->block_bytes() == b->block_bytes());
  std::vector<std::byte> x(a->block_bytes()), y(b->block_bytes());
  std::uint64_t differ = 0;
  for (std::uint64_t s = first; s < blocks; ++s) {
    core::BlockRecord ra, rb;
    REQUIRE(a->copy(s, x, ra) == core::BlockStatus::ok);
    REQUIRE(b->copy(s, y, rb) == core::BlockStatus::ok);
    const std::size_t bytes = std::size_t{ra.samples} * 4;
    if (ra.samples != rb.samples || ra.realtime_ns != rb.realtime_ns || std::memcmp(x.data(), y.data(), bytes) != 0)
      ++differ;
  }
  CHECK_MESSAGE(differ == 0, differ << " of " << blocks - first << " blocks differ");
}

/// Checks blocks [0, blocks) of two channels of the same name are the same samples, sample counts and times.
inline void check_identical(const core::Arena& near, const core::Arena& far, const std::string& channel,
                            std::uint64_t blocks) {
  check_identical_as(near, channel, far, channel, 0, blocks);
}

/// Checks blocks [0, blocks) of `near_channel` in `near` and `far_channel` in `far` are the same.
inline void check_identical(const core::Arena& near, const core::Arena& far, const std::string& near_channel,
                            const std::string& far_channel, std::uint64_t blocks) {
  check_identical_as(near, near_channel, far, far_channel, 0, blocks);
}

/// A channel read from its first block: data blocks and lost blocks per reason.
struct ReadBack {
  std::uint64_t data = 0;
  std::array<std::uint64_t, core::kGapReasonCount> lost{};
  [[nodiscard]] std::uint64_t total() const {
    std::uint64_t n = data;
    for (std::uint64_t l : lost) n += l;
    return n;
  }
};

inline ReadBack read_back(const core::Arena& arena, const std::string& channel, std::uint64_t blocks) {
  auto reader = core::ChannelReader::open(arena, channel, core::ConsumerPolicy::lossy, "kafka-test",
                                          core::StartAt::sequence, 0);
  REQUIRE(reader);
  ReadBack r;
  while (r.total() < blocks) {
    core::BlockView view;
    std::uint64_t lost = 0;
    const core::NextStatus st = reader->next(view, lost);
    if (st == core::NextStatus::empty) break;
    if (st == core::NextStatus::lost) {
      r.lost[static_cast<std::size_t>(core::lost_reason(view.flags))] += lost;
    } else if (reader->done(view)) {
      ++r.data;
    }
  }
  return r;
}

/// Publishes n full blocks, each carrying its own sequence in its first 8 bytes.
inline void publish_numbered(core::ChannelWriter& w, std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) {
    std::span<std::byte> slot;
    REQUIRE(w.claim(slot) == core::ClaimStatus::ok);
    const std::uint64_t seq = w.next_sequence();
    std::memcpy(slot.data(), &seq, sizeof seq);
    w.publish(w.samples_per_block());
  }
}

/// Publishes n blocks ten at a time, each ten sent and delivered by sender NAME before the next, so
/// a producer queue of 50 takes them all.
inline void publish_paced(const core::Arena& near, core::ChannelWriter& w, const std::string& name, std::uint64_t n,
                          const BackgroundWeir& send) {
  for (std::uint64_t i = 0; i < n; i += 10) {
    publish_numbered(w, 10);
    REQUIRE_MESSAGE(eventually([&] {
                      const std::uint64_t sent = key_u64(near, "kafka." + name + ".sent");
                      return sent + key_u64(near, "kafka." + name + ".dropped") == w.next_sequence() &&
                             key_u64(near, "kafka." + name + ".delivered") == sent;
                    },
                               kSettle),
                    send.output());
  }
}

}  // namespace weir::test
