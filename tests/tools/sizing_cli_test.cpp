// `weir create --vectors N` / `--keys N`: an arena that holds the count it names (and its headroom),
// says what it costs in memory, and a plan that creates nothing.
#include <doctest/doctest.h>

#include <unistd.h>

#include <random>
#include <string>
#include <vector>

#include "json.hpp"
#include "run_weir.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/arena_sizing.hpp"
#include "weir/core/vector_store.hpp"

using namespace weir::test;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string unique_arena(const char* what) {
  static int counter = 0;
  return std::string("size") + what + std::to_string(getpid()) + "_" + std::to_string(counter++);
}

struct Removed {
  explicit Removed(std::string n) : name(std::move(n)) { (void)weir::core::Arena::remove(name); }
  ~Removed() { (void)weir::core::Arena::remove(name); }
  std::string name;
};

}  // namespace

TEST_SUITE("tools.sizing") {

TEST_CASE("weir create --vectors N --dim D holds N keys with vectors and its headroom, and reports the memory") {
  const Removed arena(unique_arena("vec"));
  const auto r = run_weir({"create", arena.name, "--vectors", "3000", "--dim", "16", "--json"});
  REQUIRE(r.exit_code == kExitOk);
  const auto j = parse_json(r.out);
  REQUIRE(j.is_object());
  CHECK(j["sized_keys"] == 3000);
  CHECK(j["headroom_keys"] == weir::core::kSizedHeadroomKeys);
  CHECK(j["geometry"]["slot_count"] == weir::core::sized_slot_count(3000));
  CHECK(j["geometry"]["max_probe"] == weir::core::kSizedMaxProbe);
  CHECK(j["geometry"]["value_bytes"] == weir::core::kVectorValueBytes);
  CHECK(j["geometry"]["vector_dim"] == 16);
  const auto& memory = j["memory"];
  CHECK(memory["total"] == j["bytes"]);
  CHECK(memory["vectors"] == weir::core::sized_slot_count(3000) * weir::core::vector_row_stride(16));
  CHECK(memory["slots"].get<std::uint64_t>() + memory["vectors"].get<std::uint64_t>() +
            memory["other"].get<std::uint64_t>() ==
        memory["total"].get<std::uint64_t>());

  auto opened = weir::core::Arena::open(arena.name);
  REQUIRE(opened);
  weir::core::VectorStore vs(*opened);
  std::mt19937_64 rng(11);
  const std::vector<float> v(16, 0.5F);
  for (std::uint64_t i = 0; i < 3000 + weir::core::kSizedHeadroomKeys; ++i)
    REQUIRE(vs.set("k/" + std::to_string(rng()), v) == weir::core::VectorStatus::ok);

  const auto text = run_weir({"info", arena.name});
  CHECK(text.exit_code == kExitOk);
}

TEST_CASE("weir create prints the memory it costs; --keys makes no vector rows unless --dim; --value-bytes is kept") {
  const Removed keys(unique_arena("keys"));
  const auto r = run_weir({"create", keys.name, "--keys", "500"});
  REQUIRE(r.exit_code == kExitOk);
  CHECK(contains(r.out, "holds"));
  CHECK(contains(r.out, "500 keys and 64 more"));
  CHECK(contains(r.out, "vector rows 0 B"));
  {
    auto opened = weir::core::Arena::open(keys.name, {.read_only = true});
    REQUIRE(opened);
    CHECK(opened->geometry().vector_count == 0);
    CHECK(opened->geometry().value_bytes == weir::core::kDefaultValueBytes);
    CHECK(opened->geometry().slot_count == weir::core::sized_slot_count(500));
  }
  const Removed wide(unique_arena("wide"));
  const auto w = run_weir({"create", wide.name, "--vectors", "100", "--dim", "8", "--value-bytes", "2048", "--json"});
  REQUIRE(w.exit_code == kExitOk);
  CHECK(parse_json(w.out)["geometry"]["value_bytes"] == 2048);
}

TEST_CASE("weir create --plan prints the geometry and the memory and creates nothing") {
  const Removed arena(unique_arena("plan"));
  const auto r = run_weir({"create", arena.name, "--vectors", "100000", "--dim", "768", "--plan", "--json"});
  REQUIRE(r.exit_code == kExitOk);
  const auto j = parse_json(r.out);
  REQUIRE(j.is_object());
  CHECK(j["planned"] == arena.name);
  CHECK(j["geometry"]["slot_count"] == weir::core::sized_slot_count(100000));
  CHECK(j["memory"]["vectors"] == weir::core::sized_slot_count(100000) * weir::core::vector_row_stride(768));
  CHECK_FALSE(weir::core::Arena::open(arena.name));
  const auto text = run_weir({"create", arena.name, "--vectors", "100000", "--dim", "768", "--plan"});
  REQUIRE(text.exit_code == kExitOk);
  CHECK(contains(text.out, "nothing made"));
  CHECK(contains(text.out, "memory"));
  CHECK_FALSE(weir::core::Arena::open(arena.name));
}

TEST_CASE("sizing by count refuses --slots and --max-probe beside it, and counts out of range") {
  const Removed arena(unique_arena("bad"));
  CHECK(run_weir({"create", arena.name, "--vectors", "10", "--slots", "100"}).exit_code != kExitOk);
  CHECK(run_weir({"create", arena.name, "--keys", "10", "--max-probe", "8"}).exit_code != kExitOk);
  CHECK(run_weir({"create", arena.name, "--keys", "10", "--vectors", "10"}).exit_code != kExitOk);
  const auto zero = run_weir({"create", arena.name, "--vectors", "0"});
  CHECK(zero.exit_code != kExitOk);
  CHECK(contains(zero.err, "--vectors"));
  CHECK_FALSE(weir::core::Arena::open(arena.name));
  const auto help = run_weir({"create", "--help"});
  CHECK(contains(help.out, "not a count of keys"));
}

}  // TEST_SUITE
