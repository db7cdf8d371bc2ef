// The chunk-at-a-time column: whatever mix of commits, chunk writes and partial flushes, the
// dataset ends up holding exactly the committed elements, in order.
#include <doctest/doctest.h>

#include <hdf5.h>

#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "column.hpp"
#include "encode_pool.hpp"
#include "harness.hpp"
#include "weir/h5/handle.hpp"

using weir::rec::Column;
using weir::rec::ColumnSpec;
using weir::rec::EncodePool;
using weir::test::TempDir;

namespace {

ColumnSpec fill_spec(const std::int32_t* fill) {
  ColumnSpec spec{"x", H5T_NATIVE_INT32, H5T_NATIVE_INT32, 4, 4, 1};
  spec.fill = fill;
  return spec;
}

std::vector<std::int32_t> read_all(hid_t dataset) {
  weir::h5::Space space{H5Dget_space(dataset)};
  hsize_t n = 0;
  REQUIRE(H5Sget_simple_extent_dims(space.get(), &n, nullptr) == 1);
  std::vector<std::int32_t> out(n);
  if (n > 0) REQUIRE(H5Dread(dataset, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) >= 0);
  return out;
}

// Commits runs of 1..slack consecutive integers, writing chunks as they fill and flushing the
// partial tail every few commits; returns what was committed.
std::vector<std::int32_t> fill(Column& column, std::uint64_t slack, int commits, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::int32_t> committed;
  for (int i = 0; i < commits; ++i) {
    const auto n = static_cast<std::uint64_t>(rng() % slack) + 1;
    std::vector<std::int32_t> values(n);
    std::iota(values.begin(), values.end(), static_cast<std::int32_t>(committed.size()));
    std::memcpy(column.stage_end(), values.data(), n * sizeof(std::int32_t));
    column.commit(n);
    committed.insert(committed.end(), values.begin(), values.end());
    if (column.chunk_ready()) REQUIRE(column.write_chunks());
    if (rng() % 4 == 0) REQUIRE(column.write_partial());
    CHECK(column.size() == committed.size());
  }
  return committed;
}

}  // namespace

