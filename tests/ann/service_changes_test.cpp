// The service follows its partition: new vectors, overwrites, deletes and slot reuse, keys outside
// the partition; and `weir vector search` through it, exactly, and without it.
#include <doctest/doctest.h>

#include <algorithm>
#include <csignal>
#include <functional>
#include <vector>

#include "ann_fixture.hpp"
#include "json.hpp"
#include "run_weir.hpp"
#include "weir/ann/client.hpp"

namespace weir::ann::test {

namespace {

constexpr std::uint32_t kDim = 64;
constexpr std::uint32_t kK = 10;
constexpr std::chrono::seconds kFollowTimeout{10};  // longest wait for the service to apply a change

struct Asked {
  std::vector<std::string> keys;
  std::vector<core::VectorHit> hits;
  AnswerInfo info;
};

Asked ask(Client& client, const PartitionArena& a, std::span<const float> q) {
  Asked out;
  out.hits.resize(kK);
  auto got = client.search(q, QueryOptions{}, out.hits, &out.info);
  REQUIRE_MESSAGE(got, (got ? "" : got.error().what));
  out.hits.resize(*got);
  out.keys = hit_keys(a.vectors, out.hits);
  return out;
}

// While the service is still applying a burst of inserts, a search can meet paths being relinked and
// come back empty after its retries: the service answers `failed` and the client asks again. A wait
// for the service to catch up takes such an answer as "not yet"; once caught up, ask() is strict.
bool answered(Client& client, std::span<const float> q, const std::function<bool(const AnswerInfo&, const core::VectorHit&)>& ready) {
  std::vector<core::VectorHit> hits(kK);
  AnswerInfo info;
  auto got = client.search(q, QueryOptions{}, hits, &info);
  return got && *got > 0 && ready(info, hits[0]);
}

}  // namespace

TEST_CASE("ann service: new vectors, overwrites, deletes and slot reuse are followed") {
  PartitionArena a("ann-follow", 4096, kDim);
  ClusteredData gen(kDim, ClusterShape{}, 21);
  a.fill(gen, 1000);
  Service service(a);
  auto client = Client::open(a.arena, kPart);
  REQUIRE(client);
  ClusteredData elsewhere(kDim, ClusterShape{.classes = 4}, 99);  // other class centres than the partition's
  std::vector<float> fresh(kDim);

  // New vectors while serving.
  for (std::uint32_t i = 1000; i < 1300; ++i) {
    gen.next(fresh);
    a.put("p/" + std::to_string(i), fresh, i);
  }
  CHECK(weir::test::eventually(
      [&] { return answered(*client, fresh, [](const AnswerInfo& info, const core::VectorHit&) { return info.indexed == 1300; }); },
      kFollowTimeout));
  CHECK(ask(*client, a, fresh).keys[0] == "p/1299");

  // Overwrite: p/10's new vector finds p/10 first.
  elsewhere.next(fresh);
  a.put("p/10", fresh, 10);
  CHECK(weir::test::eventually([&] { return ask(*client, a, fresh).keys[0] == "p/10"; }, kFollowTimeout));
  CHECK(ask(*client, a, fresh).hits[0].score == doctest::Approx(1.0F).epsilon(1e-4));

  // Delete: p/10 is never returned again, and no hit names a deleted key.
  core::KeyHandle before;
  REQUIRE(a.kv.resolve("p/10", before) == core::KvStatus::ok);
  REQUIRE(a.kv.del("p/10") == core::KvStatus::ok);
  const auto gone = [&] {
    const Asked r = ask(*client, a, fresh);
    return std::none_of(r.keys.begin(), r.keys.end(), [](const std::string& k) { return k.empty() || k == "p/10"; });
  };
  CHECK(weir::test::eventually(gone, kFollowTimeout));
  for (int i = 0; i < 5; ++i) CHECK(gone());
  CHECK(ask(*client, a, fresh).info.indexed == 1299);

  // Reuse: the key again, a new incarnation (generation) with another vector.
  std::vector<float> again(kDim);
  elsewhere.next(again);
  a.put("p/10", again, 10);
  core::KeyHandle after;
  REQUIRE(a.kv.resolve("p/10", after) == core::KvStatus::ok);
  CHECK(after.generation != before.generation);
  CHECK(weir::test::eventually([&] {
    const Asked r = ask(*client, a, again);
    return r.keys[0] == "p/10" && r.hits[0].generation == after.generation;
  }, kFollowTimeout));

  // A vector outside the partition (no label) is not indexed.
  std::vector<float> outside(kDim);
  elsewhere.next(outside);
  REQUIRE(a.vectors.set_wait("other/1", outside) == core::VectorStatus::ok);
  REQUIRE(a.kv.set_u64("other/1", 1) == core::KvStatus::ok);
  a.put("p/1300", outside, 1300);  // written after it: once this is indexed, other/1 had its chance
  CHECK(weir::test::eventually([&] { return ask(*client, a, outside).keys[0] == "p/1300"; }, kFollowTimeout));
  for (const std::string& k : ask(*client, a, outside).keys) CHECK(k != "other/1");
  CHECK(service.stop() == 0);
}

TEST_CASE("weir vector search: through the service, exactly, and without a service") {
  PartitionArena a("ann-cli", 2048, kDim);
  ClusteredData gen(kDim, ClusterShape{}, 22);
  a.fill(gen, 400);
  const std::vector<std::string> like{"vector", "search", a.guard.where(), std::string(kPart), "--like", "p/3", "-k", "5", "--json"};
  {
    Service service(a);
    const auto r = weir::test::run_weir(like);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    const auto j = weir::test::parse_json(r.out);
    CHECK(j["path"] == "ann");
    REQUIRE(j["hits"].size() == 5);
    CHECK(j["hits"][0]["key"] == "p/3");
    CHECK(j["hits"][0]["rank"] == 1);
    CHECK(j["hits"][0]["value"] == nlohmann::json::array({3, 3000}));
    CHECK(j["indexed"] == 400);

    std::vector<std::string> exact = like;
    exact.push_back("--exact");
    const auto e = weir::test::run_weir(exact);
    REQUIRE(e.exit_code == 0);
    const auto je = weir::test::parse_json(e.out);
    CHECK(je["path"] == "exact");
    CHECK(je["hits"][0]["key"] == "p/3");

    const auto text = weir::test::run_weir({"vector", "search", a.guard.where(), std::string(kPart), "--like", "p/3"});
    REQUIRE(text.exit_code == 0);
    CHECK(text.out.find("RANK") != std::string::npos);
    CHECK(text.out.find("p/3") != std::string::npos);
    CHECK(service.stop() == 0);
  }
  const auto r = weir::test::run_weir(like);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("answering with the exact search") != std::string::npos);
  CHECK(r.err.find("weir ann " + a.guard.where() + " pulses") != std::string::npos);
  CHECK(weir::test::parse_json(r.out)["path"] == "exact");
  const auto both = weir::test::run_weir({"vector", "search", a.guard.where(), std::string(kPart)});
  CHECK(both.exit_code == 2);
}

}  // namespace weir::ann::test

