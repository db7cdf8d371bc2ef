// A PV log channel's NXlogs: per PV its values, alarm changes, connection changes and dropped updates.
#include "pv_log_group.hpp"

#include <algorithm>
#include <cstring>

#include <nlohmann/json.hpp>

#include "weir/core/clock.hpp"
#include "weir/h5/attribute.hpp"
#include "weir/h5/check.hpp"
#include "weir/h5/dataset.hpp"
#include "weir/h5/recording_format.hpp"
#include "weir/h5/types.hpp"
#include "weir/recorder/format.hpp"

namespace weir::rec {

namespace {

bool numeric_pv(core::PvType type) noexcept {
  return type == core::PvType::f64 || type == core::PvType::i64 || type == core::PvType::enumerated;
}

// The limit attributes of `value`: (low name, high name, the meta's pair).
struct LimitAttrs {
  const char* low;
  const char* high;
  std::optional<double> (PvMeta::*pair)[2];
};
constexpr LimitAttrs kLimits[] = {
    {"display_low", "display_high", &PvMeta::display},
    {"control_low", "control_high", &PvMeta::control},
    {"alarm_low", "alarm_high", &PvMeta::alarm},
    {"warning_low", "warning_high", &PvMeta::warning},
};
constexpr char kAttrPrecision[] = "precision";

// Overwrites an existing attribute in place (allowed under SWMR, where creating one is not).
core::Result<void> overwrite(hid_t object, const char* name, hid_t mem_type, const void* data, const std::string& what) {
  auto attr = h5::check<h5::Attribute>(H5Aopen(object, name, H5P_DEFAULT), "H5Aopen", what + " @" + name);
  if (!attr) return tl::make_unexpected(attr.error());
  return h5::check(H5Awrite(attr->get(), mem_type, data), "H5Awrite", what + " @" + name);
}

// An entry's text (text_bytes of it, NUL-padded to kPvTextBytes).
void copy_text(std::byte* out, const core::PvLogEntry& e) noexcept {
  const std::size_t n = std::min<std::size_t>(e.text_bytes, core::kPvTextBytes);
  std::memcpy(out, e.text, n);
  std::memset(out + n, 0, core::kPvTextBytes - n);
}

}  // namespace

PvMeta parse_pv_meta(std::string_view text) {
  PvMeta m;
  try {
    const nlohmann::json j = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
    if (j.is_discarded() || !j.is_object()) return m;
    const auto text_field = [&](const char* name, std::string& out) {
      if (auto it = j.find(name); it != j.end() && it->is_string()) out = it->get<std::string>();
    };
    const auto pair_field = [&](const char* name, std::optional<double> (&out)[2]) {
      auto it = j.find(name);
      if (it == j.end() || !it->is_array() || it->size() != 2) return;
      for (std::size_t i = 0; i < 2; ++i)
        if ((*it)[i].is_number()) out[i] = (*it)[i].get<double>();
    };
    text_field("pv", m.pv);
    text_field("key", m.key);
    text_field("host", m.host);
    text_field("units", m.units);
    std::string type;
    text_field("type", type);
    m.type = core::pv_type_of(type);
    if (auto it = j.find("precision"); it != j.end() && it->is_number_integer()) m.precision = it->get<std::int64_t>();
    pair_field("display", m.display);
    pair_field("control", m.control);
    pair_field("alarm", m.alarm);
    pair_field("warning", m.warning);
    if (auto it = j.find("enum"); it != j.end() && it->is_array())
      for (const auto& s : *it) m.states.push_back(s.is_string() ? s.get<std::string>() : std::string());
  } catch (const std::exception&) {  // nlohmann's, or bad_alloc: a meta not understood is no meta
    return PvMeta{};
  }
  return m;
}

std::string pv_link_name(std::string_view pv, std::uint32_t index) {
  if (pv.empty()) return "pv_" + std::to_string(index);
  std::string out(pv);
  for (char& c : out) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
    if (!ok) c = '_';
  }
  if (out.front() == '.') out.front() = '_';
  if (out.back() == '.') out.back() = '_';
  return out;
}