TEST_SUITE("recorders.stream.column") {

TEST_CASE("commits, whole chunks and partial flushes leave exactly the committed elements") {
  TempDir dir;
  EncodePool pool(2);
  for (const int deflate : {0, 4})
  for (const bool cache : {true, false}) {
    CAPTURE(deflate);
    CAPTURE(cache);
    const std::string file =
        (dir.path() / ("c" + std::to_string(deflate) + (cache ? "c" : "n") + ".h5")).string();
    weir::h5::File f{H5Fcreate(file.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT)};
    REQUIRE(f.valid());
    constexpr std::uint64_t kChunk = 8, kSlack = 5;
    ColumnSpec spec{"x", H5T_NATIVE_INT32, H5T_NATIVE_INT32, 4, kChunk, kSlack};
    spec.cache = cache;
    if (deflate > 0) {
      spec.codec = weir::codec::Codec{weir::codec::Method::deflate, true, deflate};
      spec.pool = &pool;
    }
    auto column = Column::create(f.get(), spec, file + " /x");
    REQUIRE(column);
    const std::vector<std::int32_t> committed = fill(*column, kSlack, 200, 7 + static_cast<std::uint64_t>(deflate));
    REQUIRE(column->write_partial());
    CHECK(column->written() == committed.size());
    CHECK(read_all(column->id()) == committed);
  }
}

TEST_CASE("a partial flush makes the staged tail visible at once, before its chunk is full") {
  TempDir dir;
  const std::string file = (dir.path() / "p.h5").string();
  weir::h5::File f{H5Fcreate(file.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT)};
  auto column = Column::create(f.get(), ColumnSpec{"x", H5T_NATIVE_INT32, H5T_NATIVE_INT32, 4, 100, 10}, file);
  REQUIRE(column);
  const std::int32_t three[3] = {5, 6, 7};
  std::memcpy(column->stage_end(), three, sizeof three);
  column->commit(3);
  CHECK_FALSE(column->chunk_ready());
  CHECK(read_all(column->id()).empty());  // staged only
  REQUIRE(column->write_partial());
  CHECK(read_all(column->id()) == std::vector<std::int32_t>{5, 6, 7});
  std::int32_t back = 0;
  CHECK(column->read_staged(1, &back));
  CHECK(back == 6);
  CHECK_FALSE(column->read_staged(3, &back));
}

TEST_CASE("the last element replaced while staged, after a partial flush handed it over, and after its chunk was "
          "written whole, reads back as its last value") {
  TempDir dir;
  const std::string file = (dir.path() / "l.h5").string();
  weir::h5::File f{H5Fcreate(file.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT)};
  auto column = Column::create(f.get(), ColumnSpec{"x", H5T_NATIVE_INT32, H5T_NATIVE_INT32, 4, 4, 1}, file);
  REQUIRE(column);
  const auto append = [&](std::int32_t v) {
    std::memcpy(column->stage_end(), &v, sizeof v);
    column->commit(1);
    if (column->chunk_ready()) REQUIRE(column->write_chunks());
  };
  const auto replace = [&](std::int32_t v) { column->replace_last(&v); };
  append(1);
  replace(2);  // staged: changed in place
  CHECK(read_all(column->id()).empty());
  REQUIRE(column->write_partial());
  CHECK(read_all(column->id()) == std::vector<std::int32_t>{2});
  replace(3);  // HDF5 has it: handed over again at the next write
  CHECK(read_all(column->id()) == std::vector<std::int32_t>{2});
  REQUIRE(column->write_partial());
  CHECK(read_all(column->id()) == std::vector<std::int32_t>{3});
  append(10);
  append(11);
  REQUIRE(column->write_partial());
  append(12);  // fills the chunk: written whole, nothing staged any more
  replace(13);
  CHECK(read_all(column->id()) == std::vector<std::int32_t>{3, 10, 11, 12});
  append(20);  // the replacement waits for the next write, whatever follows
  replace(21);  // staged, in the next chunk
  REQUIRE(column->write_partial());
  CHECK(read_all(column->id()) == std::vector<std::int32_t>{3, 10, 11, 13, 21});
  append(30);
  append(31);
  append(32);  // the second chunk fills
  replace(33);
  REQUIRE(column->write_partial());
  CHECK(read_all(column->id()) == std::vector<std::int32_t>{3, 10, 11, 13, 21, 30, 31, 33});
}

TEST_CASE("a roll-back shrinks the dataset to the last durable point and appends from there") {
  TempDir dir;
  const std::string file = (dir.path() / "r.h5").string();
  weir::h5::File f{H5Fcreate(file.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT)};
  const std::int32_t fill = -1;
  auto column =
      Column::create(f.get(), fill_spec(&fill), file);
  REQUIRE(column);
  const auto append = [&](std::int32_t v) {
    std::memcpy(column->stage_end(), &v, sizeof v);
    column->commit(1);
    if (column->chunk_ready()) REQUIRE(column->write_chunks());
  };
  for (std::int32_t v = 0; v < 6; ++v) append(v);
  REQUIRE(column->write_partial());
  column->mark_durable();  // what a successful H5Fflush makes durable: 0..5
  for (std::int32_t v = 6; v < 11; ++v) append(v);
  REQUIRE(column->write_partial());  // 6..10 handed over but, say, never flushed
  REQUIRE(column->roll_back());
  CHECK(column->written() == 6);
  CHECK(read_all(column->id()) == std::vector<std::int32_t>{0, 1, 2, 3, 4, 5});
  append(42);
  REQUIRE(column->write_partial());
  CHECK(read_all(column->id()) == std::vector<std::int32_t>{0, 1, 2, 3, 4, 5, 42});
  // Extended but never written rows read as the fill value.
  const hsize_t size[1] = {9};
  REQUIRE(H5Dset_extent(column->id(), size) >= 0);
  CHECK(read_all(column->id()) == std::vector<std::int32_t>{0, 1, 2, 3, 4, 5, 42, -1, -1});
}

TEST_CASE("direct chunk writes leave the same dataset as H5Dwrite, falling back where a flush handed part over") {
  TempDir dir;
  constexpr std::uint64_t kChunk = 16, kSlack = 7;
  for (const std::uint64_t cols : {std::uint64_t{0}, std::uint64_t{3}}) {
    CAPTURE(cols);
    const std::uint64_t per_row = cols > 0 ? cols : 1;
    std::vector<std::vector<std::int32_t>> contents;
    std::vector<std::uint64_t> direct;
    for (const bool use_direct : {false, true}) {
      const std::string file =
          (dir.path() / ("d" + std::to_string(cols) + (use_direct ? "d" : "s") + ".h5")).string();
      weir::h5::File f{H5Fcreate(file.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT)};
      REQUIRE(f.valid());
      ColumnSpec spec{"x", H5T_NATIVE_INT32, H5T_NATIVE_INT32, 4 * per_row, kChunk, kSlack};
      spec.cache = false;
      spec.cols = cols;
      spec.direct = use_direct;
      auto column = Column::create(f.get(), spec, file + " /x");
      REQUIRE(column);
      std::mt19937_64 rng(11);
      std::int32_t next = 0;
      for (int i = 0; i < 300; ++i) {
        const auto rows = static_cast<std::uint64_t>(rng() % kSlack) + 1;
        std::vector<std::int32_t> values(rows * per_row);
        std::iota(values.begin(), values.end(), next);
        next += static_cast<std::int32_t>(values.size());
        std::memcpy(column->stage_end(), values.data(), values.size() * sizeof(std::int32_t));
        column->commit(rows);
        if (column->chunk_ready()) REQUIRE(column->write_chunks());
        if (rng() % 16 == 0) REQUIRE(column->write_partial());
      }
      REQUIRE(column->write_partial());
      weir::h5::Space space{H5Dget_space(column->id())};
      hsize_t dims[2] = {0, 0};
      REQUIRE(H5Sget_simple_extent_dims(space.get(), dims, nullptr) == (cols > 0 ? 2 : 1));
      CHECK(dims[0] == column->size());
      std::vector<std::int32_t> out(dims[0] * per_row);
      REQUIRE(H5Dread(column->id(), H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) >= 0);
      std::vector<std::int32_t> expected(out.size());
      std::iota(expected.begin(), expected.end(), 0);
      CHECK(out == expected);
      contents.push_back(std::move(out));
      direct.push_back(column->direct_chunks());
      if (use_direct) {
        const std::uint64_t whole = column->size() / kChunk;
        CHECK(column->direct_chunks() > 0);
        CHECK(column->direct_chunks() < whole);  // chunks a partial flush had begun went through H5Dwrite
      }
    }
    CHECK(contents[0] == contents[1]);
    CHECK(direct[0] == 0);
  }
}

TEST_CASE("a column whose memory type differs from its file type never writes chunks directly") {
  TempDir dir;
  const std::string file = (dir.path() / "t.h5").string();
  weir::h5::File f{H5Fcreate(file.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT)};
  ColumnSpec spec{"x", H5T_NATIVE_INT64, H5T_NATIVE_INT32, 4, 8, 1};
  spec.cache = false;
  spec.direct = true;
  auto column = Column::create(f.get(), spec, file + " /x");
  REQUIRE(column);
  for (std::int32_t v = 0; v < 40; ++v) {
    std::memcpy(column->stage_end(), &v, sizeof v);
    column->commit(1);
    if (column->chunk_ready()) REQUIRE(column->write_chunks());
  }
  CHECK(column->direct_chunks() == 0);
  std::vector<std::int32_t> expected(40);
  std::iota(expected.begin(), expected.end(), 0);
  CHECK(read_all(column->id()) == expected);  // converted by HDF5 to int64 and back
}

}  // TEST_SUITE

