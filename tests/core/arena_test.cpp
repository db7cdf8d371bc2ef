#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <random>
#include <vector>

#include "arena_guard.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/kv_store.hpp"

using namespace weir::core;
using weir::test::ArenaGuard;
using weir::test::unique_name;

namespace {

std::string temp_path(const std::string& stem) { return "/tmp/" + unique_name(stem) + ".arena"; }

std::vector<char> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Makes a valid file arena, lets `mutate` damage its bytes, and returns what open says.
template <class Mutate>
Result<Arena> open_damaged(const std::string& path, Mutate mutate) {
  {
    auto made = Arena::create(path, ArenaOptions{.slot_count = 64, .value_bytes = 256});
    REQUIRE(made);
  }
  auto bytes = read_file(path);
  mutate(bytes);
  write_file(path, bytes);
  return Arena::open(path, OpenOptions{.read_only = false, .ready_timeout_ns = 50'000'000});
}

ArenaHeader& header_of(std::vector<char>& bytes) { return *reinterpret_cast<ArenaHeader*>(bytes.data()); }

}  // namespace

TEST_SUITE("core.arena") {

TEST_CASE("a shm arena is created, opened by name, and removed") {
  ArenaGuard guard(unique_name("shm"));
  auto created = Arena::create(guard.where());
  REQUIRE(created);
  CHECK(created->location().path == "/dev/shm/weir." + guard.where());
  struct stat st {};
  REQUIRE(stat(created->location().path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  auto opened = Arena::open(guard.where());
  REQUIRE(opened);
  CHECK(opened->bytes() == created->bytes());
  CHECK(std::string(opened->header().name) == guard.where());
  CHECK(opened->header().creator_pid == static_cast<std::uint32_t>(getpid()));
  REQUIRE(Arena::remove(guard.where()));
  auto gone = Arena::open(guard.where());
  REQUIRE_FALSE(gone);
  CHECK(gone.error().code == Errc::not_found);
  CHECK(gone.error().what.find(guard.where()) != std::string::npos);
}

TEST_CASE("a group mode is applied only when asked for") {
  ArenaGuard guard(unique_name("mode"));
  auto created = Arena::create(guard.where(), ArenaOptions{.mode = 0660});
  REQUIRE(created);
  struct stat st {};
  REQUIRE(stat(created->location().path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0660);
}

TEST_CASE("a file-backed arena keeps its keys after every process closed it") {
  const std::string path = temp_path("file");
  ArenaGuard guard(path);
  {
    auto a = Arena::create(path);
    REQUIRE(a);
    KvStore kv(*a);
    REQUIRE(kv.set_text("run", "42") == KvStatus::ok);
    REQUIRE(a->sync());
  }
  auto b = Arena::open(path);
  REQUIRE(b);
  char buf[16];
  ValueInfo info;
  REQUIRE(KvStore(*b).get("run", std::as_writable_bytes(std::span(buf)), info) == KvStatus::ok);
  CHECK(std::string(buf, info.length) == "42");
  CHECK(info.type == ValueType::text);
}

TEST_CASE("a memfd arena has no name but can be opened through its descriptor") {
  auto a = Arena::create("memfd:" + unique_name("memfd"));
  REQUIRE(a);
  REQUIRE(KvStore(*a).set_u64("x", 7) == KvStatus::ok);
  auto b = Arena::open("fd:" + std::to_string(a->fd()));
  REQUIRE(b);
  std::uint64_t bits = 0;
  ValueType type{};
  REQUIRE(KvStore(*b).get_scalar("x", bits, type) == KvStatus::ok);
  CHECK(bits == 7);
  CHECK_FALSE(Arena::remove("memfd:whatever"));
}

TEST_CASE("bad names and locations are refused with the name in the message") {
  for (const char* bad : {"", ".hidden", "has space", "semi;colon", "fd:x", "memfd:"}) {
    CAPTURE(bad);
    auto r = Arena::create(bad);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::invalid_argument);
  }
  auto r = Arena::create(std::string(200, 'a'));
  REQUIRE_FALSE(r);
  CHECK(r.error().what.find("aaaa") != std::string::npos);
}

TEST_CASE("creating over an existing arena is refused and names it") {
  ArenaGuard guard(unique_name("twice"));
  auto first = Arena::create(guard.where());
  REQUIRE(first);
  auto second = Arena::create(guard.where());
  REQUIRE_FALSE(second);
  CHECK(second.error().code == Errc::already_exists);
  CHECK(second.error().what.find(guard.where()) != std::string::npos);
  CHECK(second.error().what.find("in use") != std::string::npos);
}

TEST_CASE("open refuses damaged arenas with a reason, never a crash") {
  const std::string path = temp_path("bad");
  ArenaGuard guard(path);
  std::string expect;
  Errc code = Errc::layout_mismatch;
  Result<Arena> r = fail(Errc::io_error, "unset");
  SUBCASE("truncated to half a header") {
    r = open_damaged(path, [](std::vector<char>& b) { b.resize(1000); });
    expect = "truncated";
  }
  SUBCASE("truncated below the size its header claims") {
    r = open_damaged(path, [](std::vector<char>& b) { b.resize(b.size() / 2); });
    expect = "truncated";
  }
  SUBCASE("wrong magic") {
    r = open_damaged(path, [](std::vector<char>& b) { std::memcpy(b.data(), "HDF5", 4); });
    expect = "not a weir arena";
  }
  SUBCASE("a newer layout version") {
    r = open_damaged(path, [](std::vector<char>& b) {
      header_of(b).layout_version = kArenaLayoutVersion + 1;
      header_of(b).header_checksum = header_checksum(header_of(b));
    });
    expect = "newer";
  }
  SUBCASE("a layout version 6 arena, from before typed arrays and frame channels") {
    r = open_damaged(path, [](std::vector<char>& b) {
      header_of(b).layout_version = 6;
      header_of(b).header_checksum = header_checksum(header_of(b));
    });
    expect = "layout version 6 is not this build's " + std::to_string(kArenaLayoutVersion);
  }
  SUBCASE("random bytes in the header") {
    r = open_damaged(path, [](std::vector<char>& b) {
      std::mt19937 rng(7);
      for (std::size_t i = 8; i < 320; ++i) b[i] = static_cast<char>(rng());
    });
    expect = "checksum";
  }
  SUBCASE("a billion slots claimed in a small file, checksum forged") {
    r = open_damaged(path, [](std::vector<char>& b) {
      header_of(b).geometry.slot_count = 1'000'000'000;
      header_of(b).header_checksum = header_checksum(header_of(b));
    });
    expect = "geometry";
  }
  SUBCASE("a region table that points outside the arena, checksum forged") {
    r = open_damaged(path, [](std::vector<char>& b) {
      header_of(b).regions[1].offset = 1ULL << 50;
      header_of(b).header_checksum = header_checksum(header_of(b));
    });
    expect = "region table";
  }
  SUBCASE("an empty file") {
    r = open_damaged(path, [](std::vector<char>& b) { b.clear(); });
    expect = "empty";
    code = Errc::not_ready;
  }
  SUBCASE("a header whose creator never published it") {
    r = open_damaged(path, [](std::vector<char>& b) { std::memset(b.data(), 0, 4); });
    expect = "not published";
    code = Errc::not_ready;
  }
  REQUIRE_FALSE(r);
  CAPTURE(r.error().what);
  CHECK(r.error().code == code);
  CHECK(r.error().what.find(expect) != std::string::npos);
  CHECK(r.error().what.find(path) != std::string::npos);
}

TEST_CASE("open of a missing arena says it does not exist") {
  auto r = Arena::open(unique_name("missing"));
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::not_found);
  CHECK(r.error().what.find("does not exist") != std::string::npos);
}

TEST_CASE("the attach table lists the processes that have the arena open") {
  ArenaGuard guard(unique_name("attach"));
  auto a = Arena::create(guard.where());
  REQUIRE(a);
  auto pids = attached_pids(*a);
  REQUIRE(pids.size() == 1);
  CHECK(pids[0] == static_cast<std::uint32_t>(getpid()));
  auto status = inspect(guard.where());
  REQUIRE(status);
  CHECK_FALSE(status->stale);
  CHECK(status->creator_alive);
  a->close();
  CHECK(inspect(guard.where())->attached.empty());
}

TEST_CASE("a read-only mapping refuses writes with a status, not a fault") {
  ArenaGuard guard(unique_name("ro"));
  auto a = Arena::create(guard.where());
  REQUIRE(a);
  REQUIRE(KvStore(*a).set_i64("k", 1) == KvStatus::ok);
  auto ro = Arena::open(guard.where(), OpenOptions{.read_only = true});
  REQUIRE(ro);
  KvStore kv(*ro);
  CHECK(kv.set_i64("k", 2) == KvStatus::read_only);
  std::uint64_t result = 0;
  CHECK(kv.atomic("k", AtomicOp::add, 1, result) == KvStatus::read_only);
  CHECK(kv.del("k") == KvStatus::read_only);
  std::uint64_t bits = 0;
  ValueType type{};
  REQUIRE(kv.get_scalar("k", bits, type) == KvStatus::ok);
  CHECK(bits == 1);
}

}  // TEST_SUITE

TEST_SUITE("core.arena") {

TEST_CASE("a killed process that is not yet reaped counts as dead") {
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) _exit(0);
  // Until waitpid, the child is a zombie: kill(pid, 0) still succeeds.
  for (int i = 0; i < 1000 && pid_alive(static_cast<std::uint32_t>(child)); ++i) usleep(1000);
  CHECK_FALSE(pid_alive(static_cast<std::uint32_t>(child)));
  CHECK(kill(child, 0) == 0);
  REQUIRE(waitpid(child, nullptr, 0) == child);
  CHECK(pid_alive(static_cast<std::uint32_t>(getpid())));
}

}  // TEST_SUITE