std::optional<PvMeta> PvLogGroup::read_meta(std::uint32_t index) const {
  if (source_->kv == nullptr) return std::nullopt;
  std::vector<std::byte> buffer(source_->kv->value_bytes());
  core::ValueInfo info;
  if (source_->kv->get(core::pv_meta_key(source_->channel, index), buffer, info) != core::KvStatus::ok)
    return std::nullopt;
  const auto* chars = reinterpret_cast<const char*>(buffer.data());
  const std::size_t n = std::min<std::size_t>(info.length, buffer.size());
  return parse_pv_meta(std::string_view(chars, static_cast<std::size_t>(std::find(chars, chars + n, '\0') - chars)));
}

core::Result<PvLogGroup> PvLogGroup::create(hid_t entry, const std::string& link, std::uint32_t max_entries,
                                            PvLogSource& source, const std::string& file) {
  PvLogGroup g;
  g.source_ = &source;
  g.max_entries_ = std::max<std::uint32_t>(1, max_entries);
  const std::string name = link + kPvLogsSuffix;
  g.what_ = file + " /" + h5::kEntry + "/" + name;
  auto group = h5::create_group(entry, name, g.what_, h5::kNxCollection);
  if (!group) return tl::make_unexpected(group.error());
  g.group_ = std::move(*group);
  for (auto ok : {h5::attr_text(g.group_.get(), kAttrLogChannel, source.channel),
                  h5::attr_u64(g.group_.get(), kAttrMalformedEntries, 0)})
    if (!ok) return tl::make_unexpected(core::with_context(ok.error(), g.what_));
  g.text_type_ = h5::fixed_text_type(core::kPvTextBytes);

  // The PVs: each meta key in the arena now, and each PV an entry is carried of. A carried value's
  // type is the NXlog's (it is the data in hand; the meta may have moved on since).
  std::vector<std::uint32_t> metas;  // indices of the meta keys there
  if (source.kv != nullptr) {
    const std::string prefix = source.channel + ".pv.";
    source.kv->for_each_key([&](std::string_view key, const core::ValueInfo&) {
      if (key.size() <= prefix.size() || key.substr(0, prefix.size()) != prefix) return;
      std::uint32_t index = 0;
      for (char c : key.substr(prefix.size())) {
        if (c < '0' || c > '9' || index >= kMaxPvIndex) return;
        index = index * 10 + static_cast<std::uint32_t>(c - '0');
      }
      if (index < kMaxPvIndex) metas.push_back(index);
    });
  }
  std::vector<std::pair<std::uint32_t, core::PvType>> pvs;  // (index, value type)
  for (const std::uint32_t index : metas) {
    const auto meta = g.read_meta(index);
    if (meta && meta->type != core::PvType::unknown) pvs.emplace_back(index, meta->type);
  }
  for (const core::PvLogEntry& e : source.carried) {
    if (e.pv >= kMaxPvIndex) continue;
    const auto type = static_cast<core::PvType>(e.type);
    auto it = std::find_if(pvs.begin(), pvs.end(), [&](const auto& p) { return p.first == e.pv; });
    const bool is_value = e.event == static_cast<std::uint8_t>(core::PvEvent::value);
    if (it == pvs.end()) {
      pvs.emplace_back(e.pv, is_value ? type : core::PvType::unknown);
    } else if (is_value && std::none_of(source.carried.begin(), source.carried.begin() + (&e - source.carried.data()),
                                        [&](const core::PvLogEntry& x) {
                                          return x.pv == e.pv && x.event == static_cast<std::uint8_t>(core::PvEvent::value);
                                        })) {
      it->second = type;  // the PV's first carried value
    }
  }
  std::sort(pvs.begin(), pvs.end());
  std::uint32_t highest = 0;
  for (const auto& [index, type] : pvs) {
    auto meta = g.read_meta(index);
    if (auto ok = g.add_pv(index, meta ? *meta : PvMeta{}, type); !ok) return tl::make_unexpected(ok.error());
    highest = std::max(highest, index + 1);
  }
  g.slot_of_.assign(highest, -1);
  for (std::size_t i = 0; i < g.pvs_.size(); ++i) g.slot_of_[g.pvs_[i].index] = static_cast<std::int32_t>(i);

  return g;
}

