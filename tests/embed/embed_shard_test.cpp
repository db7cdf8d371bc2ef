// The embed shard through the real host, across processes: `weir shard ARENA embed` loads the built
// plugin and the built model, a test writer feeds a frame channel with simulated pulses of known
// classes, and the test reads the vectors and their metadata back from the ring keys and searches
// them with VectorStore::search. Skips, saying so, only when the plugin or the model was not built
// (no libtorch or python3-torch).
#include <doctest/doctest.h>
#include <signal.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "host_test_util.hpp"
#include "pulse_sim.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/signals.hpp"
#include "weir/core/vector_store.hpp"

namespace {

using namespace weir;
using test::contains;
using test::Process;

constexpr std::uint32_t kDims = 32;        // the built model's output
constexpr std::uint32_t kSlots = 2048;     // KV slots, hence vector rows, of the test arenas
constexpr double kRate = 1e6;              // samples per second of the simulated detector
constexpr std::uint64_t kStartNs = 1'700'000'000'000'000'000ULL;
constexpr std::uint64_t kPulseSpacingNs = 1'000'000;  // one pulse per ms
const std::string kInput = "det.events";

bool built() {
  const bool plugin = std::filesystem::exists(WEIR_EMBED_PLUGIN);
  const bool model = std::filesystem::exists(WEIR_EMBED_MODEL);
  if (!plugin || !model) {
    MESSAGE("SKIPPED: the embed plugin or its model was not built (needs libtorch-dev and python3-torch): ",
            WEIR_EMBED_PLUGIN, (plugin ? " present" : " missing"), ", ", WEIR_EMBED_MODEL,
            (model ? " present" : " missing"));
    return false;
  }
  return true;
}

// A scratch arena with vectors of `dim` floats, removed however the test ends.
class VectorArena {
 public:
  explicit VectorArena(std::uint32_t dim) {
    name_ = "embedtest" + std::to_string(getpid()) + "n" + std::to_string(counter_++);
    core::ArenaOptions o;
    o.vector_dim = dim;
    o.slot_count = kSlots;
    o.value_bytes = 256;
    auto arena = core::Arena::create(name_, o);
    REQUIRE(arena);
    arena_ = std::move(*arena);
  }
  ~VectorArena() {
    arena_.close();
    std::error_code ignored;
    std::filesystem::remove("/dev/shm/weir." + name_, ignored);
  }
  VectorArena(const VectorArena&) = delete;
  VectorArena& operator=(const VectorArena&) = delete;
  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] const core::Arena& arena() const { return arena_; }

 private:
  static inline int counter_ = 0;
  std::string name_;
  core::Arena arena_;
};

// A frame channel of one `elements`-long capture per block, as the trigger shard makes them.
void make_frame_channel(const core::Arena& arena, std::uint32_t elements, std::uint32_t ring_blocks) {
  core::ChannelSpec spec;
  spec.name = kInput;
  spec.dtype = core::Dtype::f32;
  spec.rate_hz = kRate;
  spec.samples_per_block = elements;
  spec.ring_blocks = ring_blocks;
  spec.frame.frames_per_block = 1;
  spec.frame.frame_elements = elements;
  spec.frame.axis = core::FrameAxis{"time", "s", -64.0 / kRate, 1.0 / kRate, ""};
  spec.wait_timeout_ns = 10'000'000'000;
  REQUIRE(core::create_channel(arena, spec));
}

// Publishes one pulse per block; returns each block's class, by sequence.
std::vector<int> write_pulses(const core::Arena& arena, std::uint32_t count, std::uint64_t seed) {
  auto writer = core::ChannelWriter::open(arena, kInput);
  REQUIRE(writer);
  std::mt19937_64 rng(seed);
  std::vector<int> classes;
  for (std::uint32_t n = 0; n < count; ++n) {
    const int cls = static_cast<int>(n % test::kPulseClasses);
    const std::vector<float> pulse = test::simulate_pulse(cls, rng);
    std::span<std::byte> block;
    REQUIRE(writer->claim(block) == core::ClaimStatus::ok);
    std::memcpy(block.data(), pulse.data(), pulse.size() * sizeof(float));
    writer->publish(test::kPulseLength, kStartNs + n * kPulseSpacingNs);
    classes.push_back(cls);
  }
  return classes;
}

std::uint64_t counter_key(const core::Arena& arena, const std::string& key) {
  std::uint64_t bits = 0;
  core::ValueType type{};
  return core::KvStore(arena).get_scalar(key, bits, type) == core::KvStatus::ok ? bits : 0;
}

std::array<std::int64_t, 4> meta_of(const core::Arena& arena, const std::string& key) {
  std::array<std::int64_t, 4> words{};
  core::ValueInfo info;
  const auto st = core::KvStore(arena).get(key, std::as_writable_bytes(std::span(words)), info);
  REQUIRE(st == core::KvStatus::ok);
  CHECK(info.type == core::ValueType::array);
  CHECK(info.array.elem == core::Dtype::i64);
  CHECK(info.array.dims[0] == 4);
  return words;
}

