// Snapshots of live arenas: a writer process hammers keys, vectors and a channel while snapshots
// are taken; every value in the files is one that was written, blocks are the last ones in order,
// and slots a writer holds or left torn are recorded as such.
#include <doctest/doctest.h>

#include <cstring>

#include "key_table.hpp"
#include "payload.hpp"
#include "proc_util.hpp"
#include "run_program.hpp"
#include "scratch_dir.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/vector_store.hpp"
#include "weir/snapshot/snapshot.hpp"

using namespace weir;
using namespace weir::test;

namespace {

constexpr milliseconds kReadyTimeout{10'000};
constexpr std::uint32_t kPayloadKeys = 8;    // few, long values: each is under a write much of the time
constexpr int kSnapshots = 24;
constexpr std::uint64_t kKeyRoundsPerBlock = 16;  // writer rounds over the keys per vector and block update
constexpr std::uint32_t kVectorKeys = 8;
constexpr std::uint32_t kDim = 16;
constexpr std::uint32_t kBlock = 256;

core::ArenaOptions live_arena() {
  core::ArenaOptions o;
  o.slot_count = 256;
  o.value_bytes = 4096;
  o.vector_dim = kDim;
  o.channel_capacity = 4;
  o.channel_data_bytes = 8ULL << 20;
  return o;
}

core::ChannelSpec u32_spec(const std::string& name, std::uint32_t block, std::uint32_t ring) {
  core::ChannelSpec s;
  s.name = name;
  s.dtype = core::Dtype::u32;
  s.rate_hz = 1e6;
  s.samples_per_block = block;
  s.ring_blocks = ring;
  s.labels = {"hammer", "test"};
  return s;
}

// Publishes one block whose sample i is seq * 65536 + i.
void publish_pattern(core::ChannelWriter& w, std::uint32_t samples) {
  std::span<std::byte> out;
  if (w.claim(out) != core::ClaimStatus::ok) return;
  const std::uint64_t seq = w.next_sequence();
  for (std::uint32_t i = 0; i < samples; ++i) {
    const auto v = static_cast<std::uint32_t>(seq * 65536 + i);
    std::memcpy(out.data() + std::size_t{i} * 4, &v, 4);
  }
  w.publish(samples);
}

// The writer process: rounds over a few keys of self-checking payloads (prepared beforehand, so the
// writer spends its time inside writes), and now and then vectors whose floats are all equal, a
// counter and one channel block, until the parent sets "stop".
int hammer(const core::Arena& arena, ChildLink& link) {
  core::KvStore kv(arena);
  core::VectorStore vectors(arena);
  auto writer = core::ChannelWriter::open(arena, "hammer");
  if (!writer) return 1;
  constexpr std::size_t kVersions = 4;  // payloads per key, written in turn
  std::vector<std::array<std::byte, 4096>> payloads(kPayloadKeys * kVersions);
  std::vector<core::KeyHandle> keys(kPayloadKeys);
  for (std::uint32_t k = 0; k < kPayloadKeys; ++k)
    if (kv.resolve("pay/" + std::to_string(k), keys[k], true) != core::KvStatus::ok) return 2;
  for (std::size_t p = 0; p < payloads.size(); ++p) fill_payload(payloads[p], p);
  std::array<float, kDim> v{};
  std::uint64_t stop_bits = 0;
  core::ValueType stop_type{};
  const auto deadline = Clock::now() + std::chrono::seconds(12);
  for (std::uint64_t round = 0; Clock::now() < deadline; ++round) {
    for (std::uint32_t k = 0; k < kPayloadKeys; ++k) {
      while (kv.set(keys[k], payloads[k * kVersions + round % kVersions]) == core::KvStatus::busy) {
      }
    }
    if (round % kKeyRoundsPerBlock != 0) continue;
    v.fill(static_cast<float>(round));
    for (std::uint32_t k = 0; k < kVectorKeys; ++k) (void)vectors.set(keys[k], v, core::kDefaultWaitNs);
    std::uint64_t count = 0;
    (void)kv.atomic("count", core::AtomicOp::add, 1, count);
    publish_pattern(*writer, kBlock);
    if (round == 0) link.ready();
    if (kv.get_scalar("stop", stop_bits, stop_type) == core::KvStatus::ok) break;
    link.report[0] = round + 1;
  }
  return 0;
}

}  // namespace

TEST_SUITE("recorders.snapshot") {

TEST_CASE("snapshots of an arena a writer process hammers hold only written values and the last blocks in order" *
          doctest::timeout(60)) {
  ScratchDir dir("snap-live");
  ArenaGuard guard(unique_name("snap-live"));
  auto arena = core::Arena::create(guard.where(), live_arena());
  REQUIRE(arena);
  REQUIRE(core::create_channel(*arena, u32_spec("hammer", kBlock, 16)));
  auto consumer = core::ChannelReader::open(*arena, "hammer", core::ConsumerPolicy::lossy, "snapshot-test");
  REQUIRE(consumer);
  Child child = Child::spawn([&](ChildLink& link) { return hammer(*arena, link); });
  REQUIRE(child.wait_ready(kReadyTimeout));

  rec::SnapshotOptions options;
  std::vector<std::string> files;
  std::uint64_t retried = 0, met = 0, intact = 0, busy = 0;
  for (int i = 0; i < kSnapshots; ++i) {
    const bool whole_ring = i == kSnapshots - 1;
    options.blocks = whole_ring ? 0 : 8;
    files.push_back(dir.file("live" + std::to_string(i) + ".h5"));
    auto stats = rec::snapshot_to_hdf5(*arena, files.back(), options);
    REQUIRE_MESSAGE(stats, (stats ? "" : stats.error().what));
    CHECK(stats->keys >= kPayloadKeys + 1);
    CHECK(stats->channels == 1);
    CHECK(stats->consumers >= 1);
    CHECK(stats->vectors + stats->keys_busy >= kVectorKeys);  // a busy key's vector is not looked up
    CHECK(stats->blocks + stats->blocks_overwritten == (whole_ring ? 16U : 8U));
    retried += stats->copies_retried;
    met += stats->writers_met;
    std::uint64_t payloads = 0;
    for (const KeyValue& kv : read_key_values(files.back())) {
      if (kv.key.rfind("pay/", 0) != 0) continue;
      ++payloads;
      if (kv.owner_pid != 0 && kv.value.empty()) {  // recorded busy: the writer was preempted inside it
        ++busy;
        continue;
      }
      CHECK_MESSAGE(payload_ok(kv.value), "key " << kv.key << " in " << files.back() << " holds a torn value");
      intact += payload_ok(kv.value) ? 1 : 0;
    }
    CHECK(payloads == kPayloadKeys);
  }
  REQUIRE(core::KvStore(*arena).set_u64("stop", 1) == core::KvStatus::ok);
  Report r{};
  REQUIRE(child.read_report(r, kReadyTimeout));
  CHECK(child.wait().code == 0);
  MESSAGE("writer rounds while snapshotting: " << r[0] << "; slots found mid-write: " << met
                                               << ", copies torn by a write and retried: " << retried
                                               << ", keys recorded busy: " << busy);
  CHECK(r[0] > 0);
  CHECK(intact + busy == std::uint64_t{kSnapshots} * kPayloadKeys);
  CHECK(busy < intact);
  WARN_MESSAGE(met + retried > 0, "no snapshot met a write in progress: the race went untested this run");

  for (const std::string& file : {files.front(), files.back()}) {
    check_snapshot(file, {"--payload-prefix", "pay/", "--min-payload-keys", std::to_string(kPayloadKeys),
                          "--min-vectors", std::to_string(kVectorKeys), "--min-consumers", "1", "--channel", "hammer",
                          "--u32-pattern", "--min-blocks", "1", "--max-blocks", file == files.back() ? "16" : "8"});
  }
  const ProgramResult dump = run_program("/usr/bin/h5dump", {"-H", files[0]});
  CHECK(dump.exit_code == 0);
  CHECK(dump.out.find("DATASET \"keys\"") != std::string::npos);
  CHECK(dump.out.find("GROUP \"hammer\"") != std::string::npos);
}

TEST_CASE("a slot a live writer keeps holding is recorded busy with its pid, and a torn one torn without a value") {
  ScratchDir dir("snap-busy");
  ArenaGuard guard(unique_name("snap-busy"));
  auto arena = core::Arena::create(guard.where(), live_arena());
  REQUIRE(arena);
  core::KvStore kv(*arena);
  for (const char* key : {"held", "broken", "fine"}) REQUIRE(kv.set_text(key, "some value") == core::KvStatus::ok);
  const auto slot_of = [&](const char* key) -> core::SlotHeader& {
    core::KeyHandle h;
    REQUIRE(kv.resolve(key, h) == core::KvStatus::ok);
    return *reinterpret_cast<core::SlotHeader*>(arena->region(core::Region::slots) +
                                                std::uint64_t{h.slot} * arena->geometry().slot_stride);
  };
  // A writer (this process, alive) inside "held"; "broken" as a writer that died mid-write leaves it.
  core::SlotHeader& held = slot_of("held");
  const std::uint64_t even = held.epoch.load();
  const auto me = static_cast<std::uint32_t>(getpid());
  held.epoch.store(core::epoch_claimed(even, me));
  core::SlotHeader& broken = slot_of("broken");
  broken.meta.store(broken.meta.load() | (std::uint64_t{core::kSlotTorn} << 56));

  rec::SnapshotOptions options;
  options.busy_wait_ns = 2'000'000;
  auto stats = rec::snapshot_to_hdf5(*arena, dir.file("busy.h5"), options);
  held.epoch.store(even);
  REQUIRE_MESSAGE(stats, (stats ? "" : stats.error().what));
  CHECK(stats->keys == 3);
  CHECK(stats->keys_busy == 1);
  CHECK(stats->keys_torn == 1);
  check_snapshot(dir.file("busy.h5"), {"--min-keys", "3", "--busy-key", "held", "--busy-pid", std::to_string(me),
                                       "--torn-key", "broken"});
}

TEST_CASE("blocks N copies exactly the last N blocks of each channel, and none or more than the ring the whole ring") {
  ScratchDir dir("snap-blocks");
  ArenaGuard guard(unique_name("snap-blocks"));
  auto arena = core::Arena::create(guard.where(), live_arena());
  REQUIRE(arena);
  REQUIRE(core::create_channel(*arena, u32_spec("adc0", 64, 32)));
  REQUIRE(core::create_channel(*arena, u32_spec("quiet", 64, 32)));  // never written: an empty window
  {
    auto w = core::ChannelWriter::open(*arena, "adc0");
    REQUIRE(w);
    for (int i = 0; i < 100; ++i) publish_pattern(*w, i % 10 == 9 ? 40 : 64);  // some short blocks too
  }
  rec::SnapshotOptions ten;
  ten.blocks = 10;
  auto last_ten = rec::snapshot_to_hdf5(*arena, dir.file("ten.h5"), ten);
  REQUIRE(last_ten);
  CHECK(last_ten->blocks == 10);
  CHECK(last_ten->samples == 9 * 64 + 40);
  check_snapshot(dir.file("ten.h5"),
                 {"--channel", "adc0", "--u32-pattern", "--expect-blocks", "10", "--expect-first", "90"});
  auto whole = rec::snapshot_to_hdf5(*arena, dir.file("ring.h5"));
  REQUIRE(whole);
  CHECK(whole->blocks == 32);
  check_snapshot(dir.file("ring.h5"),
                 {"--channel", "adc0", "--u32-pattern", "--expect-blocks", "32", "--expect-first", "68"});
  rec::SnapshotOptions many;
  many.blocks = 1000;
  auto capped = rec::snapshot_to_hdf5(*arena, dir.file("many.h5"), many);
  REQUIRE(capped);
  CHECK(capped->blocks == 32);
  check_snapshot(dir.file("many.h5"), {"--channel", "quiet", "--expect-blocks", "0"});
}

}  // TEST_SUITE