void PvLogGroup::log_carried() {
  std::vector<core::PvLogEntry> carried;
  carried.swap(source_->carried);
  source_->carried.reserve(std::max<std::size_t>(carried.size(), max_entries_));
  for (const core::PvLogEntry& e : carried) commit(reinterpret_cast<const std::byte*>(&e), 1);  // in order
}

core::Result<void> PvLogGroup::add_pv(std::uint32_t index, const PvMeta& meta, core::PvType type) {
  Pv pv;
  pv.index = index;
  pv.type = type;
  std::string name = pv_link_name(meta.pv, index);
  if (std::any_of(pvs_.begin(), pvs_.end(), [&](const Pv& p) { return p.what == what_ + "/" + name; }))
    name += "_" + std::to_string(index);  // two names the same once cleaned: the index tells them apart
  pv.what = what_ + "/" + name;
  auto group = h5::create_group(group_.get(), name, pv.what, h5::kNxLog);
  if (!group) return tl::make_unexpected(group.error());
  pv.group = std::move(*group);
  const hid_t gid = pv.group.get();
  const std::uint64_t slack = max_entries_;  // one block may hold entries of this PV only
  const auto column = [&](Column& out, const char* dataset, hid_t type_id, std::size_t bytes,
                          std::uint32_t chunk) -> core::Result<void> {
    auto c = Column::create(gid, ColumnSpec{dataset, type_id, type_id, bytes, chunk, slack}, pv.what + "/" + dataset);
    if (!c) return tl::make_unexpected(c.error());
    out = std::move(*c);
    return {};
  };
  const auto time_column = [&](Column& out, const char* dataset, std::uint32_t chunk) -> core::Result<void> {
    if (auto ok = column(out, dataset, H5T_NATIVE_INT64, sizeof(std::int64_t), chunk); !ok) return ok;
    for (auto ok : {h5::attr_text(out.id(), h5::kAttrUnits, h5::kNsUnits), h5::attr_text(out.id(), h5::kAttrStart, h5::kEpoch)})
      if (!ok) return tl::make_unexpected(core::with_context(ok.error(), pv.what + "/" + dataset));
    return {};
  };
  const auto code_column = [&](Column& out, const char* dataset, hid_t type_id, std::size_t bytes,
                               const char* names) -> core::Result<void> {
    if (auto ok = column(out, dataset, type_id, bytes, kPvEventChunkRows); !ok) return ok;
    if (auto ok = h5::attr_text(out.id(), h5::kAttrUnits, ""); !ok)
      return tl::make_unexpected(core::with_context(ok.error(), pv.what + "/" + dataset));
    if (names != nullptr)
      if (auto ok = h5::attr_text(out.id(), kAttrNames, names); !ok)
        return tl::make_unexpected(core::with_context(ok.error(), pv.what + "/" + dataset));
    return {};
  };
  const bool text = type == core::PvType::text;
  const bool integer = type == core::PvType::i64 || type == core::PvType::enumerated;
  const hid_t value_type = text ? text_type_.get() : integer ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE;
  for (auto ok : {column(pv.value, kPvValue, value_type, text ? core::kPvTextBytes : 8, kPvLogChunkRows),
                  time_column(pv.time, kPvTime, kPvLogChunkRows),
                  code_column(pv.severity, kPvAlarmSeverity, H5T_NATIVE_INT16, 2, kPvSeverityNames),
                  code_column(pv.status, kPvAlarmStatus, H5T_NATIVE_INT16, 2, kPvStatusNames),
                  time_column(pv.alarm_time, kPvAlarmTime, kPvEventChunkRows),
                  code_column(pv.connection, kPvConnectionStatus, H5T_NATIVE_UINT8, 1, kPvConnectionNames),
                  time_column(pv.connection_time, kPvConnectionTime, kPvEventChunkRows),
                  code_column(pv.dropped_count, kPvDroppedCount, H5T_NATIVE_UINT32, 4, nullptr),
                  time_column(pv.dropped_time, kPvDroppedTime, kPvEventChunkRows)})
    if (!ok) return ok;
  if (type == core::PvType::enumerated)
    if (auto ok = column(pv.value_string, kPvValueString, text_type_.get(), core::kPvTextBytes, kPvLogChunkRows); !ok)
      return ok;
  for (auto ok : {h5::attr_text(gid, kAttrPvType, core::pv_type_name(type)), h5::attr_u32(gid, kAttrPvIndex, index),
                  h5::attr_u64(gid, kAttrDropped, 0)})
    if (!ok) return tl::make_unexpected(core::with_context(ok.error(), pv.what));
  if (auto ok = write_meta(pv, meta, false); !ok) return ok;
  pvs_.push_back(std::move(pv));
  return {};
}