namespace weir::ann::test {

TEST_CASE("ann service: --metric l2 answers Euclidean distances, --json reports at exit") {
  PartitionArena a("ann-l2", 2048, kDim);
  ClusteredData gen(kDim, ClusterShape{}, 23);
  a.fill(gen, 300);
  Service service(a, {"--metric", "l2", "--json"});
  auto client = Client::open(a.arena, kPart);
  REQUIRE(client);
  std::vector<core::VectorHit> hits(kK);
  auto got = client->search_like("p/7", QueryOptions{}, hits);
  REQUIRE(got);
  CHECK(hit_keys(a.vectors, std::span(hits.data(), *got))[0] == "p/7");
  CHECK(hits[0].score == doctest::Approx(0.0F).epsilon(1e-3));
  CHECK(hits[1].score > hits[0].score);  // distances: nearest first, growing
  CHECK(service.stop() == 0);
  const std::string out = service.process.output();
  const auto brace = out.find('{');
  REQUIRE(brace != std::string::npos);
  const auto j = weir::test::parse_json(out.substr(brace));
  CHECK(j["metric"] == "l2");
  CHECK(j["indexed"] == 300);
  CHECK(j["queries"] == 1);
}

}  // namespace weir::ann::test

namespace weir::ann::test {

TEST_CASE("ann service: changes lost to a wrapped change log cost a rescan, not a vector") {
  constexpr std::uint32_t kLog = 16;  // entries per group's change log: 200 writes wrap it many times
  PartitionArena a("ann-rescan", 2048, kDim, kLog);
  ClusteredData gen(kDim, ClusterShape{}, 24);
  a.fill(gen, 300);
  Service service(a);
  REQUIRE(service.process.signal(SIGSTOP));  // it hears of nothing while stopped
  std::vector<float> v(kDim);
  for (std::uint32_t i = 300; i < 500; ++i) {
    gen.next(v);
    a.put("p/" + std::to_string(i), v, i);
  }
  REQUIRE(a.kv.del("p/0") == core::KvStatus::ok);
  REQUIRE(service.process.signal(SIGCONT));
  CHECK(weir::test::eventually([&] { return a.status()->indexed == 499; }, kFollowTimeout));
  CHECK(a.status()->rescans >= 1);
  auto client = Client::open(a.arena, kPart);
  REQUIRE(client);
  std::vector<core::VectorHit> hits(kK);
  auto got = client->search(v, QueryOptions{}, hits);
  REQUIRE(got);
  CHECK(hit_keys(a.vectors, std::span(hits.data(), *got))[0] == "p/499");
}

}  // namespace weir::ann::test
