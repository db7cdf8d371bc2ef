// Test recordings in the layout of docs/design/recording.md, written with the HDF5 C library.
#include "recording_writer.hpp"

#include <doctest/doctest.h>
#include <hdf5.h>

#include <cstring>

#include "weir/core/channel.hpp"
#include "weir/h5/attribute.hpp"
#include "weir/h5/handle.hpp"
#include "weir/h5/recording_format.hpp"
#include "weir/h5/sample_type.hpp"
#include "weir/h5/types.hpp"

namespace weir::test {

namespace {

using namespace weir::h5;  // the format's names and the HDF5 writing helpers

constexpr std::uint64_t kNsPerSecond = 1'000'000'000;
constexpr std::uint64_t kStartNs = 1'704'067'200 * kNsPerSecond;  // 2024-01-01T00:00:00Z, every file's start

void text_attr(hid_t object, const char* name, const std::string& value, bool fixed) {
  const auto width = static_cast<std::uint32_t>(value.empty() ? 1 : value.size());
  auto ok = fixed ? attr_fixed_text(object, name, value, width) : attr_text(object, name, value);
  REQUIRE_MESSAGE(ok, (ok ? "" : ok.error().what));
}

void require(const core::Result<void>& ok) { REQUIRE_MESSAGE(ok, (ok ? "" : ok.error().what)); }

Group group(hid_t parent, const char* name, const char* nx_class, const RecFileOptions& o) {
  Group g(H5Gcreate2(parent, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  REQUIRE(g);
  text_attr(g.get(), kAttrNxClass, nx_class, o.fixed_strings);
  return g;
}

// A chunked, extendible 1-D dataset as the recorder makes them, written in one go.
void write_dataset(hid_t group, const char* name, hid_t type, const void* data, std::uint64_t count) {
  const hsize_t dims[1] = {count}, max_dims[1] = {H5S_UNLIMITED}, chunk[1] = {64};
  Space space(H5Screate_simple(1, dims, max_dims));
  PropList plist(H5Pcreate(H5P_DATASET_CREATE));
  REQUIRE(H5Pset_chunk(plist.get(), 1, chunk) >= 0);
  Dataset dataset(H5Dcreate2(group, name, type, space.get(), H5P_DEFAULT, plist.get(), H5P_DEFAULT));
  REQUIRE(dataset);
  if (count > 0) REQUIRE(H5Dwrite(dataset.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0);
}

// A key's log group and its two datasets, as the recorder writes them.
void write_key(hid_t keys, const RecKey& k, const RecFileOptions& o) {
  const Group log = group(keys, encode_name(k.name).c_str(), kNxLog, o);
  text_attr(log.get(), kAttrKey, k.name, o.fixed_strings);
  write_dataset(log.get(), kKeyTime, H5T_NATIVE_DOUBLE, k.time.data(), k.time.size());
  if (!k.text.empty()) {
    std::vector<const char*> values;
    for (const std::string& t : k.text) values.push_back(t.c_str());
    const Type text = text_type();
    write_dataset(log.get(), kKeyValue, text.get(), values.data(), values.size());
  } else if (!k.array.empty()) {
    const int rank = 1 + static_cast<int>(k.shape.size());
    hsize_t dims[3] = {k.array.size(), k.shape[0], k.shape.size() > 1 ? k.shape[1] : 0};
    hsize_t max_dims[3] = {H5S_UNLIMITED, dims[1], dims[2]}, chunk[3] = {16, dims[1], dims[2]};
    Space space(H5Screate_simple(rank, dims, max_dims));
    PropList plist(H5Pcreate(H5P_DATASET_CREATE));
    REQUIRE(H5Pset_chunk(plist.get(), rank, chunk) >= 0);
    Dataset value(H5Dcreate2(log.get(), kKeyValue, H5T_NATIVE_UINT32, space.get(), H5P_DEFAULT, plist.get(), H5P_DEFAULT));
    REQUIRE(value);
    std::vector<std::uint32_t> rows;
    for (const std::vector<std::uint32_t>& r : k.array) rows.insert(rows.end(), r.begin(), r.end());
    REQUIRE(H5Dwrite(value.get(), H5T_NATIVE_UINT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows.data()) >= 0);
    text_attr(value.get(), kAttrDtype, "u32", o.fixed_strings);
    require(attr_u32_array(value.get(), kAttrArrayShape, k.shape));
  } else {
    write_dataset(log.get(), kKeyValue, H5T_NATIVE_DOUBLE, k.numbers.data(), k.numbers.size());
  }
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
  const Group g = group(entry, link.c_str(), kNxData, o);
  text_attr(g.get(), kAttrSignal, kData, o.fixed_strings);
  text_attr(g.get(), kAttrChannel, c.name, o.fixed_strings);

  std::vector<std::uint64_t> offsets;
  const std::vector<std::byte> data = samples_of(c, offsets);
  auto dtype = core::parse_dtype(c.dtype);
  REQUIRE((dtype && (*dtype == core::Dtype::u32 || *dtype == core::Dtype::f32 || *dtype == core::Dtype::c64)));
  const Type type = sample_type(*dtype);
  const std::uint64_t total = data.size() / H5Tget_size(type.get());
  if (o.omit_dataset != kData) {
    write_dataset(g.get(), kData, type.get(), data.data(), total);
    Dataset d(H5Dopen2(g.get(), kData, H5P_DEFAULT));
    text_attr(d.get(), kAttrUnits, c.units, o.fixed_strings);
    require(attr_f64(d.get(), kAttrSampleRateHz, c.rate_hz));
    text_attr(d.get(), kAttrLabels, c.labels, o.fixed_strings);
    text_attr(d.get(), kAttrDtype, c.dtype, o.fixed_strings);
    require(attr_u32(d.get(), kAttrSamplesPerBlock, c.samples_per_block));
    const std::uint64_t first_ns = c.blocks.empty() ? 0 : c.blocks.front().realtime_ns;
    text_attr(d.get(), kAttrFirstSampleTime, iso8601_ns(kStartNs), o.fixed_strings);
    require(attr_u64(d.get(), kAttrFirstSampleNs, first_ns));
    require(attr_u64(d.get(), kAttrFirstSampleIndex, 0));
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
    seq.push_back(kUnwrittenSequence);
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
  table(kBlockSequence, H5T_NATIVE_UINT64, seq.data(), seq.size());
  table(kBlockOffset, H5T_NATIVE_UINT64, offsets.data(), offsets.size());
  table(kBlockSamples, H5T_NATIVE_UINT32, samples.data(), samples.size());
  table(kBlockRealtimeNs, H5T_NATIVE_UINT64, realtime.data(), realtime.size());
  table(kBlockMonotonicNs, H5T_NATIVE_UINT64, monotonic.data(), monotonic.size());
  table(kBlockFlags, H5T_NATIVE_UINT32, flags.data(), flags.size());

  if (o.omit_dataset != kGaps) {
    const Type gap_type = gap_row_type(false);  // rows as in memory: a reader matches the fields by name
    std::vector<GapRow> rows;
    for (const RecGap& gap : c.gaps) rows.push_back(GapRow{gap.sequence, gap.blocks, gap.reason, gap.realtime_ns});
    if (o.unwritten_rows) rows.push_back(GapRow{0, 0, kUnwrittenReason, 0});
    write_dataset(g.get(), kGaps, gap_type.get(), rows.data(), rows.size());
    Dataset d(H5Dopen2(g.get(), kGaps, H5P_DEFAULT));
    text_attr(d.get(), kAttrReasonNames, std::string(kGapReasonList), o.fixed_strings);
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
  File file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
  REQUIRE(file);
  const hid_t root = file.get();
  if (!o.format.empty()) text_attr(root, kAttrFormat, o.format, o.fixed_strings);
  text_attr(root, kAttrVersion, "0.1.0", o.fixed_strings);
  require(attr_u64(root, kAttrRun, o.run));
  require(attr_u64(root, kAttrSegment, o.segment));
  const std::uint64_t start_ns = o.start_ns != 0 ? o.start_ns : kStartNs;
  text_attr(root, kAttrStartTime, iso8601_ns(start_ns), o.fixed_strings);
  text_attr(root, kAttrStopTime, iso8601_ns(start_ns + kNsPerSecond), o.fixed_strings);
  require(attr_u64(root, kAttrStartNs, start_ns));
  text_attr(root, kAttrHost, "testhost", o.fixed_strings);
  text_attr(root, kAttrArena, "recorded", o.fixed_strings);
  text_attr(root, kAttrArenaGeometry, "slots=64", o.fixed_strings);
  text_attr(root, kAttrPipeline, "", o.fixed_strings);
  if (o.arena_created_ns != 0) require(attr_u64(root, kAttrArenaCreatedNs, o.arena_created_ns));
  const Group entry = group(root, kEntry, kNxEntry, o);
  for (const RecChannel& c : channels) write_channel(entry.get(), c, o);
  // A key log, as the recorder keeps them beside the channels: replay must pass it by.
  const Group keys = group(entry.get(), kKeys, kNxCollection, o);
  const Group temperature = group(keys.get(), "temperature", kNxLog, o);
  text_attr(temperature.get(), kAttrKey, "temperature", o.fixed_strings);
  const double time[2] = {0.0, 0.5}, value[2] = {21.5, 21.7};
  write_dataset(temperature.get(), kKeyTime, H5T_NATIVE_DOUBLE, time, 2);
  write_dataset(temperature.get(), kKeyValue, H5T_NATIVE_DOUBLE, value, 2);
  for (const RecKey& k : o.keys) write_key(keys.get(), k, o);
  REQUIRE(file.reset());
}

}  // namespace weir::test
