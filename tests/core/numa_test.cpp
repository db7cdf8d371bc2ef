#include <doctest/doctest.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "arena_guard.hpp"
#include "proc_util.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/numa.hpp"

using namespace weir::core;
using weir::test::ArenaGuard;
using weir::test::unique_name;

namespace {

ArenaOptions small_on_node(int node) {
  ArenaOptions o;
  o.slot_count = 64;
  o.value_bytes = 256;
  o.vector_dim = 0;
  o.numa_node = node;
  return o;
}

}  // namespace

TEST_SUITE("core.numa") {

TEST_CASE("the machine reports at least one node with CPUs") {
  CHECK(numa_node_count() >= 1);
  auto cpus = numa_node_cpus(0);
  REQUIRE(cpus);
  CHECK_FALSE(cpus->empty());
  MESSAGE("nodes " << numa_node_count() << ", libnuma " << (numa_library_loaded() ? "loaded" : "absent"));
}

TEST_CASE("an arena bound to node 0 reads back a bind policy on node 0 with its pages faulted in") {
  ArenaGuard guard(unique_name("numa"));
  auto arena = Arena::create(guard.where(), small_on_node(0));
  REQUIRE(arena);
  auto status = inspect(guard.where());
  REQUIRE(status);
  CHECK(status->numa_node == 0);
  CHECK(status->prefaulted);
  CHECK(status->numa_policy == "bind");
  CHECK(status->numa_policy_nodes == std::vector<int>{0});
  CHECK(status->numa_page_node == 0);
}

TEST_CASE("an arena without a node keeps the default policy") {
  ArenaGuard guard(unique_name("nonuma"));
  auto arena = Arena::create(guard.where(), small_on_node(-1));
  REQUIRE(arena);
  auto status = inspect(guard.where());
  REQUIRE(status);
  CHECK(status->numa_node == -1);
  CHECK_FALSE(status->prefaulted);
  CHECK(status->numa_policy == "default");
}

TEST_CASE("a node that does not exist is refused by name and leaves no arena behind") {
  ArenaGuard guard(unique_name("badnode"));
  auto arena = Arena::create(guard.where(), small_on_node(99));
  REQUIRE_FALSE(arena);
  CHECK(arena.error().what.find("NUMA node 99 does not exist") != std::string::npos);
  CHECK(Arena::open(guard.where()).error().code == Errc::not_found);
  CHECK_FALSE(pin_thread_to_node(99));
}

TEST_CASE("a writer thread pinned to node 0 runs only on node 0's CPUs") {
  auto cpus = numa_node_cpus(0);
  REQUIRE(cpus);
  std::thread t([&] {
    REQUIRE(pin_thread_to_node(0));
    cpu_set_t set;
    CPU_ZERO(&set);
    REQUIRE(sched_getaffinity(0, sizeof(set), &set) == 0);
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      const bool on_node = std::find(cpus->begin(), cpus->end(), cpu) != cpus->end();
      if (CPU_ISSET(cpu, &set)) CHECK(on_node);
    }
  });
  t.join();
}

TEST_CASE("without libnuma the same binding is made through the system calls") {
  if (std::getenv("WEIR_NUMA_TEST_CHILD") != nullptr) {  // the re-executed copy below
    CHECK_FALSE(numa_library_loaded());
    ArenaGuard guard(unique_name("nolib"));
    auto arena = Arena::create(guard.where(), small_on_node(0));
    REQUIRE(arena);
    auto policy = memory_policy_of(arena->base());
    REQUIRE(policy);
    CHECK(policy->mode == "bind");
    CHECK(policy->page_node == 0);
    CHECK_FALSE(policy->via_library);
    return;
  }
  // The library is looked for once per process, so run this case again in a fresh process.
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    setenv("WEIR_NO_LIBNUMA", "1", 1);
    setenv("WEIR_NUMA_TEST_CHILD", "1", 1);
    execl("/proc/self/exe", "weir_core_tests", "-tc=without libnuma*", "--no-intro=true", static_cast<char*>(nullptr));
    _exit(127);
  }
  const weir::test::ExitStatus status = weir::test::ChildProcess::adopt(child).wait(weir::test::kChildTimeout);
  REQUIRE(status.exited);
  CHECK(status.code == 0);
}

}  // TEST_SUITE