// The meta's attributes: created with the NXlog, rewritten in place after a reconnection (SWMR adds
// no attribute: one the new meta has and the file does not is shown by the next file).
core::Result<void> PvLogGroup::write_meta(Pv& pv, const PvMeta& meta, bool rewrite) {
  const hid_t gid = pv.group.get();
  const hid_t vid = pv.value.id();
  const std::string value_what = pv.what + "/" + kPvValue;
  const auto text_attr = [&](hid_t object, const char* name, const std::string& now, const std::string& shown,
                             const std::string& what) -> core::Result<void> {
    if (!rewrite) return h5::attr_text(object, name, now);
    if (now == shown) return {};
    auto ok = h5::rewrite_text(object, name, now);
    if (!ok) return tl::make_unexpected(core::with_context(ok.error(), what));
    return {};
  };
  for (auto ok : {text_attr(gid, kAttrPvName, meta.pv, pv.shown.pv, pv.what),
                  text_attr(gid, kAttrPvKey, meta.key, pv.shown.key, pv.what),
                  text_attr(gid, kAttrPvHost, meta.host, pv.shown.host, pv.what)})
    if (!ok) return tl::make_unexpected(core::with_context(ok.error(), pv.what));
  if (numeric_pv(pv.type))
    if (auto ok = text_attr(vid, h5::kAttrUnits, meta.units, pv.shown.units, value_what); !ok)
      return tl::make_unexpected(core::with_context(ok.error(), value_what));
  if (rewrite && meta.type != core::PvType::unknown && meta.type != pv.type)
    meta_stale_ = true;  // its values are carried: the next file shows it
  if (numeric_pv(pv.type)) {
    const auto number = [&](const char* name, const std::optional<double>& now,
                            const std::optional<double>& shown) -> core::Result<void> {
      if (!rewrite) return now ? h5::attr_f64(vid, name, *now) : core::Result<void>{};
      if (now.has_value() != shown.has_value()) meta_stale_ = true;
      if (!now || !shown || *now == *shown) return {};
      return overwrite(vid, name, H5T_NATIVE_DOUBLE, &*now, value_what);
    };
    for (const LimitAttrs& l : kLimits)
      for (auto ok : {number(l.low, (meta.*l.pair)[0], (pv.shown.*l.pair)[0]),
                      number(l.high, (meta.*l.pair)[1], (pv.shown.*l.pair)[1])})
        if (!ok) return tl::make_unexpected(core::with_context(ok.error(), value_what));
    if (!rewrite) {
      if (meta.precision)
        if (auto ok = h5::attr_i64(vid, kAttrPrecision, *meta.precision); !ok)
          return tl::make_unexpected(core::with_context(ok.error(), value_what));
    } else if (meta.precision.has_value() != pv.shown.precision.has_value()) {
      meta_stale_ = true;
    } else if (meta.precision && *meta.precision != *pv.shown.precision) {
      if (auto ok = overwrite(vid, kAttrPrecision, H5T_NATIVE_INT64, &*meta.precision, value_what); !ok) return ok;
    }
  }
  if (pv.type == core::PvType::enumerated) {
    if (!rewrite) {
      if (!meta.states.empty())
        if (auto ok = h5::attr_text_list(vid, kAttrEnumStrings, meta.states); !ok)
          return tl::make_unexpected(core::with_context(ok.error(), value_what));
    } else if (meta.states.size() != pv.shown.states.size()) {
      meta_stale_ = true;
    } else if (meta.states != pv.shown.states) {
      const h5::Type type = h5::text_type();
      std::vector<const char*> texts;
      for (const std::string& s : meta.states) texts.push_back(s.c_str());
      if (auto ok = overwrite(vid, kAttrEnumStrings, type.get(), texts.data(), value_what); !ok) return ok;
    }
  }
  if (rewrite && meta_stale_) {  // keep showing what the file could not change
    PvMeta kept = meta;
    kept.type = pv.shown.type;
    pv.shown = std::move(kept);
    return {};
  }
  pv.shown = meta;
  return {};
}

