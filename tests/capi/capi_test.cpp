// The C ABI (weir_c.h): every call answers a status, bad inputs never crash, messages name the
// arena, channel or key. The arena and its channel are made with core; libweir reads them.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "arena_guard.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/channel.hpp"
#include "weir/weir_c.h"

namespace core = weir::core;

namespace {

constexpr std::uint32_t kBlock = 256;
constexpr std::uint32_t kRing = 8;

// An arena with channel "adc0" (f32, kBlock samples) holding `blocks` published blocks of value b.
struct Fixture {
  weir::test::ArenaGuard guard{weir::test::unique_name("capi")};
  core::Arena arena;
  explicit Fixture(std::uint64_t blocks = 3) {
    auto made = core::Arena::create(guard.where());
    REQUIRE(made);
    arena = std::move(*made);
    core::ChannelSpec spec;
    spec.name = "adc0";
    spec.rate_hz = 1000;
    spec.units = "V";
    spec.labels = {"adc"};
    spec.samples_per_block = kBlock;
    spec.ring_blocks = kRing;
    REQUIRE(core::create_channel(arena, spec));
    auto writer = core::ChannelWriter::open(arena, "adc0");
    REQUIRE(writer);
    for (std::uint64_t b = 0; b < blocks; ++b) {
      std::span<std::byte> out;
      REQUIRE(writer->claim(out) == core::ClaimStatus::ok);
      auto* f = reinterpret_cast<float*>(out.data());
      for (std::uint32_t i = 0; i < kBlock; ++i) f[i] = static_cast<float>(b);
      writer->publish(kBlock);
    }
  }
};

struct Attached {
  weir_arena* a = nullptr;
  explicit Attached(const std::string& where) { REQUIRE(weir_attach(where.c_str(), 0, &a) == WEIR_OK); }
  ~Attached() { (void)weir_detach(a); }
  Attached(const Attached&) = delete;
  Attached& operator=(const Attached&) = delete;
};

std::string last_error() { return weir_last_error(); }

}  // namespace

