// A channel's gaps table: why and where blocks are missing, each reason looked up by its name.
#include <algorithm>
#include <iterator>

#include "recording_parts.hpp"
#include "weir/h5/recording_format.hpp"

namespace weir::h5::detail {

namespace {

// Memory layout for reading a gaps table; HDF5 matches the fields by name. Unlike the format's
// GapRow, reason is u32: a file's reason may be an integer or an enumeration of any width.
struct GapReadRow {
  std::uint64_t sequence;
  std::uint64_t blocks;
  std::uint32_t reason;
  std::uint64_t realtime_ns;
};

// The memory type to read a gaps table with: the file's reason may be an integer or an enumeration.
Type read_row_type(hid_t file_type) {
  Type reason(H5Tcopy(H5T_NATIVE_UINT32));
  const int index = H5Tget_member_index(file_type, kGapReason);
  if (index >= 0) {
    const Type stored(H5Tget_member_type(file_type, static_cast<unsigned>(index)));
    if (H5Tget_class(stored.get()) == H5T_ENUM) {  // enum -> enum converts by name; keep the values
      reason = Type(H5Tenum_create(H5T_NATIVE_UINT32));
      const Type base(H5Tget_super(stored.get()));
      for (int m = 0; m < H5Tget_nmembers(stored.get()); ++m) {
        std::uint64_t raw = 0;
        H5Tget_member_value(stored.get(), static_cast<unsigned>(m), &raw);
        H5Tconvert(base.get(), H5T_NATIVE_UINT64, 1, &raw, nullptr, H5P_DEFAULT);
        const auto value = static_cast<std::uint32_t>(raw);
        char* name = H5Tget_member_name(stored.get(), static_cast<unsigned>(m));
        H5Tenum_insert(reason.get(), name, &value);
        H5free_memory(name);
      }
    }
  }
  Type t(H5Tcreate(H5T_COMPOUND, sizeof(GapReadRow)));
  H5Tinsert(t.get(), kGapSequence, HOFFSET(GapReadRow, sequence), H5T_NATIVE_UINT64);
  H5Tinsert(t.get(), kGapBlocks, HOFFSET(GapReadRow, blocks), H5T_NATIVE_UINT64);
  H5Tinsert(t.get(), kGapReason, HOFFSET(GapReadRow, reason), reason.get());
  H5Tinsert(t.get(), kGapRealtimeNs, HOFFSET(GapReadRow, realtime_ns), H5T_NATIVE_UINT64);
  return t;
}

// The table's reason names in order: its reason_names attribute, or the format's list.
std::vector<std::string> reason_names(hid_t table, const Place& place) {
  std::vector<std::string> names(kGapReasonNames.begin(), kGapReasonNames.end());
  if (!has_attr(table, kAttrReasonNames)) return names;
  auto text = text_attr(table, kAttrReasonNames, place);
  if (!text) return names;
  names.clear();
  std::size_t start = 0;
  while (start <= text->size()) {
    std::size_t end = text->find(',', start);
    if (end == std::string::npos) end = text->size();
    std::string name = text->substr(start, end - start);
    name.erase(0, name.find_first_not_of(" \n"));
    name.erase(name.find_last_not_of(" \n") + 1);
    names.push_back(std::move(name));
    start = end + 1;
  }
  return names;
}

}  // namespace

core::Result<std::vector<GapRead>> read_gaps(hid_t group, const Place& place) {
  auto dataset = open_dataset(group, kGaps, place);
  if (!dataset) return tl::make_unexpected(dataset.error());
  const Place here{place.file, place.path + "/" + kGaps};
  auto n = dataset_length(dataset->get(), here);
  if (!n) return tl::make_unexpected(n.error());
  const Type stored(H5Dget_type(dataset->get()));
  if (H5Tget_class(stored.get()) != H5T_COMPOUND) return tl::make_unexpected(refuse(here, "is not a table"));
  for (const char* field : {kGapSequence, kGapBlocks, kGapReason, kGapRealtimeNs})
    if (H5Tget_member_index(stored.get(), field) < 0)
      return tl::make_unexpected(refuse(here, std::string("lacks the field ") + field));
  std::vector<GapReadRow> rows(*n);
  const Type memory = read_row_type(stored.get());
  if (*n > 0 && H5Dread(dataset->get(), memory.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, rows.data()) < 0)
    return tl::make_unexpected(refuse(here, "cannot be read: " + last_error()));

  const std::vector<std::string> names = reason_names(dataset->get(), here);
  std::vector<GapRead> out;
  for (const GapReadRow& row : rows) {
    if (row.reason == kUnwrittenReason) continue;
    GapRead g;
    g.sequence = row.sequence;
    g.blocks = row.blocks;
    g.realtime_ns = row.realtime_ns;
    const std::string name = row.reason < names.size() ? names[row.reason] : "";
    const auto known = std::find(kGapReasonNames.begin(), kGapReasonNames.end(), name);
    g.reason =
        known != kGapReasonNames.end() ? static_cast<std::uint32_t>(known - kGapReasonNames.begin()) : row.reason;
    g.dropped_at_source = name == kGapReasonNames[static_cast<std::size_t>(GapReason::dropped_at_source)];
    out.push_back(g);
  }
  return out;
}

}  // namespace weir::h5::detail
