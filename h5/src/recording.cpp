// open_recording: checks each file against the recording format and indexes every channel's blocks
// and gaps across the files of a run.
#include "weir/h5/recording.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "recording_parts.hpp"
#include "weir/h5/attribute.hpp"
#include "weir/h5/dataset.hpp"
#include "weir/h5/recording_format.hpp"

namespace weir::h5 {

namespace {

constexpr double kRateTolerance = 1e-9;  // relative: a channel's rate "matches" across files

// Per file: whether its sequences continue the previous file's (the same arena incarnation).
struct FileContext {
  const std::string& path;
  std::uint32_t index;
  bool continues;
};

struct BlockTables {
  std::vector<std::uint64_t> sequence, offset, realtime, monotonic;
  std::vector<std::uint32_t> samples, flags;
  std::size_t rows = 0;  // rows that count: the shortest table, up to the first unwritten row
};

core::Result<BlockTables> read_tables(hid_t group, const detail::Place& place) {
  BlockTables t;
  const auto u64 = [&](std::vector<std::uint64_t>& out, const char* name) -> core::Result<void> {
    auto v = detail::read_numbers<std::uint64_t>(group, name, place);
    if (!v) return tl::make_unexpected(v.error());
    out = std::move(*v);
    return {};
  };
  const auto u32 = [&](std::vector<std::uint32_t>& out, const char* name) -> core::Result<void> {
    auto v = detail::read_numbers<std::uint32_t>(group, name, place);
    if (!v) return tl::make_unexpected(v.error());
    out = std::move(*v);
    return {};
  };
  for (auto ok :
       {u64(t.sequence, kBlockSequence), u64(t.offset, kBlockOffset), u32(t.samples, kBlockSamples),
        u64(t.realtime, kBlockRealtimeNs), u64(t.monotonic, kBlockMonotonicNs), u32(t.flags, kBlockFlags)})
    if (!ok) return tl::make_unexpected(ok.error());
  t.rows = std::min(
      {t.sequence.size(), t.offset.size(), t.samples.size(), t.realtime.size(), t.monotonic.size(), t.flags.size()});
  const auto unwritten =
      std::find(t.sequence.begin(), t.sequence.begin() + static_cast<std::ptrdiff_t>(t.rows), kUnwrittenSequence);
  t.rows = static_cast<std::size_t>(unwritten - t.sequence.begin());
  return t;
}

// A frame channel's shape and axis (format 1.2): data's frames_per_block and frame_elements, the
// axis dataset named by the group's axes[1]. Plain samples (frames_per_block 0) when data has none.
core::Result<core::FrameShape> read_frame(hid_t group, hid_t data, const detail::Place& place,
                                          std::uint32_t samples_per_block) {
  core::FrameShape frame;
  if (!has_attr(data, kAttrFrameElements)) return frame;
  auto frames = detail::u64_attr(data, kAttrFramesPerBlock, place);
  if (!frames) return tl::make_unexpected(frames.error());
  auto elements = detail::u64_attr(data, kAttrFrameElements, place);
  if (!elements) return tl::make_unexpected(elements.error());
  if (*frames == 0 || *elements == 0 || *frames * *elements != samples_per_block)
    return tl::make_unexpected(detail::refuse(place, "frames_per_block x frame_elements is not samples_per_block"));
  frame.frames_per_block = static_cast<std::uint32_t>(*frames);
  frame.frame_elements = static_cast<std::uint32_t>(*elements);
  // axes = ["time", "<axis link>"]: the axis dataset's link.
  Attribute axes(H5Aopen(group, kAttrAxes, H5P_DEFAULT));
  Space space(axes ? H5Aget_space(axes.get()) : H5I_INVALID_HID);
  if (!space || H5Sget_simple_extent_npoints(space.get()) != 2)
    return tl::make_unexpected(detail::refuse(place, "is a frame channel whose axes are not (time, axis)"));
  const Type text(H5Tcopy(H5T_C_S1));
  H5Tset_size(text.get(), H5T_VARIABLE);
  H5Tset_cset(text.get(), H5T_CSET_UTF8);
  char* names[2] = {nullptr, nullptr};
  if (H5Aread(axes.get(), text.get(), names) < 0)
    return tl::make_unexpected(detail::refuse(place, "cannot read its axes"));
  std::string link = names[1] != nullptr ? names[1] : "";
  H5Dvlen_reclaim(text.get(), space.get(), H5P_DEFAULT, names);
  auto axis = detail::open_dataset(group, link, place);
  if (!axis) return tl::make_unexpected(axis.error());
  const detail::Place here{place.file, place.path + "/" + link};
  std::string name = link;
  if (name == kDefaultFrameAxis) name.clear();
  const std::string suffix = kFrameAxisSuffix;
  if (name.size() > suffix.size() && name.ends_with(suffix)) name.resize(name.size() - suffix.size());
  frame.axis.name = name;
  for (auto [attr, out] : {std::pair{kAttrUnits, &frame.axis.units}, std::pair{kAttrAxisValuesKey, &frame.axis.values_key}})
    if (has_attr(axis->get(), attr)) {
      auto text_value = detail::text_attr(axis->get(), attr, here);
      if (!text_value) return tl::make_unexpected(text_value.error());
      *out = *text_value;
    }
  for (auto [attr, out] : {std::pair{kAttrAxisStart, &frame.axis.start}, std::pair{kAttrAxisStep, &frame.axis.step}}) {
    auto value = detail::f64_attr(axis->get(), attr, here);
    if (!value) return tl::make_unexpected(value.error());
    *out = *value;
  }
  return frame;
}

// The channel `out` holds for this group, added on first sight; refuses one that changes shape.
core::Result<RecordedChannel*> channel_for(hid_t group, hid_t data, const std::string& link,
                                           const detail::Place& place, std::vector<RecordedChannel>& out) {
  std::string name = link;
  if (has_attr(group, kAttrChannel)) {
    auto text = detail::text_attr(group, kAttrChannel, place);
    if (!text) return tl::make_unexpected(text.error());
    name = *text;
  }
  auto meta = detail::read_metadata(data, detail::Place{place.file, place.path + "/" + kData});
  if (!meta) return tl::make_unexpected(meta.error());
  if (auto frame = read_frame(group, data, place, meta->samples_per_block); frame)
    meta->frame = std::move(*frame);
  else
    return tl::make_unexpected(frame.error());
  auto found = std::find_if(out.begin(), out.end(), [&](const RecordedChannel& c) { return c.name == name; });
  if (found == out.end()) {
    meta->name = name;
    meta->link = link;
    out.push_back(std::move(*meta));
    return &out.back();
  }
  if (found->dtype != meta->dtype || found->samples_per_block != meta->samples_per_block ||
      std::abs(found->rate_hz - meta->rate_hz) > kRateTolerance * found->rate_hz || found->link != link)
    return tl::make_unexpected(detail::refuse(place, "changes dtype, block size or rate from the earlier files"));
  return &*found;
}

// Reads one channel of one file and appends its blocks and gaps.
core::Result<void> read_channel(hid_t entry, const std::string& link, const FileContext& file,
                                std::vector<RecordedChannel>& out) {
  const detail::Place place{file.path, "/" + std::string(kEntry) + "/" + link};
  Group group(H5Gopen2(entry, link.c_str(), H5P_DEFAULT));
  if (!group) return tl::make_unexpected(detail::refuse(place, "cannot be opened as a group"));
  auto data = detail::open_dataset(group.get(), kData, place);
  if (!data) return tl::make_unexpected(data.error());
  auto data_length = detail::data_elements(data->get(), detail::Place{file.path, place.path + "/" + kData});
  if (!data_length) return tl::make_unexpected(data_length.error());
  auto channel = channel_for(group.get(), data->get(), link, place, out);
  if (!channel) return tl::make_unexpected(channel.error());
  RecordedChannel& c = **channel;
  auto tables = read_tables(group.get(), place);
  if (!tables) return tl::make_unexpected(tables.error());
  auto gaps = detail::read_gaps(group.get(), place);
  if (!gaps) return tl::make_unexpected(gaps.error());

  const BlockTables& t = *tables;
  const bool fresh = !file.continues && !c.blocks.empty();  // a re-created arena: sequences start afresh
  for (std::size_t b = 0; b < t.rows; ++b) {
    const std::uint64_t s = t.sequence[b];
    const bool first_here = b == 0;
    if (!c.blocks.empty() && !(fresh && first_here) && s <= c.blocks.back().sequence)
      return tl::make_unexpected(detail::refuse(place, "block sequence " + std::to_string(s) + " does not follow " +
                                                           std::to_string(c.blocks.back().sequence) +
                                                           " (files out of order, or from different runs?)"));
    if (t.samples[b] > c.samples_per_block || t.offset[b] > *data_length || t.samples[b] > *data_length - t.offset[b])
      return tl::make_unexpected(detail::refuse(place, "block " + std::to_string(s) + " lies outside data"));
    RecordedBlock r;
    r.sequence = s;
    r.realtime_ns = t.realtime[b];
    r.monotonic_ns = t.monotonic[b];
    r.offset = t.offset[b];
    r.samples = t.samples[b];
    r.flags = t.flags[b];
    r.file = file.index;
    r.missing_before = c.blocks.empty() || (fresh && first_here) ? 0 : s - c.blocks.back().sequence - 1;
    c.samples += r.samples;
    c.blocks.push_back(r);
  }
  for (const detail::GapRead& g : *gaps) {
    if (g.dropped_at_source) {
      c.dropped_at_source += g.blocks;
    } else {
      c.gaps.push_back(RecordedGap{g.sequence, g.blocks, g.realtime_ns, g.reason, file.index});
    }
  }
  return {};
}

core::Result<void> read_file(const std::string& path, std::uint32_t index, std::optional<std::uint64_t>& incarnation,
                             Recording& out) {
  auto file = detail::open_file(path);
  if (!file) return tl::make_unexpected(file.error());
  if (auto ok = check_format(file->get(), path); !ok) return ok;
  const detail::Place root{path, "/"};
  if (index == 0 && has_attr(file->get(), kAttrArena)) {
    if (auto arena = detail::text_attr(file->get(), kAttrArena, root)) out.arena = *arena;
  }
  std::optional<std::uint64_t> created;
  if (has_attr(file->get(), kAttrArenaCreatedNs)) {
    if (auto v = detail::u64_attr(file->get(), kAttrArenaCreatedNs, root)) created = *v;
  }
  const FileContext context{path, index, !created || !incarnation || *created == *incarnation};
  if (created) incarnation = created;

  if (!has_link(file->get(), kEntry))
    return core::fail(core::Errc::invalid_argument, "'" + path + "' has no /entry group");
  Group entry(H5Gopen2(file->get(), kEntry, H5P_DEFAULT));
  auto links = detail::channel_links(entry.get(), path);
  if (!links) return tl::make_unexpected(links.error());
  for (const std::string& name : *links)
    if (auto ok = read_channel(entry.get(), name, context, out.channels); !ok) return ok;
  return {};
}

}  // namespace

namespace detail {

namespace {

herr_t collect_name(hid_t, const char* name, const H5L_info_t*, void* out) {
  static_cast<std::vector<std::string>*>(out)->emplace_back(name);
  return 0;
}

bool is_channel(hid_t entry, const std::string& name, const std::string& path) {
  H5O_info_t info{};
  if (H5Oget_info_by_name(entry, name.c_str(), &info, H5P_DEFAULT) < 0 || info.type != H5O_TYPE_GROUP) return false;
  Group group(H5Gopen2(entry, name.c_str(), H5P_DEFAULT));
  if (!group || !has_attr(group.get(), kAttrNxClass)) return name != kKeys;
  auto nx_class = text_attr(group.get(), kAttrNxClass, Place{path, "/" + std::string(kEntry) + "/" + name});
  return nx_class && *nx_class == kNxData && !has_attr(group.get(), kAttrPlotSource);
}

}  // namespace

core::Result<std::vector<std::string>> channel_links(hid_t entry, const std::string& path) {
  std::vector<std::string> names;
  hsize_t at = 0;
  if (entry < 0 || H5Literate(entry, H5_INDEX_NAME, H5_ITER_INC, &at, collect_name, &names) < 0)
    return core::fail(core::Errc::invalid_argument, "'" + path + "': cannot list /entry: " + last_error());
  std::erase_if(names, [&](const std::string& name) { return !is_channel(entry, name, path); });
  return names;
}

}  // namespace detail

std::uint64_t RecordedChannel::missing() const noexcept {
  std::uint64_t total = missing_after;
  for (const RecordedBlock& b : blocks) total += b.missing_before;
  return total;
}

core::Result<Recording> open_recording(std::span<const std::string> files) {
  quiet_errors();
  Recording out;
  if (files.empty()) return core::fail(core::Errc::invalid_argument, "replay: name at least one recording file");
  std::optional<std::uint64_t> incarnation;  // arena_created_ns of the files so far
  for (std::size_t i = 0; i < files.size(); ++i) {
    out.files.push_back(files[i]);
    if (auto ok = read_file(files[i], static_cast<std::uint32_t>(i), incarnation, out); !ok)
      return tl::make_unexpected(core::with_context(ok.error(), "replay"));
  }
  if (out.channels.empty())
    return core::fail(core::Errc::invalid_argument, "replay: '" + files.front() + "' holds no channels under /entry");
  // Gap rows before the first block and after the last one: the recording began or ended inside a
  // gap. Gaps between blocks are the jumps in block_sequence (the rows say why).
  for (RecordedChannel& c : out.channels) {
    for (const RecordedGap& g : c.gaps) {
      c.gap_row_blocks += g.blocks;
      if (c.blocks.empty()) {
        c.missing_after += g.blocks;
      } else if (g.sequence + g.blocks <= c.blocks.front().sequence && g.file == c.blocks.front().file) {
        c.blocks.front().missing_before += g.blocks;
      } else if (g.sequence > c.blocks.back().sequence && g.file == c.blocks.back().file) {
        c.missing_after += g.blocks;
      }
    }
  }
  return out;
}

}  // namespace weir::h5
