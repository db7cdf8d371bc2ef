// read_segment_tables: one file's ledger facts, read with the reader's own checked pieces but
// without its refusals of sequences that do not increase (the audit reports those).
#include "weir/h5/segment_tables.hpp"

#include <algorithm>

#include "recording_parts.hpp"
#include "weir/h5/attribute.hpp"
#include "weir/h5/dataset.hpp"
#include "weir/h5/recording.hpp"

namespace weir::h5 {

namespace {

// The rows of the block tables that count: the shortest table's length, up to the first unwritten
// sequence. Only the lengths of the other four tables are read.
core::Result<void> read_blocks(hid_t group, const detail::Place& place, SegmentChannel& out) {
  auto sequence = detail::read_numbers<std::uint64_t>(group, kBlockSequence, place);
  if (!sequence) return tl::make_unexpected(sequence.error());
  auto flags = detail::read_numbers<std::uint32_t>(group, kBlockFlags, place);
  if (!flags) return tl::make_unexpected(flags.error());
  std::size_t rows = std::min(sequence->size(), flags->size());
  for (const char* name : {kBlockOffset, kBlockSamples, kBlockRealtimeNs, kBlockMonotonicNs}) {
    auto dataset = detail::open_dataset(group, name, place);
    if (!dataset) return tl::make_unexpected(dataset.error());
    auto n = detail::dataset_length(dataset->get(), detail::Place{place.file, place.path + "/" + name});
    if (!n) return tl::make_unexpected(n.error());
    rows = std::min<std::size_t>(rows, *n);
  }
  const auto unwritten = std::find(sequence->begin(), sequence->begin() + static_cast<std::ptrdiff_t>(rows),
                                   kUnwrittenSequence);
  rows = static_cast<std::size_t>(unwritten - sequence->begin());
  sequence->resize(rows);
  flags->resize(rows);
  out.sequence = std::move(*sequence);
  out.flags = std::move(*flags);
  return {};
}

core::Result<SegmentChannel> read_channel(hid_t entry, const std::string& link, const std::string& path) {
  const detail::Place place{path, "/" + std::string(kEntry) + "/" + link};
  Group group(H5Gopen2(entry, link.c_str(), H5P_DEFAULT));
  if (!group) return tl::make_unexpected(detail::refuse(place, "cannot be opened as a group"));
  SegmentChannel c;
  c.name = link;
  if (has_attr(group.get(), kAttrChannel)) {
    auto name = detail::text_attr(group.get(), kAttrChannel, place);
    if (!name) return tl::make_unexpected(name.error());
    c.name = *name;
  }
  if (auto ok = read_blocks(group.get(), place, c); !ok) return tl::make_unexpected(ok.error());
  auto gaps = detail::read_gaps(group.get(), place);
  if (!gaps) return tl::make_unexpected(gaps.error());
  c.gaps.reserve(gaps->size());
  for (const detail::GapRead& g : *gaps) c.gaps.push_back(SegmentGap{g.sequence, g.blocks, g.realtime_ns, g.reason});
  return c;
}

// A u64 root attribute, 0 when the file does not have it (or it is not a number).
std::uint64_t u64_or_zero(hid_t file, const char* name, const detail::Place& root) {
  if (!has_attr(file, name)) return 0;
  auto v = detail::u64_attr(file, name, root);
  return v ? *v : 0;
}

}  // namespace

core::Result<SegmentTables> read_segment_tables(const std::string& path) {
  quiet_errors();
  SegmentTables out;
  auto file = detail::open_file(path, &out.swmr_marked);
  if (!file) return tl::make_unexpected(file.error());
  if (auto ok = check_format(file->get(), path); !ok) return tl::make_unexpected(ok.error());
  const detail::Place root{path, "/"};
  out.run = u64_or_zero(file->get(), kAttrRun, root);
  out.segment = u64_or_zero(file->get(), kAttrSegment, root);
  out.arena_created_ns = u64_or_zero(file->get(), kAttrArenaCreatedNs, root);
  out.stop_ns = u64_or_zero(file->get(), kAttrStopNs, root);
  if (has_attr(file->get(), kAttrArena))
    if (auto arena = detail::text_attr(file->get(), kAttrArena, root)) out.arena = *arena;
  out.stopped = out.stop_ns != 0;
  if (has_attr(file->get(), kAttrStopTime))
    if (auto stop = detail::text_attr(file->get(), kAttrStopTime, root)) out.stopped = out.stopped || !stop->empty();

  if (!has_link(file->get(), kEntry))
    return core::fail(core::Errc::invalid_argument, "'" + path + "' has no /entry group");
  Group entry(H5Gopen2(file->get(), kEntry, H5P_DEFAULT));
  auto links = detail::channel_links(entry.get(), path);
  if (!links) return tl::make_unexpected(links.error());
  for (const std::string& link : *links) {
    auto channel = read_channel(entry.get(), link, path);
    if (!channel) return tl::make_unexpected(channel.error());
    out.channels.push_back(std::move(*channel));
  }
  return out;
}

}  // namespace weir::h5