bool PvLogGroup::log(const core::PvLogEntry& e) noexcept {
  if (e.pv >= kMaxPvIndex || e.event > static_cast<std::uint8_t>(core::PvEvent::dropped)) {
    ++malformed_;
    return true;
  }
  if (e.pv >= slot_of_.size() || slot_of_[e.pv] < 0) return false;
  Pv& pv = pvs_[static_cast<std::size_t>(slot_of_[e.pv])];
  bool ready = false;
  const auto push = [&ready](Column& c, auto v) {
    c.push(v);
    ready = ready || c.chunk_ready();
  };
  switch (static_cast<core::PvEvent>(e.event)) {
    case core::PvEvent::value: {
      if (static_cast<core::PvType>(e.type) != pv.type) return false;
      switch (pv.type) {
        case core::PvType::f64: push(pv.value, e.f64); break;
        case core::PvType::i64: push(pv.value, e.i64); break;
        case core::PvType::enumerated:
          push(pv.value, e.i64);
          copy_text(pv.value_string.stage_end(), e);
          pv.value_string.commit(1);
          ready = ready || pv.value_string.chunk_ready();
          break;
        case core::PvType::text:
          copy_text(pv.value.stage_end(), e);
          pv.value.commit(1);
          ready = ready || pv.value.chunk_ready();
          break;
        case core::PvType::unknown: return false;
      }
      push(pv.time, e.time_ns);
      if (!pv.any_alarm || e.severity != pv.last_severity || e.status != pv.last_status) {
        push(pv.severity, static_cast<std::int16_t>(e.severity));
        push(pv.status, static_cast<std::int16_t>(e.status));
        push(pv.alarm_time, e.time_ns);
        pv.any_alarm = true;
        pv.last_severity = e.severity;
        pv.last_status = e.status;
        ++rows_;
      }
      break;
    }
    case core::PvEvent::connected:
    case core::PvEvent::disconnected: {
      const bool up = static_cast<core::PvEvent>(e.event) == core::PvEvent::connected;
      push(pv.connection, static_cast<std::uint8_t>(up ? 1 : 0));
      push(pv.connection_time, e.time_ns);
      if (up) {
        pv.reconnected = true;  // its meta key was rewritten just before
        reconnected_ = true;
      }
      break;
    }
    case core::PvEvent::dropped:
      push(pv.dropped_count, e.count);
      push(pv.dropped_time, e.time_ns);
      pv.dropped += e.count;
      break;
  }
  ++rows_;
  ready_ = ready_ || ready;
  return true;
}

void PvLogGroup::commit(const std::byte* entries, std::uint32_t count) noexcept {
  for (std::uint32_t i = 0; i < count; ++i) {
    core::PvLogEntry e;
    std::memcpy(&e, entries + std::size_t{i} * sizeof e, sizeof e);
    // A PV with an entry carried has all its later ones carried too: its log stays in order.
    const bool carrying = std::any_of(source_->carried.begin(), source_->carried.end(),
                                      [&](const core::PvLogEntry& c) { return c.pv == e.pv; });
    if (!carrying && log(e)) continue;
    try {
      source_->carried.push_back(e);  // within the capacity reserved at create, but for a burst of them
    } catch (const std::bad_alloc&) {
      ++malformed_;  // out of memory: counted, as an entry the file cannot show
    }
  }
}

