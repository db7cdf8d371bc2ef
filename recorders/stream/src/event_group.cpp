// An event channel's NXevent_data: a pulse per block, its events' offsets, ids, heights and flags.
#include "event_group.hpp"

#include <cstring>

#include "weir/core/event_record.hpp"
#include "weir/h5/attribute.hpp"
#include "weir/h5/dataset.hpp"
#include "weir/h5/recording_format.hpp"
#include "weir/recorder/format.hpp"

namespace weir::rec {

namespace {

constexpr std::uint64_t kEventChunkRows = 4096;

double field(const std::byte* event, core::EventField f) noexcept {
  double value = 0;
  std::memcpy(&value, event + static_cast<std::size_t>(f) * sizeof(double), sizeof value);
  return value;
}

}  // namespace

core::Result<EventGroup> EventGroup::create(hid_t entry, const std::string& link, const std::string& units,
                                            std::uint32_t max_events, const std::string& file) {
  EventGroup g;
  const std::string name = link + h5::kEventsSuffix;
  const std::string what = file + " /" + h5::kEntry + "/" + name;
  auto group = h5::create_group(entry, name, what, h5::kNxEventData);
  if (!group) return tl::make_unexpected(group.error());
  g.group_ = std::move(*group);
  const hid_t gid = g.group_.get();
  const std::uint64_t slack = std::max<std::uint32_t>(1, max_events);
  const auto column = [&](Column& out, const char* dataset, hid_t type, std::size_t bytes, std::uint64_t chunk,
                          std::uint64_t most, const char* unit_text) -> core::Result<void> {
    auto c = Column::create(gid, ColumnSpec{dataset, type, type, bytes, chunk, most}, what + "/" + dataset);
    if (!c) return tl::make_unexpected(c.error());
    out = std::move(*c);
    if (unit_text != nullptr)
      if (auto ok = h5::attr_text(out.id(), h5::kAttrUnits, unit_text); !ok)
        return tl::make_unexpected(core::with_context(ok.error(), what + "/" + dataset));
    return {};
  };
  for (auto ok : {column(g.time_zero_, h5::kEventTimeZero, H5T_NATIVE_UINT64, 8, kTableChunkRows, 1, h5::kNsUnits),
                  column(g.index_, h5::kEventIndex, H5T_NATIVE_UINT64, 8, kTableChunkRows, 1, nullptr),
                  column(g.offset_, h5::kEventTimeOffset, H5T_NATIVE_INT64, 8, kEventChunkRows, slack, h5::kNsUnits),
                  column(g.id_, h5::kEventId, H5T_NATIVE_UINT32, 4, kEventChunkRows, slack, nullptr),
                  column(g.height_, h5::kPulseHeight, H5T_NATIVE_DOUBLE, 8, kEventChunkRows, slack, units.c_str()),
                  column(g.flags_, h5::kEventFlags, H5T_NATIVE_UINT32, 4, kEventChunkRows, slack, nullptr)})
    if (!ok) return tl::make_unexpected(ok.error());
  if (auto ok = h5::attr_text(g.time_zero_.id(), h5::kAttrOffset, h5::kEpoch); !ok)
    return tl::make_unexpected(core::with_context(ok.error(), what));
  return g;
}

void EventGroup::commit(std::uint64_t realtime_ns, const std::byte* events, std::uint32_t count) noexcept {
  time_zero_.push(realtime_ns);
  index_.push(events_);
  constexpr std::size_t kEventBytes = core::kEventFields * sizeof(double);
  for (std::uint32_t e = 0; e < count; ++e) {
    const std::byte* event = events + e * kEventBytes;
    offset_.push(static_cast<std::int64_t>(field(event, core::EventField::time_offset_ns)));
    id_.push(static_cast<std::uint32_t>(field(event, core::EventField::id)));
    height_.push(field(event, core::EventField::height));
    flags_.push(static_cast<std::uint32_t>(field(event, core::EventField::flags)));
  }
  events_ += count;
}

bool EventGroup::chunk_ready() const noexcept {
  return time_zero_.chunk_ready() || offset_.chunk_ready();
}

core::Result<void> EventGroup::write_chunks() {
  for (Column* c : {&offset_, &id_, &height_, &flags_, &time_zero_, &index_})  // the pulses last: they index the events
    if (auto ok = c->write_chunks(); !ok) return ok;
  return {};
}

core::Result<void> EventGroup::write_partial() {
  for (Column* c : {&offset_, &id_, &height_, &flags_, &time_zero_, &index_})
    if (auto ok = c->write_partial(); !ok) return ok;
  return {};
}

void EventGroup::mark_durable() noexcept {
  for (Column* c : {&offset_, &id_, &height_, &flags_, &time_zero_, &index_}) c->mark_durable();
}

void EventGroup::roll_back() noexcept {
  for (Column* c : {&offset_, &id_, &height_, &flags_, &time_zero_, &index_}) (void)c->roll_back();
  events_ = offset_.size();
}

}  // namespace weir::rec
