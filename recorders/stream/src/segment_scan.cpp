// Facts about existing segments, and clearing a dead writer's marks.
#include "segment_scan.hpp"

#include <hdf5.h>

#include <charconv>
#include <string_view>

#include "h5_util.hpp"
#include "weir/recorder/format.hpp"

namespace weir::rec {

namespace {

constexpr std::string_view kFormatPrefix = "weir-recording ";
constexpr const char* kClearFlagsProperty = "clear_status_flags";  // HDF5's own name; h5clear -s sets it

core::Result<void> check_format(hid_t root, const std::string& file) {
  auto format = read_text_attr(root, "weir_format");
  if (!format)
    return core::fail(core::Errc::layout_mismatch, file + ": not a weir recording (" + format.error().what + ")");
  std::uint32_t major = 0;
  const std::string_view text = *format;
  if (text.substr(0, kFormatPrefix.size()) != kFormatPrefix ||
      std::from_chars(text.data() + kFormatPrefix.size(), text.data() + text.size(), major).ec != std::errc{} ||
      major != kFormatMajor)
    return core::fail(core::Errc::layout_mismatch,
                      file + ": recording format '" + *format + "' is not one this build reads (" +
                          std::string(kFormatName) + ")");
  return {};
}

struct Scan {
  std::vector<ChannelEnd>* out;
};

herr_t visit_channel(hid_t entry, const char* name, const H5L_info_t*, void* data) {
  auto* scan = static_cast<Scan*>(data);
  h5::Handle group{H5Gopen2(entry, name, H5P_DEFAULT)};
  if (!group.valid() || H5Aexists(group.get(), "channel") <= 0) {
    (void)h5::last_error();  // /entry/keys and anything else: not a channel
    return 0;
  }
  auto channel = read_text_attr(group.get(), "channel");
  h5::Handle sequence{H5Dopen2(group.get(), "block_sequence", H5P_DEFAULT)};
  if (!channel || !sequence.valid()) return -1;
  h5::Handle space{H5Dget_space(sequence.get())};
  hsize_t n = 0;
  if (H5Sget_simple_extent_dims(space.get(), &n, nullptr) != 1) return -1;
  ChannelEnd end{*channel, n, 0};
  if (n > 0) {
    const hsize_t last[1] = {n - 1};
    const hsize_t one[1] = {1};
    h5::Handle mem{H5Screate_simple(1, one, nullptr)};
    if (H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, last, nullptr, one, nullptr) < 0 ||
        H5Dread(sequence.get(), H5T_NATIVE_UINT64, mem.get(), space.get(), H5P_DEFAULT, &end.last_sequence) < 0)
      return -1;
  }
  scan->out->push_back(std::move(end));
  return 0;
}

}  // namespace

core::Result<SegmentInfo> read_segment(const std::filesystem::path& path) {
  const std::string file = path.string();
  SegmentInfo info;
  info.path = path;
  h5::Handle f{H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT)};
  if (!f.valid()) {
    const std::string plain = h5::last_error();
    // A killed SWMR writer leaves its marks: only a SWMR reader may open the file then.
    f = h5::Handle{H5Fopen(file.c_str(), H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, H5P_DEFAULT)};
    if (!f.valid()) return tl::make_unexpected(h5_error("H5Fopen", file + " (" + plain + ")"));
    info.marked = true;
  }
  auto root = h5_check(H5Gopen2(f.get(), "/", H5P_DEFAULT), "H5Gopen2", file + " /");
  if (!root) return tl::make_unexpected(root.error());
  if (auto ok = check_format(root->get(), file); !ok) return tl::make_unexpected(ok.error());
  auto run = read_u64_attr(root->get(), "run");
  auto segment = read_u64_attr(root->get(), "segment");
  auto host = read_text_attr(root->get(), "host");
  auto pid = read_u64_attr(root->get(), "recorder_pid");
  auto ticks = read_u64_attr(root->get(), "recorder_start_ticks");
  auto created = read_u64_attr(root->get(), "arena_created_ns");
  auto stop = read_text_attr(root->get(), "stop_time");
  if (!run || !segment || !host || !pid || !ticks || !created || !stop)
    return core::fail(core::Errc::layout_mismatch, file + ": a root attribute of the recording format is missing");
  info.run = *run;
  info.segment = *segment;
  info.host = *host;
  info.recorder_pid = static_cast<std::uint32_t>(*pid);
  info.recorder_start_ticks = *ticks;
  info.arena_created_ns = *created;
  info.stopped = !stop->empty();
  auto entry = h5_check(H5Gopen2(f.get(), "entry", H5P_DEFAULT), "H5Gopen2", file + " /entry");
  if (!entry) return tl::make_unexpected(entry.error());
  Scan scan{&info.channels};
  if (H5Literate(entry->get(), H5_INDEX_NAME, H5_ITER_INC, nullptr, &visit_channel, &scan) < 0)
    return tl::make_unexpected(h5_error("H5Literate", file + " /entry"));
  return info;
}

core::Result<void> clear_marks(const std::filesystem::path& path) {
  const std::string file = path.string();
  auto fapl = h5_check(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate", file);
  if (!fapl) return tl::make_unexpected(fapl.error());
  hbool_t clear = 1;
  if (H5Pexist(fapl->get(), kClearFlagsProperty) <= 0 || H5Pset(fapl->get(), kClearFlagsProperty, &clear) < 0)
    return core::fail(core::Errc::io_error, file + ": this HDF5 cannot clear a dead writer's marks; run h5clear -s " + file);
  auto f = h5_check(H5Fopen(file.c_str(), H5F_ACC_RDWR, fapl->get()), "H5Fopen (clearing write marks)", file);
  if (!f) return tl::make_unexpected(f.error());
  if (!f->reset()) return tl::make_unexpected(h5_error("H5Fclose", file));
  return {};
}

}  // namespace weir::rec
