// The real `weir ann` service: recall against the exact search, the query key's life, errors,
// restarts, timeouts, several asking processes, and what a fresh asker faults in.
#include <doctest/doctest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <vector>

#include "ann_fixture.hpp"
#include "weir/ann/client.hpp"

namespace weir::ann::test {

namespace {

constexpr std::uint32_t kDim = 64;
constexpr std::uint32_t kVectors = 3000;
constexpr std::uint32_t kSlots = 8192;
constexpr std::uint32_t kK = 10;

std::vector<std::uint32_t> exact_slots(const core::VectorStore& vectors, std::span<const float> q) {
  std::vector<core::VectorHit> hits(kK);
  std::size_t count = 0;
  REQUIRE(vectors.search(q, core::SearchOptions{}, hits, count) == core::VectorStatus::ok);
  std::vector<std::uint32_t> out;
  for (std::size_t i = 0; i < count; ++i) out.push_back(hits[i].slot);
  return out;
}

// Request keys in the arena now: 0 once the service has deleted a vector query's key.
int request_keys(const PartitionArena& a) {
  int n = 0;
  a.kv.for_each_key([&](std::string_view key, const core::ValueInfo&) { n += key.starts_with(request_prefix(kPart)) ? 1 : 0; });
  return n;
}

}  // namespace

TEST_CASE("ann service: recall@10 against the exact search, and the query key is gone after each answer") {
  PartitionArena a("ann-recall", kSlots, kDim);
  ClusteredData gen(kDim, ClusterShape{}, 1);
  a.fill(gen, kVectors);
  Service service(a);
  auto client = Client::open(a.arena, kPart);
  REQUIRE_MESSAGE(client, (client ? "" : client.error().what));
  CHECK(client->dim() == kDim);
  std::vector<float> q(kDim);
  std::vector<core::VectorHit> hits(kK);
  std::size_t found = 0, asked = 0;
  for (int n = 0; n < 60; ++n) {
    gen.next(q);
    AnswerInfo info;
    auto count = client->search(q, QueryOptions{}, hits, &info);
    REQUIRE_MESSAGE(count, (count ? "" : count.error().what));
    REQUIRE(*count == kK);
    CHECK(info.indexed == kVectors);
    // The service deleted the request key (and with it the query's row) before answering.
    CHECK(request_keys(a) == 0);
    const auto truth = exact_slots(a.vectors, q);
    for (std::size_t i = 0; i < kK; ++i) found += std::count(truth.begin(), truth.end(), hits[i].slot);
    asked += kK;
    CHECK(hits[0].score >= hits[kK - 1].score);
  }
  const double recall = static_cast<double>(found) / static_cast<double>(asked);
  MESSAGE("recall@10 through the service " << recall);
  CHECK(recall >= 0.95);

  // like: the key itself is its own best hit, with cosine 1.
  auto like = client->search_like("p/17", QueryOptions{}, hits);
  REQUIRE(like);
  CHECK(hit_keys(a.vectors, std::span(hits.data(), *like))[0] == "p/17");
  CHECK(hits[0].score == doctest::Approx(1.0F).epsilon(1e-4));
  auto missing = client->search_like("no-such-key", QueryOptions{}, hits);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().what.find("no-such-key") != std::string::npos);
  auto bad = client->search(std::span<const float>(q.data(), kDim - 1), QueryOptions{}, hits);
  CHECK_FALSE(bad);
  CHECK(service.stop() == 0);
  CHECK(a.status()->state == static_cast<std::uint8_t>(ServiceState::stopped));
}

TEST_CASE("ann service: no service is a clear error; a second one is refused; a restart rebuilds") {
  PartitionArena a("ann-restart", 2048, kDim);
  ClusteredData gen(kDim, ClusterShape{}, 2);
  a.fill(gen, 500);
  auto none = Client::open(a.arena, kPart);
  REQUIRE_FALSE(none);
  CHECK(none.error().what.find("weir ann " + a.guard.where() + " pulses") != std::string::npos);
  CHECK(none.error().what.find("pulses") != std::string::npos);
  {
    Service first(a);
    const auto second = weir::test::run_weir({"ann", a.guard.where(), std::string(kPart)});
    CHECK(second.exit_code == 1);
    CHECK(second.err.find("already serving") != std::string::npos);
    CHECK(first.stop() == 0);
  }
  auto stopped = Client::open(a.arena, kPart);
  REQUIRE_FALSE(stopped);
  CHECK(stopped.error().what.find("not running") != std::string::npos);
  std::vector<float> v(kDim);
  for (std::uint32_t i = 500; i < 700; ++i) {  // written while no service runs
    gen.next(v);
    a.put("p/" + std::to_string(i), v, i);
  }
  Service again(a);
  CHECK(a.status()->indexed == 700);
  auto client = Client::open(a.arena, kPart);
  REQUIRE(client);
  std::vector<core::VectorHit> hits(kK);
  auto got = client->search_like("p/650", QueryOptions{}, hits);
  REQUIRE(got);
  CHECK(hit_keys(a.vectors, std::span(hits.data(), *got))[0] == "p/650");
}