TEST_CASE("an encoded column holds exactly the committed elements, whatever the codec, threads and flushes") {
  TempDir dir;
  constexpr std::uint64_t kChunk = 16, kSlack = 7;
  for (const char* name : {"shuffle+deflate:1", "lz4", "shuffle+lz4", "zstd:1", "shuffle+zstd:3", "bitshuffle+lz4"})
    for (const unsigned threads : {0U, 2U}) {
      CAPTURE(name);
      CAPTURE(threads);
      auto chosen = weir::codec::parse(name);
      REQUIRE(chosen);
      EncodePool pool(threads);
      const std::string file = (dir.path() / (std::to_string(threads) + std::string(name) + ".h5")).string();
      weir::h5::File f{H5Fcreate(file.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT)};
      REQUIRE(f.valid());
      ColumnSpec spec{"x", H5T_NATIVE_INT32, H5T_NATIVE_INT32, 4 * 3, kChunk, kSlack};
      spec.cols = 3;
      spec.cache = false;
      spec.codec = *chosen;
      spec.codec_element_bytes = 4;
      spec.pool = &pool;
      std::uint64_t whole_chunks = 0;
      std::vector<std::int32_t> committed;
      {
        auto column = Column::create(f.get(), spec, file + " /x");
        REQUIRE(column);
        std::mt19937_64 rng(5);
        std::int32_t next = 0;
        for (int i = 0; i < 400; ++i) {
          const auto rows = static_cast<std::uint64_t>(rng() % kSlack) + 1;
          std::vector<std::int32_t> values(rows * 3);
          for (std::int32_t& v : values) v = (next++ % 97) * (i % 3 == 0 ? 1 : 1000);  // compressible, mostly
          committed.insert(committed.end(), values.begin(), values.end());
          std::memcpy(column->stage_end(), values.data(), values.size() * sizeof(std::int32_t));
          column->commit(rows);
          if (column->chunk_ready()) REQUIRE(column->write_chunks());
          if (rng() % 32 == 0) REQUIRE(column->write_partial());
        }
        REQUIRE(column->write_partial());
        CHECK(column->written() == column->size());
        whole_chunks = column->size() / kChunk;
        CHECK(column->direct_chunks() >= whole_chunks);  // every chunk went whole, encoded, by H5Dwrite_chunk
        weir::h5::Space space{H5Dget_space(column->id())};
        hsize_t dims[2] = {0, 0};
        REQUIRE(H5Sget_simple_extent_dims(space.get(), dims, nullptr) == 2);
        CHECK(dims[0] == column->size());
        std::vector<std::int32_t> out(dims[0] * 3);
        REQUIRE(H5Dread(column->id(), H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) >= 0);
        CHECK(out == committed);
      }
      CHECK(pool.encoded() >= whole_chunks);  // every whole chunk was encoded by the pool, not inline
    }
}
