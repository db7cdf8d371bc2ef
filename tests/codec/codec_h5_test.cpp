// The key test: one HDF5 file with a chunked dataset per codec and element type, every chunk encoded
// by Encoder and written whole with H5Dwrite_chunk (filter mask 0), plus one per codec written by
// HDF5's own pipeline through the registered filter classes; read back (a) here with H5Dread,
// (b) by /usr/bin/python3 with h5py and hdf5plugin, (c) the LZ4 ones by h5dump and by h5py without
// hdf5plugin, through Debian's hdf5-filter-plugin.
#include <doctest/doctest.h>

#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "codec_data.hpp"
#include "scratch_dir.hpp"
#include "spawn.hpp"
#include "weir/codec/codec.hpp"

namespace weir::codec {
namespace {

constexpr hsize_t kChunkElements = 5003;             // not a multiple of 8: bitshuffle's leftover elements
constexpr hsize_t kElements = 3 * kChunkElements + 1234;  // the last chunk partly outside the extent
constexpr std::chrono::seconds kReaderTimeout{120};

struct ElementType {
  const char* name;  // the dataset's name suffix and the expected dataset's name
  hid_t type;
  std::size_t bytes;
};

std::array<ElementType, 4> element_types() {
  return {{{"u8", H5T_NATIVE_UINT8, 1}, {"i16", H5T_NATIVE_INT16, 2}, {"f32", H5T_NATIVE_FLOAT, 4}, {"f64", H5T_NATIVE_DOUBLE, 8}}};
}

// kElements values of a type: detector pulses (u8: their low bytes), f32 noise, f64 noise.
std::vector<std::byte> values_of(const ElementType& t) {
  switch (t.bytes) {
    case 1: {
      auto codes = test::detector_codes(kElements);
      std::vector<std::byte> low(kElements);
      for (hsize_t i = 0; i < kElements; ++i) low[i] = codes[2 * i];
      return low;
    }
    case 2: return test::detector_codes(kElements);
    case 4: return test::f32_noise(kElements);
    default: {
      auto noise = test::f32_noise(kElements, 9);
      std::vector<std::byte> out(kElements * 8);
      for (hsize_t i = 0; i < kElements; ++i) {
        float f = 0;
        std::memcpy(&f, noise.data() + i * 4, 4);
        const double d = static_cast<double>(f) * 1e3;
        std::memcpy(out.data() + i * 8, &d, 8);
      }
      return out;
    }
  }
}

std::string safe(std::string name) {
  for (char& c : name)
    if (c == '+' || c == ':') c = '_';
  return name;
}

hid_t make_dataset(hid_t file, const std::string& path, const ElementType& t, const Codec* codec) {
  const hsize_t dims[1] = {kElements};
  const hsize_t chunk[1] = {kChunkElements};
  const hid_t space = H5Screate_simple(1, dims, nullptr);
  const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  REQUIRE(H5Pset_chunk(dcpl, 1, chunk) >= 0);
  if (codec != nullptr) {
    auto ok = set_filters(dcpl, *codec, t.bytes, path);
    REQUIRE_MESSAGE(ok, (ok ? "" : ok.error().what));
  }
  const hid_t dataset = H5Dcreate2(file, path.c_str(), t.type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  REQUIRE_MESSAGE(dataset >= 0, path);
  H5Pclose(dcpl);
  H5Sclose(space);
  if (codec != nullptr) {
    const std::string text = name(*codec);
    const hid_t str = H5Tcopy(H5T_C_S1);
    H5Tset_size(str, text.size());
    const hid_t scalar = H5Screate(H5S_SCALAR);
    const hid_t attr = H5Acreate2(dataset, "codec", str, scalar, H5P_DEFAULT, H5P_DEFAULT);
    REQUIRE(H5Awrite(attr, str, text.data()) >= 0);
    H5Aclose(attr);
    H5Sclose(scalar);
    H5Tclose(str);
  }
  return dataset;
}

// Every chunk through Encoder and H5Dwrite_chunk; the last chunk padded with zeros to its full size.
void write_chunks(hid_t dataset, const Codec& codec, const ElementType& t, const std::vector<std::byte>& values) {
  Encoder encoder(codec, t.bytes);
  std::vector<std::byte> chunk(kChunkElements * t.bytes);
  for (hsize_t first = 0; first < kElements; first += kChunkElements) {
    const hsize_t n = std::min(kChunkElements, kElements - first);
    std::fill(chunk.begin(), chunk.end(), std::byte{0});
    std::memcpy(chunk.data(), values.data() + first * t.bytes, n * t.bytes);
    auto stored = encoder.encode(chunk);
    REQUIRE_MESSAGE(stored, (stored ? "" : stored.error().what));
    const hsize_t offset[1] = {first};
    REQUIRE(H5Dwrite_chunk(dataset, H5P_DEFAULT, 0, offset, stored->size(), stored->data()) >= 0);
  }
}

std::vector<std::byte> read_all(hid_t file, const std::string& path, const ElementType& t) {
  const hid_t dataset = H5Dopen2(file, path.c_str(), H5P_DEFAULT);
  REQUIRE_MESSAGE(dataset >= 0, path);
  std::vector<std::byte> out(kElements * t.bytes);
  const herr_t rc = H5Dread(dataset, t.type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data());
  H5Dclose(dataset);
  REQUIRE_MESSAGE(rc >= 0, "H5Dread " << path);
  return out;
}

struct Reader {
  int code = -1;
  std::string out;
};

Reader run_reader(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
  test::SpawnOptions options;
  options.env = env;
  test::CapturedProcess child(test::command(WEIR_PYTHON, args), test::CapturedProcess::Output::merged, options);
  REQUIRE(child.valid());
  const test::ExitStatus status = child.wait(kReaderTimeout);
  return {status.exited ? status.code : -1, child.out()};
}

TEST_CASE("a file of H5Dwrite_chunk'd chunks, one dataset per codec, opens in HDF5, h5py, hdf5plugin and h5dump") {
  test::ScratchDir dir("codec-h5");
  const std::string path = dir.file("codecs.h5");
  std::size_t datasets = 0;
  {
    const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    REQUIRE(file >= 0);
    for (const ElementType& t : element_types()) {
      const auto values = values_of(t);
      const hid_t expected = make_dataset(file, std::string("expected_") + t.name, t, nullptr);
      REQUIRE(H5Dwrite(expected, t.type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) >= 0);
      H5Dclose(expected);
      for (const std::string& codec_name : test::kCodecNames) {
        const Codec codec = *parse(codec_name);
        const hid_t chunked = make_dataset(file, safe(codec_name) + "_" + t.name, t, &codec);
        write_chunks(chunked, codec, t, values);
        H5Dclose(chunked);
        ++datasets;
        if (t.bytes == 2) {  // the same values through HDF5's pipeline and the registered filter classes
          const hid_t piped = make_dataset(file, "pipeline_" + safe(codec_name) + "_" + t.name, t, &codec);
          REQUIRE(H5Dwrite(piped, t.type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) >= 0);
          H5Dclose(piped);
          ++datasets;
        }
      }
    }
    REQUIRE(H5Fclose(file) >= 0);
  }

  SUBCASE("(a) this process reads every dataset back with H5Dread through the registered filters") {
    REQUIRE(register_hdf5_filters());
    const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    REQUIRE(file >= 0);
    for (const ElementType& t : element_types()) {
      const auto values = values_of(t);
      for (const std::string& codec_name : test::kCodecNames) {
        CAPTURE(codec_name);
        CAPTURE(t.name);
        CHECK(read_all(file, safe(codec_name) + "_" + t.name, t) == values);
        if (t.bytes == 2) CHECK(read_all(file, "pipeline_" + safe(codec_name) + "_" + t.name, t) == values);
      }
    }
    H5Fclose(file);
  }

  SUBCASE("(b) h5py with hdf5plugin reads every dataset as the expected values") {
    const Reader r = run_reader({std::string(WEIR_CODEC_SCRIPTS) + "/read_codecs.py", "hdf5plugin", path, std::to_string(datasets)});
    INFO(r.out);
    CHECK(r.code == 0);
    // zstd datasets are left unread where no zstd plugin is installed (none is packaged by Debian).
    const std::size_t zstd = 4 * 3 + 3;
    CHECK((r.out.find("checked " + std::to_string(datasets) + " datasets") != std::string::npos ||
           r.out.find("checked " + std::to_string(datasets - zstd) + " datasets") != std::string::npos));
  }

  SUBCASE("(c) h5dump and plain h5py read the LZ4 datasets through Debian's hdf5-filter-plugin") {
    const Reader r = run_reader({std::string(WEIR_CODEC_SCRIPTS) + "/read_codecs.py", "plugin-path", path, WEIR_H5DUMP},
                                {std::string("HDF5_PLUGIN_PATH=") + WEIR_HDF5_PLUGIN_DIR});
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(r.out.find("h5dump printed") != std::string::npos);
  }
}

}  // namespace
}  // namespace weir::codec