bool PvLogGroup::pending() const noexcept { return ready_ || reconnected_; }

core::Result<void> PvLogGroup::reread_meta() {
  reconnected_ = false;
  for (Pv& pv : pvs_) {
    if (!pv.reconnected) continue;
    pv.reconnected = false;
    const auto meta = read_meta(pv.index);
    if (!meta) continue;
    if (auto ok = write_meta(pv, *meta, true); !ok) return ok;
  }
  return {};
}

core::Result<void> PvLogGroup::write_chunks() {
  if (reconnected_)
    if (auto ok = reread_meta(); !ok) return ok;
  if (!ready_) return {};
  for (Pv& pv : pvs_)
    for (Column* c : {&pv.value, &pv.value_string, &pv.time, &pv.severity, &pv.status, &pv.alarm_time, &pv.connection,
                      &pv.connection_time, &pv.dropped_count, &pv.dropped_time})
      if (c->id() >= 0)
        if (auto ok = c->write_chunks(); !ok) return ok;  // value before time: time says a row is there
  ready_ = false;
  return {};
}

core::Result<void> PvLogGroup::write_counts() {
  for (Pv& pv : pvs_) {
    if (pv.dropped == pv.dropped_written) continue;
    if (auto ok = h5::rewrite_u64(pv.group.get(), kAttrDropped, pv.dropped); !ok)
      return tl::make_unexpected(core::with_context(ok.error(), pv.what));
    pv.dropped_written = pv.dropped;
  }
  if (malformed_ != malformed_written_) {
    if (auto ok = h5::rewrite_u64(group_.get(), kAttrMalformedEntries, malformed_); !ok)
      return tl::make_unexpected(core::with_context(ok.error(), what_));
    malformed_written_ = malformed_;
  }
  return {};
}

core::Result<void> PvLogGroup::write_partial(bool final) {
  const std::int64_t now = core::monotonic_ns();
  if (!final && last_partial_ns_ != 0 && now - last_partial_ns_ < kPvLogPartialEveryNs) {
    ready_ = true;  // whole chunks, whichever are full
    return write_chunks();
  }
  last_partial_ns_ = now;
  if (reconnected_)
    if (auto ok = reread_meta(); !ok) return ok;
  for (Pv& pv : pvs_)
    for (Column* c : {&pv.value, &pv.value_string, &pv.time, &pv.severity, &pv.status, &pv.alarm_time, &pv.connection,
                      &pv.connection_time, &pv.dropped_count, &pv.dropped_time})
      if (c->id() >= 0)
        if (auto ok = c->write_partial(); !ok) return ok;
  ready_ = false;
  return write_counts();
}

void PvLogGroup::mark_durable() noexcept {
  for (Pv& pv : pvs_) {
    for (Column* c : {&pv.value, &pv.value_string, &pv.time, &pv.severity, &pv.status, &pv.alarm_time, &pv.connection,
                      &pv.connection_time, &pv.dropped_count, &pv.dropped_time})
      if (c->id() >= 0) c->mark_durable();
    pv.dropped_durable = pv.dropped_written;
  }
}

void PvLogGroup::roll_back() noexcept {
  for (Pv& pv : pvs_) {
    for (Column* c : {&pv.value, &pv.value_string, &pv.time, &pv.severity, &pv.status, &pv.alarm_time, &pv.connection,
                      &pv.connection_time, &pv.dropped_count, &pv.dropped_time})
      if (c->id() >= 0) (void)c->roll_back();
    pv.any_alarm = false;  // the next value says its alarm state again
    pv.dropped = pv.dropped_written = pv.dropped_durable;
  }
  ready_ = false;
}

}  // namespace weir::rec