std::string ring_key(std::uint32_t i) { return "pulses/" + kInput + "/" + std::to_string(i); }

}  // namespace

TEST_SUITE("embed.shard") {

TEST_CASE("pulses become ring vectors with their metadata, overwritten after capacity, and cluster by class" *
          doctest::timeout(60)) {
  if (!built()) return;
  constexpr std::uint32_t kPulses = 240, kCapacity = 200;
  VectorArena scratch(kDims);
  const core::Arena& arena = scratch.arena();
  make_frame_channel(arena, test::kPulseLength, 256);
  auto host = Process::weir({"shard", scratch.name(), "embed", "--input", kInput, "--policy", "lossless", "--param",
                             "capacity=" + std::to_string(kCapacity), "--param", "batch=16"});
  REQUIRE(test::wait_until([&] {
    const auto c = test::consumer_info(arena, kInput, "embed." + kInput);
    return c.has_value() && c->alive && !c->kind.empty();
  }));
  auto watcher = core::Watcher::create(arena);
  REQUIRE(watcher);
  REQUIRE(watcher->subscribe_label("pulses"));
  const std::vector<int> classes = write_pulses(arena, kPulses, 29);
  // The last 240 mod 16 pulses wait for no full batch: the host's idle call runs them.
  REQUIRE(test::wait_until([&] { return counter_key(arena, kInput + ".embedded") == kPulses; }, std::chrono::seconds(30)));
  CHECK(counter_key(arena, kInput + ".embed_dropped") == 0);

  // Key i holds the last pulse n with n mod capacity == i: pulses 200..239 overwrote keys 0..39.
  core::VectorStore vectors(arena);
  REQUIRE(vectors.dim() == kDims);
  std::vector<int> class_of_slot(kSlots, -1);
  for (std::uint32_t i = 0; i < kCapacity; ++i) {
    const std::uint64_t n = i < kPulses - kCapacity ? i + kCapacity : i;
    const auto meta = meta_of(arena, ring_key(i));
    CHECK(meta[0] == static_cast<std::int64_t>(kStartNs + n * kPulseSpacingNs));  // the pulse's realtime_ns
    CHECK(meta[1] == static_cast<std::int64_t>(n));                               // its block's sequence
    CHECK(meta[2] == 0);                                                           // frame 0 of its block
    CHECK(meta[3] == static_cast<std::int64_t>(n * test::kPulseLength));          // its first sample
    std::array<float, kDims> v{};
    REQUIRE(vectors.get(ring_key(i), v) == core::VectorStatus::ok);
    double norm = 0;
    for (const float x : v) norm += double{x} * x;
    CHECK(norm == doctest::Approx(1.0).epsilon(1e-3));  // the model's output is L2-normalised
    core::KeyHandle h;
    REQUIRE(core::KvStore(arena).resolve(ring_key(i), h) == core::KvStatus::ok);
    class_of_slot[h.slot] = classes[n];
  }
  core::KeyHandle past;
  CHECK(core::KvStore(arena).resolve(ring_key(kCapacity), past) == core::KvStatus::not_found);  // exactly `capacity` keys

  // Same-class nearest neighbour by cosine, leave-one-out, through the arena's exact search.
  std::uint32_t same = 0, asked = 0;
  for (std::uint32_t i = 0; i < kCapacity; ++i) {
    std::array<float, kDims> q{};
    REQUIRE(vectors.get(ring_key(i), q) == core::VectorStatus::ok);
    std::array<core::VectorHit, 2> hits{};
    std::size_t count = 0;
    REQUIRE(vectors.search(q, core::SearchOptions{}, hits, count) == core::VectorStatus::ok);
    REQUIRE(count == 2);
    core::KeyHandle self;
    REQUIRE(core::KvStore(arena).resolve(ring_key(i), self) == core::KvStatus::ok);
    const core::VectorHit& other = hits[0].slot == self.slot ? hits[1] : hits[0];
    REQUIRE(class_of_slot[other.slot] >= 0);
    same += class_of_slot[other.slot] == class_of_slot[self.slot] ? 1U : 0U;
    ++asked;
  }
  const double accuracy = static_cast<double>(same) / asked;
  MESSAGE("same-class nearest-neighbour accuracy (cosine, leave-one-out, VectorStore::search): ", accuracy,
          " over ", asked, " pulses");
  CHECK(accuracy >= 0.9);

  // Every ring key carries the partition label: the label's change log saw writes to every one.
  std::vector<std::uint32_t> logged;
  const std::uint64_t lost_entries = watcher->drain([&](const core::Change& c) { logged.push_back(c.slot); });
  if (lost_entries == 0) {
    for (std::uint32_t i = 0; i < kCapacity; ++i) {
      core::KeyHandle h;
      REQUIRE(core::KvStore(arena).resolve(ring_key(i), h) == core::KvStatus::ok);
      CHECK(std::find(logged.begin(), logged.end(), h.slot) != logged.end());
    }
  } else {
    MESSAGE("the label's change log wrapped (", lost_entries, " entries lost): membership not checked");
  }
  host->signal(SIGTERM);
  const auto status = host->wait();
  CHECK(status.exited);
  CHECK(status.code == test::kExitOk);
  const auto row_text = host->out();
  CHECK(contains(row_text, "blocks in " + std::to_string(kPulses)));
  CHECK(contains(row_text, "lost 0"));
}

TEST_CASE("a lossy embed host that is lapped counts every lost block, and embeds every block it read" *
          doctest::timeout(60)) {
  if (!built()) return;
  constexpr std::uint32_t kPulses = 3000;
  VectorArena scratch(kDims);
  const core::Arena& arena = scratch.arena();
  make_frame_channel(arena, test::kPulseLength, 8);
  auto host = Process::weir({"shard", scratch.name(), "embed", "--input", kInput, "--param", "capacity=64", "--param",
                             "batch=64", "--json"});
  REQUIRE(test::wait_until([&] {
    const auto c = test::consumer_info(arena, kInput, "embed." + kInput);
    return c.has_value() && c->alive && !c->kind.empty();
  }));
  write_pulses(arena, kPulses, 7);  // far faster than one core embeds: the ring of 8 laps the host
  REQUIRE(test::wait_until([&] {
    const auto c = test::consumer_info(arena, kInput, "embed." + kInput);
    return c && c->blocks_read + c->blocks_lost == kPulses;
  }, std::chrono::seconds(30)));
  REQUIRE(test::wait_until([&] {
    const auto c = test::consumer_info(arena, kInput, "embed." + kInput);
    return counter_key(arena, kInput + ".embedded") + counter_key(arena, kInput + ".embed_dropped") == c->blocks_read;
  }));
  const auto row = test::consumer_info(arena, kInput, "embed." + kInput);
  REQUIRE(row);
  CHECK(row->blocks_lost > 0);
  const std::uint64_t embedded = counter_key(arena, kInput + ".embedded");
  MESSAGE("lapped: read ", row->blocks_read, ", lost ", row->blocks_lost, ", embedded ", embedded);
  CHECK(counter_key(arena, kInput + ".embed_dropped") == 0);
  // Exact: every block read intact got its vector; every lapped or torn one is counted lost, and a
  // torn one's window, already copied, is dropped by the shard (WEIR_SHARD_PREV_TORN).
  CHECK(embedded == row->blocks_read);
  host->signal(SIGTERM);
  CHECK(host->wait().code == test::kExitOk);
}

TEST_CASE("shapes that do not match the model are refused at configure, naming both") {
  if (!built()) return;
  SUBCASE("the arena's vectors have other dims than the model's output") {
    VectorArena scratch(48);
    make_frame_channel(scratch.arena(), test::kPulseLength, 8);
    const auto r = test::run_weir_once({"shard", scratch.name(), "embed", "--input", kInput});
    CHECK(r.status.code == test::kExitError);
    CHECK(contains(r.err, "maps [n, 256] windows to [n, 32] vectors"));
    CHECK(contains(r.err, "partition 'pulses' lives in an arena whose vectors have 48 dims"));
  }
  SUBCASE("the arena has no vectors") {
    VectorArena scratch(0);
    make_frame_channel(scratch.arena(), test::kPulseLength, 8);
    const auto r = test::run_weir_once({"shard", scratch.name(), "embed", "--input", kInput});
    CHECK(r.status.code == test::kExitError);
    CHECK(contains(r.err, "holds no vectors (create it with a vector dim of 32)"));
  }
  SUBCASE("a ring larger than the arena's slots, refused without leaving keys behind") {
    VectorArena scratch(kDims);
    make_frame_channel(scratch.arena(), test::kPulseLength, 8);
    const auto r = test::run_weir_once({"shard", scratch.name(), "embed", "--input", kInput, "--param",
                                        "capacity=" + std::to_string(2 * kSlots)});
    CHECK(r.status.code == test::kExitError);
    CHECK(contains(r.err, "of the ring's 4096"));
    CHECK(contains(r.err, "create the arena with more --slots, or give a smaller capacity"));
    core::KeyHandle h;
    CHECK(core::KvStore(scratch.arena()).resolve(ring_key(0), h) == core::KvStatus::not_found);
  }
  SUBCASE("the input's frames are not the model's input length") {
    VectorArena scratch(kDims);
    make_frame_channel(scratch.arena(), 512, 8);
    const auto r = test::run_weir_once({"shard", scratch.name(), "embed", "--input", kInput});
    CHECK(r.status.code == test::kExitError);
    CHECK(contains(r.err, "takes windows of 256 samples, but the input channel 'det.events' has frames of 512 elements"));
  }
  SUBCASE("an input_length the model's JSON contradicts") {
    VectorArena scratch(kDims);
    make_frame_channel(scratch.arena(), test::kPulseLength, 8);
    const auto r = test::run_weir_once({"shard", scratch.name(), "embed", "--input", kInput, "--param", "input_length=128"});
    CHECK(r.status.code == test::kExitError);
    CHECK(contains(r.err, "input_length=128, but the model"));
    CHECK(contains(r.err, "takes windows of 256 samples"));
  }
}

}  // TEST_SUITE
