// HnswIndex on its own: recall against a brute-force search over clustered vectors, replacement,
// removal, and the three metrics' scores.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <vector>

#include "weir/ann/clustered_data.hpp"
#include "weir/ann/hnsw_index.hpp"

namespace weir::ann {

namespace {

constexpr std::uint32_t kDim = 48;
constexpr std::uint32_t kCount = 4000;
constexpr std::uint32_t kK = 10;

float dot(const float* a, const float* b) {
  float s = 0;
  for (std::uint32_t i = 0; i < kDim; ++i) s += a[i] * b[i];
  return s;
}

std::vector<std::uint32_t> brute_top(const std::vector<float>& data, const float* q, std::uint32_t k) {
  std::vector<std::uint32_t> order(data.size() / kDim);
  std::iota(order.begin(), order.end(), 0U);
  std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return dot(q, &data[std::size_t{a} * kDim]) > dot(q, &data[std::size_t{b} * kDim]);
  });
  order.resize(k);
  return order;
}

}  // namespace

TEST_CASE("ann index: recall@10 of clustered vectors against brute force is at least 0.95") {
  ClusteredData gen(kDim, ClusterShape{.classes = 16, .rank = 8}, 11);
  std::vector<float> data(std::size_t{kCount} * kDim);
  for (std::uint32_t i = 0; i < kCount; ++i) gen.next(std::span<float>(&data[std::size_t{i} * kDim], kDim));
  auto index = HnswIndex::create(kDim, kCount, IndexParams{});
  REQUIRE(index);
  for (std::uint32_t i = 0; i < kCount; ++i) REQUIRE(index->add(i, std::span<const float>(&data[std::size_t{i} * kDim], kDim)));
  CHECK(index->live() == kCount);
  std::vector<float> q(kDim);
  std::vector<Neighbour> out(kK);
  std::size_t found = 0;
  constexpr int kQueries = 100;
  for (int n = 0; n < kQueries; ++n) {
    gen.next(q);
    const auto truth = brute_top(data, q.data(), kK);
    REQUIRE(index->search(q, 64, out) == kK);
    CHECK(out[0].score >= out[kK - 1].score);
    for (const Neighbour& nb : out) found += std::count(truth.begin(), truth.end(), nb.slot);
  }
  const double recall = static_cast<double>(found) / (kQueries * kK);
  MESSAGE("recall@10 " << recall);
  CHECK(recall >= 0.95);
}

TEST_CASE("ann index: a replaced vector is found by its new value, a removed one never") {
  ClusteredData gen(kDim, ClusterShape{.classes = 8, .rank = 4}, 5);
  constexpr std::uint32_t kSmall = 500;
  std::vector<float> v(kDim);
  auto index = HnswIndex::create(kDim, kSmall, IndexParams{});
  REQUIRE(index);
  for (std::uint32_t i = 0; i < kSmall; ++i) {
    gen.next(v);
    REQUIRE(index->add(i, v));
  }
  std::vector<Neighbour> out(kK);
  // Replace slot 7 with a vector far from everything: it must be its own nearest.
  std::vector<float> odd(kDim, 0.0F);
  odd[0] = 1.0F;
  odd[1] = -1.0F;
  std::vector<float> prepared(kDim);
  index->prepare(odd, prepared);
  CHECK(std::abs(std::inner_product(prepared.begin(), prepared.end(), prepared.begin(), 0.0F) - 1.0F) < 1e-5F);
  REQUIRE(index->add(7, prepared));
  CHECK(index->live() == kSmall);
  REQUIRE(index->search(prepared, 64, out) == kK);
  CHECK(out[0].slot == 7);
  CHECK(out[0].score == doctest::Approx(1.0F).epsilon(1e-4));
  REQUIRE(index->remove(7));
  CHECK_FALSE(index->remove(7));
  CHECK(index->live() == kSmall - 1);
  REQUIRE(index->search(prepared, 64, out) == kK);
  for (const Neighbour& nb : out) CHECK(nb.slot != 7);
  REQUIRE(index->add(7, prepared));  // back again
  REQUIRE(index->search(prepared, 64, out) == kK);
  CHECK(out[0].slot == 7);
}

TEST_CASE("ann index: l2 scores are Euclidean distances, dot scores dot products") {
  std::vector<float> a(kDim, 0.0F), b(kDim, 0.0F);
  a[0] = 3.0F;
  b[1] = 4.0F;
  auto l2 = HnswIndex::create(kDim, 4, IndexParams{.metric = core::Metric::l2});
  REQUIRE(l2);
  REQUIRE(l2->add(0, a));
  std::vector<Neighbour> out(1);
  REQUIRE(l2->search(b, 8, out) == 1);
  CHECK(out[0].score == doctest::Approx(5.0F));
  auto d = HnswIndex::create(kDim, 4, IndexParams{.metric = core::Metric::dot});
  REQUIRE(d);
  b[0] = 2.0F;
  REQUIRE(d->add(0, a));
  REQUIRE(d->search(b, 8, out) == 1);
  CHECK(out[0].score == doctest::Approx(6.0F));
  CHECK_FALSE(HnswIndex::create(0, 4, IndexParams{}));
}

}  // namespace weir::ann
