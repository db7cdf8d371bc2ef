// Facts about existing segments, and clearing a dead writer's marks.
#include "segment_scan.hpp"

#include <hdf5.h>

#include <algorithm>
#include <vector>

#include "weir/h5/attribute.hpp"
#include "weir/h5/check.hpp"
#include "weir/h5/dataset.hpp"
#include "weir/h5/recording.hpp"
#include "weir/h5/recording_format.hpp"
#include "weir/h5/repair.hpp"
#include "process_info.hpp"

namespace weir::rec {

namespace {

struct Scan {
  std::vector<ChannelEnd>* out;
};

herr_t visit_channel(hid_t entry, const char* name, const H5L_info_t*, void* data) {
  auto* scan = static_cast<Scan*>(data);
  h5::Group group{H5Gopen2(entry, name, H5P_DEFAULT)};
  if (!group.valid() || H5Aexists(group.get(), h5::kAttrChannel) <= 0) {
    (void)h5::last_error();  // /entry/keys and anything else: not a channel
    return 0;
  }
  auto channel = h5::read_text_attr(group.get(), h5::kAttrChannel);
  h5::Dataset sequence{H5Dopen2(group.get(), h5::kBlockSequence, H5P_DEFAULT)};
  if (!channel || !sequence.valid()) return -1;
  h5::Space space{H5Dget_space(sequence.get())};
  hsize_t n = 0;
  if (H5Sget_simple_extent_dims(space.get(), &n, nullptr) != 1) return -1;
  // The tables of a killed recorder's file may differ in length (block_sequence is written last):
  // the shortest says how many blocks the file holds; a row a failed write left reads the fill value.
  for (const char* table : {h5::kBlockOffset, h5::kBlockSamples, h5::kBlockRealtimeNs, h5::kBlockMonotonicNs,
                            h5::kBlockFlags}) {
    h5::Dataset t{H5Dopen2(group.get(), table, H5P_DEFAULT)};
    if (!t.valid()) return -1;
    h5::Space ts{H5Dget_space(t.get())};
    hsize_t rows = 0;
    if (H5Sget_simple_extent_dims(ts.get(), &rows, nullptr) != 1) return -1;
    n = std::min(n, rows);
  }
  ChannelEnd end{*channel, 0, 0, 0, false};
  for (hsize_t at = n; at > 0; --at) {  // the last written row (fill values only after a failed write)
    const hsize_t last[1] = {at - 1};
    const hsize_t one[1] = {1};
    h5::Space mem{H5Screate_simple(1, one, nullptr)};
    std::uint64_t value = 0;
    if (H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, last, nullptr, one, nullptr) < 0 ||
        H5Dread(sequence.get(), H5T_NATIVE_UINT64, mem.get(), space.get(), H5P_DEFAULT, &value) < 0)
      return -1;
    if (value == h5::kUnwrittenSequence) continue;
    end.blocks = at;
    end.last_sequence = value;
    end.end = value + 1;
    end.any = true;
    break;
  }
  h5::Dataset gaps{H5Dopen2(group.get(), h5::kGaps, H5P_DEFAULT)};
  if (gaps.valid()) {
    h5::Space gs{H5Dget_space(gaps.get())};
    hsize_t rows = 0;
    if (H5Sget_simple_extent_dims(gs.get(), &rows, nullptr) != 1) return -1;
    std::vector<h5::GapRow> table(rows);
    const h5::Type mem = h5::gap_row_type(false);
    if (rows > 0 && H5Dread(gaps.get(), mem.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, table.data()) < 0) return -1;
    for (const h5::GapRow& g : table) {
      if (g.reason == h5::kUnwrittenReason || g.blocks == 0 ||
          g.reason == static_cast<std::uint8_t>(h5::GapReason::dropped_at_source))
        continue;
      end.end = std::max(end.end, g.sequence + g.blocks);
      end.any = true;
    }
  }
  scan->out->push_back(std::move(end));
  return 0;
}

}  // namespace

