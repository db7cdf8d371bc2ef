// Test recordings in the layout of docs/design/recording.md, written with the HDF5 C library.
#include "recording_writer.hpp"

#include <doctest/doctest.h>
#include <hdf5.h>

#include <cstring>

#include "weir/h5/handle.hpp"

namespace weir::test {

namespace {

using h5::Handle;

struct GapRow {  // the format's gaps compound
  std::uint64_t sequence;
  std::uint64_t blocks;
  std::uint8_t reason;
  std::uint64_t realtime_ns;
};

void text_attr(hid_t object, const char* name, const std::string& value, bool fixed) {
  Handle type(H5Tcopy(H5T_C_S1));
  REQUIRE(type);
  Handle space(H5Screate(H5S_SCALAR));
  if (fixed) {
    H5Tset_size(type.get(), value.empty() ? 1 : value.size());
    H5Tset_strpad(type.get(), H5T_STR_NULLPAD);
    Handle attr(H5Acreate2(object, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT));
    REQUIRE(attr);
    std::string padded = value;
    padded.resize(H5Tget_size(type.get()), '\0');
    REQUIRE(H5Awrite(attr.get(), type.get(), padded.data()) >= 0);
    return;
  }
  H5Tset_size(type.get(), H5T_VARIABLE);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  Handle attr(H5Acreate2(object, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT));
  REQUIRE(attr);
  const char* text = value.c_str();
  REQUIRE(H5Awrite(attr.get(), type.get(), &text) >= 0);
}

template <class T>
void number_attr(hid_t object, const char* name, hid_t type, T value) {
  Handle space(H5Screate(H5S_SCALAR));
  Handle attr(H5Acreate2(object, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT));
  REQUIRE(attr);
  REQUIRE(H5Awrite(attr.get(), type, &value) >= 0);
}

// A chunked, extendible 1-D dataset as the recorder makes them, written in one go.
void write_dataset(hid_t group, const char* name, hid_t type, const void* data, std::uint64_t count) {
  const hsize_t dims[1] = {count}, max_dims[1] = {H5S_UNLIMITED}, chunk[1] = {64};
  Handle space(H5Screate_simple(1, dims, max_dims));
  Handle plist(H5Pcreate(H5P_DATASET_CREATE));
  REQUIRE(H5Pset_chunk(plist.get(), 1, chunk) >= 0);
  Handle dataset(H5Dcreate2(group, name, type, space.get(), H5P_DEFAULT, plist.get(), H5P_DEFAULT));
  REQUIRE(dataset);
  if (count > 0) REQUIRE(H5Dwrite(dataset.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0);
}

Handle sample_type(const std::string& dtype) {
  if (dtype == "u32") return Handle(H5Tcopy(H5T_NATIVE_UINT32));
  if (dtype == "f32") return Handle(H5Tcopy(H5T_NATIVE_FLOAT));
  REQUIRE(dtype == "c64");
  Handle t(H5Tcreate(H5T_COMPOUND, 2 * sizeof(float)));
  H5Tinsert(t.get(), "r", 0, H5T_NATIVE_FLOAT);
  H5Tinsert(t.get(), "i", sizeof(float), H5T_NATIVE_FLOAT);
  return t;
}

std::vector<std::byte> samples_of(const RecChannel& c, std::vector<std::uint64_t>& offsets) {
  const std::size_t sample_bytes = c.dtype == "c64" ? 8 : 4;
  std::vector<std::byte> data;
  for (const RecBlock& b : c.blocks) {
    offsets.push_back(data.size() / sample_bytes);
    for (std::uint32_t i = 0; i < b.samples; ++i) {
      std::byte sample[8];
      if (c.dtype == "u32") {
        const std::uint32_t v = u32_sample(b.sequence, i);
        std::memcpy(sample, &v, 4);
      } else if (c.dtype == "f32") {
        const float v = f32_sample(b.sequence, i);
        std::memcpy(sample, &v, 4);
      } else {
        const float v[2] = {static_cast<float>(b.sequence), -static_cast<float>(i)};
        std::memcpy(sample, v, 8);
      }
      data.insert(data.end(), sample, sample + sample_bytes);
    }
  }
  return data;
}

void write_channel(hid_t entry, const RecChannel& c, const RecFileOptions& o) {
  const std::string link = c.link.empty() ? c.name : c.link;
  Handle g(H5Gcreate2(entry, link.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  REQUIRE(g);
  text_attr(g.get(), "NX_class", "NXdata", o.fixed_strings);
  text_attr(g.get(), "signal", "data", o.fixed_strings);
  text_attr(g.get(), "channel", c.name, o.fixed_strings);

  std::vector<std::uint64_t> offsets;
  const std::vector<std::byte> data = samples_of(c, offsets);
  const Handle type = sample_type(c.dtype);
  const std::uint64_t total = data.size() / H5Tget_size(type.get());
  if (o.omit_dataset != "data") {
    write_dataset(g.get(), "data", type.get(), data.data(), total);
    Handle d(H5Dopen2(g.get(), "data", H5P_DEFAULT));
    text_attr(d.get(), "units", c.units, o.fixed_strings);
    number_attr(d.get(), "sample_rate_hz", H5T_NATIVE_DOUBLE, c.rate_hz);
    text_attr(d.get(), "labels", c.labels, o.fixed_strings);
    text_attr(d.get(), "dtype", c.dtype, o.fixed_strings);
    number_attr(d.get(), "samples_per_block", H5T_NATIVE_UINT32, c.samples_per_block);
    const std::uint64_t first_ns = c.blocks.empty() ? 0 : c.blocks.front().realtime_ns;
    text_attr(d.get(), "first_sample_time", "2024-01-01T00:00:00.000000000Z", o.fixed_strings);
    number_attr(d.get(), "first_sample_ns", H5T_NATIVE_UINT64, first_ns);
    number_attr(d.get(), "first_sample_index", H5T_NATIVE_UINT64, std::uint64_t{0});
  }

  std::vector<std::uint64_t> seq, realtime, monotonic;
  std::vector<std::uint32_t> samples, flags;
  for (const RecBlock& b : c.blocks) {
    seq.push_back(b.sequence);
    samples.push_back(b.samples);
    flags.push_back(b.flags);
    realtime.push_back(b.realtime_ns);
    monotonic.push_back(b.monotonic_ns);
  }
  if (o.unwritten_rows) {  // extended, never written: every table at its fill value
    seq.push_back(~std::uint64_t{0});
    offsets.push_back(0);
    samples.push_back(0);
    flags.push_back(0);
    realtime.push_back(0);
    monotonic.push_back(0);
  }
  if (o.short_offsets && !c.blocks.empty()) offsets.resize(c.blocks.size() - 1);
  const auto table = [&](const char* name, hid_t t, const void* p, std::size_t n) {
    if (o.omit_dataset != name) write_dataset(g.get(), name, t, p, n);
  };
  table("block_sequence", H5T_NATIVE_UINT64, seq.data(), seq.size());
  table("block_offset", H5T_NATIVE_UINT64, offsets.data(), offsets.size());
  table("block_samples", H5T_NATIVE_UINT32, samples.data(), samples.size());
  table("block_realtime_ns", H5T_NATIVE_UINT64, realtime.data(), realtime.size());
  table("block_monotonic_ns", H5T_NATIVE_UINT64, monotonic.data(), monotonic.size());
  table("block_flags", H5T_NATIVE_UINT32, flags.data(), flags.size());

  if (o.omit_dataset != "gaps") {
    Handle gap_type(H5Tcreate(H5T_COMPOUND, sizeof(GapRow)));
    H5Tinsert(gap_type.get(), "sequence", HOFFSET(GapRow, sequence), H5T_NATIVE_UINT64);
    H5Tinsert(gap_type.get(), "blocks", HOFFSET(GapRow, blocks), H5T_NATIVE_UINT64);
    H5Tinsert(gap_type.get(), "reason", HOFFSET(GapRow, reason), H5T_NATIVE_UINT8);
    H5Tinsert(gap_type.get(), "realtime_ns", HOFFSET(GapRow, realtime_ns), H5T_NATIVE_UINT64);
    std::vector<GapRow> rows;
    for (const RecGap& gap : c.gaps) rows.push_back(GapRow{gap.sequence, gap.blocks, gap.reason, gap.realtime_ns});
    if (o.unwritten_rows) rows.push_back(GapRow{0, 0, 255, 0});
    write_dataset(g.get(), "gaps", gap_type.get(), rows.data(), rows.size());
    Handle d(H5Dopen2(g.get(), "gaps", H5P_DEFAULT));
    text_attr(d.get(), "reason_names", "lapped,dropped_at_source,recorder_restart,recorder_stopped,disk_error",
              o.fixed_strings);
  }
}

}  // namespace

std::vector<RecBlock> rec_blocks(std::uint64_t first, std::uint64_t count, std::uint32_t samples,
                                 std::uint64_t realtime0_ns, std::uint64_t monotonic0_ns, std::uint64_t period_ns) {
  std::vector<RecBlock> out;
  for (std::uint64_t s = first; s < first + count; ++s)
    out.push_back(RecBlock{s, samples, static_cast<std::uint32_t>(s % 7), realtime0_ns + (s - first) * period_ns,
                           monotonic0_ns + (s - first) * period_ns});
  return out;
}

void write_recording(const std::string& path, const std::vector<RecChannel>& channels, const RecFileOptions& o) {
  Handle file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
  REQUIRE(file);
  if (!o.format.empty()) text_attr(file.get(), "weir_format", o.format, o.fixed_strings);
  text_attr(file.get(), "weir_version", "0.1.0", o.fixed_strings);
  number_attr(file.get(), "run", H5T_NATIVE_UINT64, o.run);
  number_attr(file.get(), "segment", H5T_NATIVE_UINT64, o.segment);
  text_attr(file.get(), "start_time", "2024-01-01T00:00:00.000000000Z", o.fixed_strings);
  text_attr(file.get(), "stop_time", "2024-01-01T00:00:01.000000000Z", o.fixed_strings);
  text_attr(file.get(), "host", "testhost", o.fixed_strings);
  text_attr(file.get(), "arena", "recorded", o.fixed_strings);
  text_attr(file.get(), "arena_geometry", "slots=64", o.fixed_strings);
  text_attr(file.get(), "pipeline", "", o.fixed_strings);
  if (o.arena_created_ns != 0) number_attr(file.get(), "arena_created_ns", H5T_NATIVE_UINT64, o.arena_created_ns);
  Handle entry(H5Gcreate2(file.get(), "entry", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  REQUIRE(entry);
  text_attr(entry.get(), "NX_class", "NXentry", o.fixed_strings);
  for (const RecChannel& c : channels) write_channel(entry.get(), c, o);
  // A key log, as the recorder keeps them beside the channels: replay must pass it by.
  Handle keys(H5Gcreate2(entry.get(), "keys", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  text_attr(keys.get(), "NX_class", "NXcollection", o.fixed_strings);
  Handle temperature(H5Gcreate2(keys.get(), "temperature", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  text_attr(temperature.get(), "NX_class", "NXlog", o.fixed_strings);
  text_attr(temperature.get(), "key", "temperature", o.fixed_strings);
  const double time[2] = {0.0, 0.5}, value[2] = {21.5, 21.7};
  write_dataset(temperature.get(), "time", H5T_NATIVE_DOUBLE, time, 2);
  write_dataset(temperature.get(), "value", H5T_NATIVE_DOUBLE, value, 2);
  REQUIRE(file.reset());
}

}  // namespace weir::test
