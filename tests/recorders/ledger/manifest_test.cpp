// Checksum manifests and hand-off markers: the digest of known bytes, a manifest written and read
// back (and read by sha256sum -c), the refusals that name the manifest and its line.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "scratch_dir.hpp"
#include "weir/ledger/manifest.hpp"

using namespace weir;
using namespace weir::ledger;
using weir::test::ScratchDir;

namespace {

void write(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

}  // namespace

TEST_SUITE("recorders.ledger.manifest") {

TEST_CASE("the digest of known bytes is their SHA-256, with their size") {
  ScratchDir dir("manifest");
  write(dir.path() / "abc.h5", "abc");
  auto d = digest_file(dir.path() / "abc.h5");
  REQUIRE(d);
  CHECK(d->sha256 == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(d->bytes == 3);
  write(dir.path() / "empty.h5", "");
  auto e = digest_file(dir.path() / "empty.h5");
  REQUIRE(e);
  CHECK(e->sha256 == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST_CASE("a manifest written is read back, and sha256sum -c reads it") {
  ScratchDir dir("manifest");
  const auto file = dir.path() / "lab_run000017_0002.h5";
  write(file, std::string(3'000'000, 'x'));
  auto d = digest_file(file);
  REQUIRE(d);
  d->run = 17;
  REQUIRE(write_manifest(file, *d));
  CHECK(manifest_path(file).filename() == "lab_run000017_0002.h5.sha256");
  auto back = read_manifest(manifest_path(file));
  REQUIRE(back);
  CHECK(back->sha256 == d->sha256);
  CHECK(back->bytes == 3'000'000);
  CHECK(back->run == 17);
  const std::string check = "cd '" + dir.path().string() + "' && sha256sum -c --strict --quiet lab_run000017_0002.h5.sha256";
  CHECK(std::system(check.c_str()) == 0);
}

TEST_CASE("a manifest that is not one is refused, naming it and its line") {
  ScratchDir dir("manifest");
  const auto bad = dir.path() / "x.h5.sha256";
  write(bad, "# weir-manifest run=1 bytes=3\nnot a checksum  x.h5\n");
  auto r = read_manifest(bad);
  REQUIRE_FALSE(r);
  CHECK(r.error().what.find(bad.string() + ":2") != std::string::npos);
  write(bad, "");
  CHECK_FALSE(read_manifest(bad));
}

TEST_CASE("a hand-off marker is written once and seen") {
  ScratchDir dir("manifest");
  const auto file = dir.path() / "lab_run000001_0000.h5";
  write(file, "data");
  CHECK_FALSE(handed_over(file));
  REQUIRE(mark_handed(file, 123, 2, "cp \"a\" b"));
  CHECK(handed_over(file));
  std::ifstream in(handed_path(file));
  std::string line;
  std::getline(in, line);
  CHECK(line == R"({"file": "lab_run000001_0000.h5", "handed_ns": 123, "attempts": 2, "command": "cp \"a\" b"})");
}

}  // TEST_SUITE