TEST_SUITE("capi.status") {

TEST_CASE("null handles and pointers answer invalid with the argument named") {
  weir_arena_info info{};
  CHECK(weir_arena_get_info(nullptr, &info) == WEIR_E_INVALID);
  CHECK(last_error().find("arena is NULL") != std::string::npos);
  CHECK(weir_attach(nullptr, 0, nullptr) == WEIR_E_INVALID);
  weir_arena* out = nullptr;
  CHECK(weir_attach(nullptr, 0, &out) == WEIR_E_INVALID);
  CHECK(out == nullptr);
  double d = 0;
  CHECK(weir_get_f64(nullptr, "k", &d) == WEIR_E_INVALID);
  CHECK(weir_set_f64(nullptr, "k", 1.0) == WEIR_E_INVALID);
  weir_block_meta meta{};
  std::uint64_t lost = 0;
  float buf[kBlock];
  CHECK(weir_reader_next(nullptr, buf, sizeof(buf), &meta, &lost, 0) == WEIR_E_INVALID);
  CHECK(weir_watcher_wait(nullptr, 0) == WEIR_E_INVALID);
  CHECK(weir_reader_interrupt(nullptr) == WEIR_E_INVALID);
  CHECK(weir_block_view_valid(nullptr) == 0);
  CHECK(weir_detach(nullptr) == WEIR_OK);
  CHECK(weir_reader_close(nullptr) == WEIR_OK);
  CHECK(weir_watcher_close(nullptr) == WEIR_OK);
  CHECK(std::string(weir_status_name(WEIR_E_TOO_SMALL)) == "too_small");
  CHECK(weir_abi_version() == WEIR_C_ABI_VERSION);
}

TEST_CASE("attaching a missing arena answers not_found naming it, and never creates it") {
  const std::string name = weir::test::unique_name("capi-missing");
  weir_arena* a = nullptr;
  CHECK(weir_attach(name.c_str(), 0, &a) == WEIR_E_NOT_FOUND);
  CHECK(a == nullptr);
  CHECK(last_error().find(name) != std::string::npos);
  CHECK_FALSE(core::Arena::open(name));
  CHECK(weir_attach(name.c_str(), 0x80, &a) == WEIR_E_INVALID);
}

TEST_CASE("an unknown channel answers not_found naming it and the arena") {
  Fixture f;
  Attached at(f.guard.where());
  weir_channel_info info{};
  CHECK(weir_channel_find(at.a, "nope", &info) == WEIR_E_NOT_FOUND);
  CHECK(last_error().find("nope") != std::string::npos);
  CHECK(last_error().find(f.guard.where()) != std::string::npos);
  weir_reader* r = nullptr;
  CHECK(weir_reader_open(at.a, "nope", WEIR_LOSSY, WEIR_START_OLDEST, 0, "t", &r) == WEIR_E_NOT_FOUND);
  CHECK(r == nullptr);
  std::uint64_t head = 0;
  CHECK(weir_channel_head(at.a, 9999, &head) == WEIR_E_NOT_FOUND);
  float lo[4], hi[4];
  CHECK(weir_channel_envelope(at.a, 9999, 0, 100, lo, hi, 4) == WEIR_E_NOT_FOUND);  // no abort on a bad index
  CHECK(weir_channel_envelope(at.a, 5, 0, 100, lo, hi, 4) == WEIR_E_NOT_FOUND);     // a free descriptor
  weir_watcher* w = nullptr;
  REQUIRE(weir_watcher_open(at.a, &w) == WEIR_OK);
  CHECK(weir_watcher_add_channel(w, "nope") == WEIR_E_NOT_FOUND);
  CHECK(weir_watcher_close(w) == WEIR_OK);
}

TEST_CASE("channels list with dtype, rate, units, block and labels") {
  Fixture f;
  Attached at(f.guard.where());
  weir_channel_info infos[2]{};
  std::uint32_t count = 0;
  REQUIRE(weir_channel_list(at.a, infos, 2, &count) == WEIR_OK);
  REQUIRE(count == 1);
  CHECK(std::string(infos[0].name) == "adc0");
  CHECK(infos[0].dtype == WEIR_F32);
  CHECK(infos[0].rate_hz == 1000.0);
  CHECK(std::string(infos[0].units) == "V");
  CHECK(infos[0].samples_per_block == kBlock);
  CHECK(infos[0].head == 3);
  char label[64];
  bool found = false;
  for (std::uint32_t id = 0; id < 64; ++id)
    if ((infos[0].label_ids >> id & 1U) != 0 && weir_label_name(at.a, id, label, sizeof(label)) == WEIR_OK)
      found = found || std::string(label) == "adc";
  CHECK(found);
  CHECK(weir_channel_list(at.a, nullptr, 0, &count) == WEIR_E_TOO_SMALL);
  CHECK(count == 1);
}

TEST_CASE("a buffer too small for a block answers too_small and consumes nothing") {
  Fixture f;
  Attached at(f.guard.where());
  std::vector<float> small(kBlock - 1);
  std::vector<weir_block_meta> metas(4);
  std::uint64_t visited = 99;
  CHECK(weir_channel_read(at.a, 0, 0, 1, small.data(), small.size() * sizeof(float), metas.data(), &visited) ==
        WEIR_E_TOO_SMALL);
  CHECK(visited == 0);
  weir_reader* r = nullptr;
  REQUIRE(weir_reader_open(at.a, "adc0", WEIR_LOSSLESS, WEIR_START_OLDEST, 0, "capi-test", &r) == WEIR_OK);
  weir_block_meta meta{};
  std::uint64_t lost = 0;
  CHECK(weir_reader_next(r, small.data(), small.size() * sizeof(float), &meta, &lost, 0) == WEIR_E_TOO_SMALL);
  std::vector<float> full(kBlock);
  REQUIRE(weir_reader_next(r, full.data(), full.size() * sizeof(float), &meta, &lost, 0) == WEIR_OK);
  CHECK(meta.sequence == 0);  // the refused call took nothing
  CHECK(full[0] == 0.0F);
  CHECK(weir_reader_close(r) == WEIR_OK);
}

TEST_CASE("a range read reports each block copied, overwritten or unwritten") {
  Fixture f(kRing + 4);  // blocks 0..3 are overwritten
  Attached at(f.guard.where());
  std::vector<float> buf(std::size_t{kBlock} * 20);
  std::vector<weir_block_meta> metas(20);
  std::uint64_t visited = 0;
  REQUIRE(weir_channel_read(at.a, 0, 0, 20, buf.data(), buf.size() * sizeof(float), metas.data(), &visited) ==
          WEIR_OK);
  REQUIRE(visited == 20);
  for (std::uint64_t s = 0; s < 20; ++s) {
    const std::uint32_t want = s < 4 ? WEIR_BLOCK_OVERWRITTEN : s < kRing + 4 ? WEIR_BLOCK_OK : WEIR_BLOCK_UNWRITTEN;
    CHECK(metas[s].state == want);
    if (want == WEIR_BLOCK_OK) CHECK(buf[metas[s].offset_bytes / sizeof(float)] == static_cast<float>(s));
  }
}

TEST_CASE("keys answer type mismatches, missing keys and small buffers by status") {
  Fixture f;
  Attached at(f.guard.where());
  REQUIRE(weir_set_text(at.a, "t", "hello") == WEIR_OK);
  REQUIRE(weir_set_f64(at.a, "f", 2.5) == WEIR_OK);
  double d = 0;
  CHECK(weir_get_f64(at.a, "t", &d) == WEIR_E_TYPE);
  CHECK(last_error().find("text") != std::string::npos);
  REQUIRE(weir_get_f64(at.a, "f", &d) == WEIR_OK);
  CHECK(d == 2.5);
  std::int64_t i = 0;
  CHECK(weir_get_i64(at.a, "f", &i) == WEIR_E_TYPE);
  CHECK(weir_get_f64(at.a, "missing", &d) == WEIR_E_NOT_FOUND);
  CHECK(last_error().find("missing") != std::string::npos);
  char small[2];
  weir_value_info info{};
  CHECK(weir_get(at.a, "t", small, sizeof(small), &info) == WEIR_E_TOO_SMALL);
  CHECK(info.length == 5);
  CHECK(weir_set(at.a, "x", WEIR_VALUE_ARRAY, "ab", 2) == WEIR_E_INVALID);
  CHECK(weir_set(at.a, "x", WEIR_VALUE_I64, "ab", 2) == WEIR_E_INVALID);
  const std::uint32_t dims[2] = {2, 3};
  const float six[6] = {1, 2, 3, 4, 5, 6};
  CHECK(weir_set_array(at.a, "arr", WEIR_F32, 2, dims, six, 5 * sizeof(float)) == WEIR_E_INVALID);
  REQUIRE(weir_set_array(at.a, "arr", WEIR_F32, 2, dims, six, sizeof(six)) == WEIR_OK);
  REQUIRE(weir_key_info(at.a, "arr", &info) == WEIR_OK);
  CHECK(info.type == WEIR_VALUE_ARRAY);
  CHECK(info.elem_dtype == WEIR_F32);
  CHECK(info.rank == 2);
  CHECK(info.dims[1] == 3);
  std::vector<char> big(static_cast<std::size_t>(1) << 20);
  CHECK(weir_set(at.a, "big", WEIR_VALUE_BYTES, big.data(), big.size()) == WEIR_E_TOO_LARGE);
  CHECK(weir_set_text(at.a, "", "x") == WEIR_E_INVALID);
}

TEST_CASE("a read-only attach refuses writes and registration with permission") {
  Fixture f;
  weir_arena* a = nullptr;
  REQUIRE(weir_attach(f.guard.where().c_str(), WEIR_ATTACH_READ_ONLY, &a) == WEIR_OK);
  CHECK(weir_set_f64(a, "k", 1.0) == WEIR_E_PERMISSION);
  weir_reader* r = nullptr;
  CHECK(weir_reader_open(a, "adc0", WEIR_LOSSY, WEIR_START_OLDEST, 0, "t", &r) == WEIR_E_PERMISSION);
  std::uint64_t head = 0;
  CHECK(weir_channel_head(a, 0, &head) == WEIR_OK);
  CHECK(head == 3);
  CHECK(weir_detach(a) == WEIR_OK);
}

TEST_CASE("a wait ends with timeout, and with interrupted when another thread interrupts it") {
  Fixture f;
  Attached at(f.guard.where());
  weir_watcher* w = nullptr;
  REQUIRE(weir_watcher_open(at.a, &w) == WEIR_OK);
  CHECK(weir_watcher_wait(w, 1'000'000) == WEIR_E_INVALID);  // nothing subscribed
  REQUIRE(weir_watcher_add_key(w, "k") == WEIR_OK);
  CHECK(weir_watcher_wait(w, 1'000'000) == WEIR_TIMEOUT);
  std::thread interrupter([w]() { (void)weir_watcher_interrupt(w); });
  interrupter.join();
  CHECK(weir_watcher_wait(w, 3'600'000'000'000) == WEIR_INTERRUPTED);  // an hour, cut short
  REQUIRE(weir_set_i64(at.a, "k", 7) == WEIR_OK);
  CHECK(weir_watcher_wait(w, 3'600'000'000'000) == WEIR_OK);
  weir_value_info info{};
  REQUIRE(weir_key_info(at.a, "k", &info) == WEIR_OK);
  std::thread writer([&at]() { (void)weir_set_i64(at.a, "k", 8); });
  CHECK(weir_watcher_wait_key(w, "k", info.version, 3'600'000'000'000, &info) == WEIR_OK);
  writer.join();
  std::int64_t v = 0;
  REQUIRE(weir_get_i64(at.a, "k", &v) == WEIR_OK);
  CHECK(v == 8);
  CHECK(weir_watcher_close(w) == WEIR_OK);
}

TEST_CASE("a reader and a watcher outlive a detached arena handle") {
  Fixture f;
  weir_arena* a = nullptr;
  REQUIRE(weir_attach(f.guard.where().c_str(), 0, &a) == WEIR_OK);
  weir_reader* r = nullptr;
  REQUIRE(weir_reader_open(a, "adc0", WEIR_LOSSY, WEIR_START_OLDEST, 0, "t", &r) == WEIR_OK);
  CHECK(weir_detach(a) == WEIR_OK);
  std::vector<float> buf(kBlock);
  weir_block_view view{};
  std::uint64_t lost = 0;
  REQUIRE(weir_reader_view(r, &view, &lost, 0) == WEIR_OK);
  CHECK(view.bytes == kBlock * sizeof(float));
  CHECK(weir_block_view_valid(&view) == 1);
  int valid = 0;
  CHECK(weir_reader_release(r, &view, &valid) == WEIR_OK);
  CHECK(valid == 1);
  weir_reader_stats stats{};
  REQUIRE(weir_reader_get_stats(r, &stats) == WEIR_OK);
  CHECK(stats.blocks_read == 1);
  CHECK(weir_reader_close(r) == WEIR_OK);
}

TEST_CASE("vector calls on an arena without vectors answer unsupported") {
  weir::test::ArenaGuard guard(weir::test::unique_name("capi-novec"));
  core::ArenaOptions options;
  options.vector_dim = 0;
  auto arena = core::Arena::create(guard.where(), options);
  REQUIRE(arena);
  Attached at(guard.where());
  std::uint32_t dim = 99;
  REQUIRE(weir_vector_dim(at.a, &dim) == WEIR_OK);
  CHECK(dim == 0);
  const float q[1] = {1};
  weir_vector_hit hits[1];
  std::uint32_t count = 0;
  CHECK(weir_vector_search(at.a, q, 1, WEIR_COSINE, hits, 1, &count) == WEIR_E_UNSUPPORTED);
}

}  // TEST_SUITE