core::Result<SegmentInfo> read_segment(const std::filesystem::path& path) {
  const std::string file = path.string();
  SegmentInfo info;
  info.path = path;
  // A killed SWMR writer leaves its marks: only a SWMR reader may open the file then.
  const h5::File f = h5::open_read_only(file, info.marked);
  if (!f.valid()) return tl::make_unexpected(h5::error("H5Fopen", file));
  auto root = h5::check<h5::Group>(H5Gopen2(f.get(), "/", H5P_DEFAULT), "H5Gopen2", file + " /");
  if (!root) return tl::make_unexpected(root.error());
  if (auto ok = h5::check_format(root->get(), file); !ok) return tl::make_unexpected(ok.error());
  auto run = h5::read_u64_attr(root->get(), h5::kAttrRun);
  auto segment = h5::read_u64_attr(root->get(), h5::kAttrSegment);
  auto host = h5::read_text_attr(root->get(), h5::kAttrHost);
  auto pid = h5::read_u64_attr(root->get(), h5::kAttrRecorderPid);
  auto ticks = h5::read_u64_attr(root->get(), h5::kAttrRecorderStartTicks);
  auto created = h5::read_u64_attr(root->get(), h5::kAttrArenaCreatedNs);
  auto stop = h5::read_text_attr(root->get(), h5::kAttrStopTime);
  if (!run || !segment || !host || !pid || !ticks || !created || !stop)
    return core::fail(core::Errc::layout_mismatch, file + ": a root attribute of the recording format is missing");
  info.run = *run;
  info.segment = *segment;
  info.host = *host;
  info.recorder_pid = static_cast<std::uint32_t>(*pid);
  info.recorder_start_ticks = *ticks;
  info.arena_created_ns = *created;
  info.stopped = !stop->empty();
  auto entry = h5::check<h5::Group>(H5Gopen2(f.get(), h5::kEntry, H5P_DEFAULT), "H5Gopen2", file + " /" + h5::kEntry);
  if (!entry) return tl::make_unexpected(entry.error());
  Scan scan{&info.channels};
  if (H5Literate(entry->get(), H5_INDEX_NAME, H5_ITER_INC, nullptr, &visit_channel, &scan) < 0)
    return tl::make_unexpected(h5::error("H5Literate", file + " /" + h5::kEntry));
  return info;
}

core::Result<void> clear_marks(const std::filesystem::path& path) { return h5::clear_swmr_marks(path.string()); }

std::string live_writer(const SegmentInfo& info, const std::string& this_host) {
  if (info.host != this_host) return "a recorder on host '" + info.host + "' has it open for writing; it may still run";
  if (same_process_alive(info.recorder_pid, info.recorder_start_ticks))
    return "recorder pid " + std::to_string(info.recorder_pid) + " is alive and writes it";
  return "";
}

core::Result<RepairResult> repair_file(const std::filesystem::path& path, bool force) {
  h5::quiet_errors();  // failures are reported, named, in the result
  const std::string file = path.string();
  auto marked = h5::swmr_marked(file);
  if (!marked) return tl::make_unexpected(marked.error());
  RepairResult result;
  if (!*marked) return result;
  result.was_marked = true;
  // A weir recording names its writer: never clear the marks of one that may still write.
  if (auto info = read_segment(path)) {
    result.writer_pid = info->recorder_pid;
    result.writer_host = info->host;
    if (const std::string live = live_writer(*info, host_name()); !live.empty() && !force)
      return core::fail(core::Errc::already_exists, file + ": " + live + " (--force clears the marks anyway)");
  } else if (!force) {
    return core::fail(core::Errc::invalid_argument, file + ": not a weir recording, so its writer cannot be checked ("
                                                    + info.error().what + "); --force clears the marks anyway");
  }
  if (auto ok = clear_marks(path); !ok) return tl::make_unexpected(ok.error());
  auto still = h5::swmr_marked(file);
  if (!still) return tl::make_unexpected(still.error());
  if (*still) return core::fail(core::Errc::io_error, file + ": the marks are still there after clearing them");
  result.cleared = true;
  return result;
}

}  // namespace weir::rec
