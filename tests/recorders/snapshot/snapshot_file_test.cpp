// Snapshot files: an existing file is never overwritten unless asked, a failed snapshot leaves no
// file under either name, and periodic snapshots go into numbered files that are never reused; an
// array key's row says its dtype and shape.
#include <doctest/doctest.h>
#include <hdf5.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <span>
#include <sstream>

#include "proc_util.hpp"
#include "scratch_dir.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/clock.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/h5/handle.hpp"
#include "weir/h5/types.hpp"
#include "weir/snapshot/periodic.hpp"
#include "weir/snapshot/snapshot.hpp"

using namespace weir;
using namespace weir::test;

namespace {

core::ArenaOptions small_arena() {
  core::ArenaOptions o;
  o.slot_count = 64;
  o.value_bytes = 64;
  o.vector_dim = 8;
  o.channel_capacity = 2;
  o.channel_data_bytes = 1ULL << 20;
  return o;
}

std::string contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_SUITE("recorders.snapshot") {

TEST_CASE("an existing file is refused unless overwrite is asked, and then replaced whole") {
  ScratchDir dir("snap-exists");
  ArenaGuard guard(unique_name("snap-exists"));
  auto arena = core::Arena::create(guard.where(), small_arena());
  REQUIRE(arena);
  REQUIRE(core::KvStore(*arena).set_text("a", "1") == core::KvStatus::ok);
  const std::string path = dir.file("s.h5");
  REQUIRE(rec::snapshot_to_hdf5(*arena, path));
  const std::string before = contents(path);
  REQUIRE(core::KvStore(*arena).set_text("b", "2") == core::KvStatus::ok);

  auto again = rec::snapshot_to_hdf5(*arena, path);
  REQUIRE_FALSE(again);
  CHECK(again.error().code == core::Errc::already_exists);
  CHECK(again.error().what.find(path) != std::string::npos);
  CHECK(again.error().what.find("exists") != std::string::npos);
  CHECK(contents(path) == before);

  rec::SnapshotOptions force;
  force.overwrite = true;
  auto replaced = rec::snapshot_to_hdf5(*arena, path, force);
  REQUIRE(replaced);
  CHECK(replaced->keys == 2);
  CHECK(contents(path) != before);
  CHECK(names_in(dir.str()) == std::vector<std::string>{"s.h5"});  // no temporary file left beside it
}

TEST_CASE("a snapshot that fails part way leaves no file under either name and says why") {
  ScratchDir dir("snap-fail");
  ArenaGuard guard(unique_name("snap-fail"));
  auto arena = core::Arena::create(guard.where(), small_arena());
  REQUIRE(arena);
  core::ChannelSpec spec;
  spec.name = "adc0";
  spec.rate_hz = 1000;
  spec.samples_per_block = 16;
  spec.ring_blocks = 4;
  REQUIRE(core::create_channel(*arena, spec));
  // A corrupted descriptor: the snapshot refuses to follow its offsets, after writing the keys.
  auto* desc = reinterpret_cast<core::ChannelDesc*>(arena->region(core::Region::channels));
  desc->sample_bytes = 3;
  auto failed = rec::snapshot_to_hdf5(*arena, dir.file("bad.h5"));
  desc->sample_bytes = 4;
  REQUIRE_FALSE(failed);
  CHECK(failed.error().what.find("bad.h5") != std::string::npos);
  CHECK(failed.error().what.find("/channels/adc0") != std::string::npos);
  CHECK(names_in(dir.str()).empty());

  auto nowhere = rec::snapshot_to_hdf5(*arena, dir.file("no/such/dir/x.h5"));
  REQUIRE_FALSE(nowhere);
  CHECK(nowhere.error().what.find("no/such/dir/x.h5") != std::string::npos);
}

TEST_CASE("periodic snapshots are numbered after the highest file there and never overwrite one" *
          doctest::timeout(30)) {
  ScratchDir dir("snap-every");
  ArenaGuard guard(unique_name("snap-every"));
  auto arena = core::Arena::create(guard.where(), small_arena());
  REQUIRE(arena);
  REQUIRE(core::KvStore(*arena).set_text("a", "1") == core::KvStatus::ok);
  const std::string name = arena->location().name;
  const std::string kept = rec::numbered_snapshot_path(dir.str(), name, 7);
  std::ofstream(kept) << "an older snapshot";
  std::ofstream(dir.file("unrelated_snap000099.h5")) << "another arena's";

  rec::PeriodicOptions options;
  options.dir = dir.str();
  options.every_ns = 30'000'000;
  options.max_files = 3;
  const std::atomic<bool> stop{false};
  std::vector<std::uint64_t> numbers;
  auto report = rec::run_periodic_snapshots(*arena, options, stop,
                                            [&](const rec::PeriodicShot& shot) { numbers.push_back(shot.number); });
  REQUIRE(report);
  CHECK(report->files == 3);
  CHECK(report->failures == 0);
  CHECK_FALSE(report->stopped);
  CHECK(numbers == std::vector<std::uint64_t>{8, 9, 10});
  CHECK(report->first_path == rec::numbered_snapshot_path(dir.str(), name, 8));
  CHECK(report->last_path == rec::numbered_snapshot_path(dir.str(), name, 10));
  CHECK(contents(kept) == "an older snapshot");
  CHECK(names_in(dir.str()).size() == 5);

  auto missing = rec::SnapshotSchedule::create(dir.file("absent"), name, 1'000'000);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().what.find("absent") != std::string::npos);
  CHECK_FALSE(rec::SnapshotSchedule::create(dir.str(), name, 0));
}

TEST_CASE("a schedule's poll writes only when due and counts the periods a slow snapshot overran") {
  ScratchDir dir("snap-poll");
  ArenaGuard guard(unique_name("snap-poll"));
  auto arena = core::Arena::create(guard.where(), small_arena());
  REQUIRE(arena);
  constexpr std::int64_t kPeriodNs = 1'000'000'000;
  auto schedule = rec::SnapshotSchedule::create(dir.str(), "poll", kPeriodNs);
  REQUIRE(schedule);
  const std::int64_t now = core::monotonic_ns();
  auto first = schedule->poll(*arena, now);  // the first is due at once
  REQUIRE(first);
  CHECK(first->number == 1);
  CHECK(schedule->next_due_ns() == now + kPeriodNs);
  auto early = schedule->poll(*arena, now + kPeriodNs / 2);  // not yet due: nothing written
  REQUIRE(early);
  CHECK(early->number == 0);
  CHECK(names_in(dir.str()).size() == 1);
  // Polled 2.5 periods late: one snapshot, the deadlines it slept through skipped and counted.
  auto late = schedule->poll(*arena, now + 7 * kPeriodNs / 2);
  REQUIRE(late);
  CHECK(late->number == 2);
  CHECK(schedule->missed() == 2);
  CHECK(schedule->next_due_ns() == now + 4 * kPeriodNs);
}

TEST_CASE("an array key's row carries its element dtype and shape beside its bytes") {
  ScratchDir dir("snap-array");
  ArenaGuard guard(unique_name("snap-array"));
  auto arena = core::Arena::create(guard.where(), small_arena());
  REQUIRE(arena);
  core::KvStore kv(*arena);
  const std::array<std::uint32_t, 3> counts{7, 0, 9};
  const std::array<float, 4> grid{1.5F, 2.5F, 3.5F, 4.5F};
  REQUIRE(kv.set_array("counts", core::ArrayShape{core::Dtype::u32, 1, {3, 0}}, std::as_bytes(std::span(counts))) ==
          core::KvStatus::ok);
  REQUIRE(kv.set_array("grid", core::ArrayShape{core::Dtype::f32, 2, {2, 2}}, std::as_bytes(std::span(grid))) ==
          core::KvStatus::ok);
  REQUIRE(kv.set_text("name", "x") == core::KvStatus::ok);
  const std::string path = dir.file("a.h5");
  REQUIRE(rec::snapshot_to_hdf5(*arena, path));

  struct Row {  // the fields wanted, picked out of the table by name
    char* key;
    char* dtype;
    std::uint8_t rank;
    std::uint32_t dims[2];
  };
  h5::File file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  REQUIRE(file);
  h5::Dataset table(H5Dopen2(file.get(), "keys", H5P_DEFAULT));
  REQUIRE(table);
  const h5::Type text = h5::text_type();
  const hsize_t two[1] = {2};
  h5::Type dims(H5Tarray_create2(H5T_NATIVE_UINT32, 1, two));
  h5::Type type(H5Tcreate(H5T_COMPOUND, sizeof(Row)));
  H5Tinsert(type.get(), "key", HOFFSET(Row, key), text.get());
  H5Tinsert(type.get(), "array_dtype", HOFFSET(Row, dtype), text.get());
  H5Tinsert(type.get(), "array_rank", HOFFSET(Row, rank), H5T_NATIVE_UINT8);
  H5Tinsert(type.get(), "array_dims", HOFFSET(Row, dims), dims.get());
  h5::Space space(H5Dget_space(table.get()));
  const auto n = static_cast<std::size_t>(H5Sget_simple_extent_npoints(space.get()));
  std::vector<Row> rows(n);
  REQUIRE(n == 3);
  REQUIRE(H5Dread(table.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, rows.data()) >= 0);
  int seen = 0;
  for (const Row& r : rows) {
    const std::string key = r.key, dtype = r.dtype;
    if (key == "counts") {
      CHECK(dtype == "u32");
      CHECK(r.rank == 1);
      CHECK(r.dims[0] == 3);
      CHECK(r.dims[1] == 0);
    } else if (key == "grid") {
      CHECK(dtype == "f32");
      CHECK(r.rank == 2);
      CHECK(r.dims[0] == 2);
      CHECK(r.dims[1] == 2);
    } else {
      CHECK(dtype.empty());
      CHECK(r.rank == 0);
    }
    ++seen;
  }
  CHECK(seen == 3);
  H5Dvlen_reclaim(type.get(), space.get(), H5P_DEFAULT, rows.data());
}

}  // TEST_SUITE