TEST_CASE("ann service: a client times out, saying after how long, when the service does not answer") {
  PartitionArena a("ann-timeout", 2048, kDim);
  ClusteredData gen(kDim, ClusterShape{}, 3);
  a.fill(gen, 200);
  Service service(a);
  auto client = Client::open(a.arena, kPart);
  REQUIRE(client);
  REQUIRE(service.process.signal(SIGSTOP));
  std::vector<float> q(kDim);
  gen.next(q);
  std::vector<core::VectorHit> hits(kK);
  QueryOptions options;
  options.timeout_ns = 200'000'000;
  auto got = client->search(q, options, hits);
  REQUIRE_FALSE(got);
  CHECK(got.error().code == core::Errc::io_error);
  CHECK(got.error().what.find("no answer") != std::string::npos);
  CHECK(got.error().what.find("ms") != std::string::npos);
  CHECK(request_keys(a) == 0);  // the unanswered query's row does not linger
  REQUIRE(service.process.signal(SIGCONT));
  got = client->search(q, QueryOptions{}, hits);  // answered again once it runs
  REQUIRE_MESSAGE(got, (got ? "" : got.error().what));
  CHECK(*got == kK);
}

TEST_CASE("ann service: several client processes at once each get their own answers") {
  PartitionArena a("ann-many", 4096, kDim);
  ClusteredData gen(kDim, ClusterShape{}, 4);
  a.fill(gen, 1000);
  Service service(a);
  constexpr int kChildren = 4;
  constexpr int kQueries = 100;
  std::vector<pid_t> children;
  for (int c = 0; c < kChildren; ++c) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      int code = 0;
      {
        auto arena = core::Arena::open(a.guard.where());
        auto client = arena ? Client::open(*arena, kPart) : core::Result<Client>(tl::make_unexpected(arena.error()));
        if (!client) ::_exit(10);
        std::vector<core::VectorHit> hits(kK);
        core::VectorStore vectors(*arena);
        std::vector<char> key(vectors.key_bytes());
        for (int n = 0; n < kQueries && code == 0; ++n) {
          const std::string like = "p/" + std::to_string((c * 131 + n * 7) % 1000);
          auto got = client->search_like(like, QueryOptions{}, hits);
          std::uint32_t length = 0;
          if (!got || *got != kK) code = 11;
          else if (vectors.key_of(hits[0], key, length) != core::VectorStatus::ok || std::string(key.data(), length) != like)
            code = 12;  // another asker's answer would not start with this key
        }
      }
      ::_exit(code);
    }
    children.push_back(pid);
  }
  for (const pid_t pid : children) {
    int status = 0;
    const bool ended = weir::test::eventually([&] { return ::waitpid(pid, &status, WNOHANG) == pid; }, std::chrono::seconds(20));
    if (!ended) ::kill(pid, SIGKILL);
    REQUIRE(ended);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  CHECK(a.status()->state == static_cast<std::uint8_t>(ServiceState::serving));
}

TEST_CASE("ann service: a fresh process's first query faults in a few pages, not the partition") {
  constexpr std::uint32_t kWide = 256;
  constexpr std::uint32_t kMany = 6000;
  PartitionArena a("ann-faults", 8192, kWide);
  ClusteredData gen(kWide, ClusterShape{}, 5);
  a.fill(gen, kMany);
  Service service(a);
  int pipefd[2];
  REQUIRE(::pipe(pipefd) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    long faults = -1;
    {
      rusage before{}, after{};
      ::getrusage(RUSAGE_SELF, &before);
      auto arena = core::Arena::open(a.guard.where());
      if (arena) {
        auto client = Client::open(*arena, kPart);
        std::vector<core::VectorHit> hits(kK);
        if (client && client->search_like("p/5", QueryOptions{}, hits)) {
          ::getrusage(RUSAGE_SELF, &after);
          faults = after.ru_minflt - before.ru_minflt;
        }
      }
    }
    (void)!::write(pipefd[1], &faults, sizeof faults);
    ::_exit(0);
  }
  ::close(pipefd[1]);
  long faults = -1;
  REQUIRE(::read(pipefd[0], &faults, sizeof faults) == sizeof faults);
  ::close(pipefd[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  const long partition_pages = static_cast<long>(std::uint64_t{kMany} * kWide * sizeof(float) / 4096);
  MESSAGE("minor faults of a fresh asker's first query: " << faults << " (the partition's vectors span " << partition_pages
                                                          << " pages)");
  CHECK(faults > 0);
  CHECK(faults < partition_pages / 10);
}

}  // namespace weir::ann::test
