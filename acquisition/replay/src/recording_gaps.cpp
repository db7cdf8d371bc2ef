// A channel's gaps table: why and where blocks are missing, each reason looked up by its name.
#include <algorithm>
#include <iterator>

#include "recording_parts.hpp"

namespace weir::acq::detail {

namespace {

constexpr std::uint32_t kUnwrittenReason = 255;  // the format's fill value: a row a failed write left unwritten
constexpr std::string_view kDroppedAtSource = "dropped_at_source";

struct GapRow {  // memory layout for reading a gaps table; HDF5 matches the fields by name
  std::uint64_t sequence;
  std::uint64_t blocks;
  std::uint32_t reason;
  std::uint64_t realtime_ns;
};

// The memory type to read a gaps table with: the file's reason may be an integer or an enumeration.
h5::Handle gap_row_type(hid_t file_type) {
  h5::Handle reason(H5Tcopy(H5T_NATIVE_UINT32));
  const int index = H5Tget_member_index(file_type, "reason");
  if (index >= 0) {
    const h5::Handle stored(H5Tget_member_type(file_type, static_cast<unsigned>(index)));
    if (H5Tget_class(stored.get()) == H5T_ENUM) {  // enum -> enum converts by name; keep the values
      reason = h5::Handle(H5Tenum_create(H5T_NATIVE_UINT32));
      const h5::Handle base(H5Tget_super(stored.get()));
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
  h5::Handle t(H5Tcreate(H5T_COMPOUND, sizeof(GapRow)));
  H5Tinsert(t.get(), "sequence", HOFFSET(GapRow, sequence), H5T_NATIVE_UINT64);
  H5Tinsert(t.get(), "blocks", HOFFSET(GapRow, blocks), H5T_NATIVE_UINT64);
  H5Tinsert(t.get(), "reason", HOFFSET(GapRow, reason), reason.get());
  H5Tinsert(t.get(), "realtime_ns", HOFFSET(GapRow, realtime_ns), H5T_NATIVE_UINT64);
  return t;
}

// The table's reason names in order: its reason_names attribute, or the format's list.
std::vector<std::string> reason_names(hid_t table, const H5Place& place) {
  std::vector<std::string> names(std::begin(kGapReasons), std::end(kGapReasons));
  if (!has_attr(table, "reason_names")) return names;
  auto text = read_text_attr(table, "reason_names", place);
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

core::Result<std::vector<GapRead>> read_gaps(hid_t group, const H5Place& place) {
  auto dataset = open_dataset(group, "gaps", place);
  if (!dataset) return tl::make_unexpected(dataset.error());
  const H5Place here{place.file, place.path + "/gaps"};
  auto n = dataset_length(dataset->get(), here);
  if (!n) return tl::make_unexpected(n.error());
  const h5::Handle stored(H5Dget_type(dataset->get()));
  if (H5Tget_class(stored.get()) != H5T_COMPOUND) return tl::make_unexpected(refuse(here, "is not a table"));
  for (const char* field : {"sequence", "blocks", "reason", "realtime_ns"})
    if (H5Tget_member_index(stored.get(), field) < 0)
      return tl::make_unexpected(refuse(here, std::string("lacks the field ") + field));
  std::vector<GapRow> rows(*n);
  const h5::Handle memory = gap_row_type(stored.get());
  if (*n > 0 && H5Dread(dataset->get(), memory.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, rows.data()) < 0)
    return tl::make_unexpected(refuse(here, "cannot be read: " + h5::last_error()));

  const std::vector<std::string> names = reason_names(dataset->get(), here);
  std::vector<GapRead> out;
  for (const GapRow& row : rows) {
    if (row.reason == kUnwrittenReason) continue;
    GapRead g;
    g.sequence = row.sequence;
    g.blocks = row.blocks;
    g.realtime_ns = row.realtime_ns;
    const std::string name = row.reason < names.size() ? names[row.reason] : "";
    const auto known = std::find(std::begin(kGapReasons), std::end(kGapReasons), name);
    g.reason =
        known != std::end(kGapReasons) ? static_cast<std::uint32_t>(known - std::begin(kGapReasons)) : row.reason;
    g.dropped_at_source = name == kDroppedAtSource;
    out.push_back(g);
  }
  return out;
}

}  // namespace weir::acq::detail
