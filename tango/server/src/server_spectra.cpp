// tango "serve", spectra: `<attribute>` and `<attribute>_Axis` (the axis value of each element, labelled
// with the axis's name and in its units) so that a client plots one against the other. From a framed
// channel (the fft shard's PSD): the newest frame, stamped with its block's acquisition time, against
// start + i * step or the channel's axis values key. From an array key (the mca shard's spectrum): the
// array whenever it changes, against the array key `<key>_axis` (units: the text key `<key>_axis_units`).
#include <algorithm>
#include <cstring>
#include <span>

#include <fmt/format.h>

#include "server_impl.hpp"
#include "weir/core/channel.hpp"
#include "weir/tools/value_codec.hpp"

namespace weir::tango::detail {

core::Result<void> Server::add_spectra() {
  for (const SpectrumAttr& a : options_.spectra) {
    SpectrumRow row;
    row.opt = &a;
    std::string units, axis_units, axis_name = "element";
    if (!a.channel.empty()) {
      auto served = controls::open_served_channel(arena_, fmt::format("tango \"{}\"", options_.part), "spectra", a.channel);
      if (!served) return tl::make_unexpected(served.error());
      core::BlockCopier* copier = &served->copier;
      const core::ChannelDesc& d = copier->desc();
      const core::FrameShape shape = core::frame_shape(d);
      if (!shape.framed() || shape.frame_elements == 0)
        return core::fail(core::Errc::invalid_argument,
                          fmt::format("tango \"{}\": channel '{}' (spectra = {{...}}) holds plain samples, not frames along an "
                                      "axis: serve it with channels = {{...}}",
                                      options_.part, a.channel));
      row.dtype = d.dtype;
      row.elements = shape.frame_elements;
      row.block.resize(copier->block_bytes());
      row.axis_start = shape.axis.start;
      row.axis_step = shape.axis.step;
      row.axis_key.name = shape.axis.values_key;
      units = served->units;
      axis_units = shape.axis.units;
      if (!shape.axis.name.empty()) axis_name = shape.axis.name;
      row.copier.emplace(std::move(*copier));
    } else {
      row.key.name = a.key;
      row.axis_key.name = a.key + "_axis";
      row.elements = static_cast<std::uint32_t>(kv_.value_bytes());  // the most an array key can hold (u8)
      core::ValueInfo info;
      if (kv_.get(a.key + "_axis_units", value_buf_, info) == core::KvStatus::ok && info.type == core::ValueType::text)
        axis_units.assign(reinterpret_cast<const char*>(value_buf_.data()), info.length);
      axis_name = axis_units == "keV" ? "energy" : "bin";
    }
    const std::string source = a.channel.empty() ? "key " + a.key : a.channel;
    Value frame = make_value(a.attribute, Kind::spectrum,
                             fmt::format("{}: the {}, against {}_Axis", source, a.channel.empty() ? "array" : "newest frame",
                                         a.attribute),
                             units, "%.6g");
    frame.max_x = row.elements;
    row.frame = add(std::move(frame));
    Value axis = make_value(a.attribute + "_Axis", Kind::spectrum,
                            fmt::format("{}: the {} of each element of {}", source, axis_name, a.attribute), axis_units, "%.6g");
    axis.label = axis_name;
    axis.max_x = row.elements;
    row.axis = add(std::move(axis));
    spectra_.push_back(std::move(row));
  }
  return {};
}

Server::KeyRead Server::read_array(ArrayKey& k, core::ValueInfo& info) {
  if (!k.resolved) {
    if (kv_.resolve(k.name, k.handle, false) != core::KvStatus::ok) return KeyRead::missing;
    k.resolved = true;
    k.epoch = ~0ULL;
  }
  const core::KvStatus status = kv_.get(k.handle, value_buf_, info);
  if (status == core::KvStatus::not_found || status == core::KvStatus::stale_handle) {
    k.resolved = false;
    return KeyRead::missing;
  }
  if (status != core::KvStatus::ok || info.epoch == k.epoch) return KeyRead::unchanged;  // busy or torn: next cycle
  k.epoch = info.epoch;
  if (info.type != core::ValueType::array || info.array.rank != 1 || core::dtype_bytes(info.array.elem) == 0)
    return KeyRead::missing;  // not a numeric array
  return KeyRead::changed;
}

// The axis for `s.elements` elements: from start and step, or from the axis key each time it (or the
// length) changes; INVALID while the key is missing or not an array of that length.
void Server::update_axis(SpectrumRow& s) {
  Value& v = values_[s.axis];
  if (s.axis_key.name.empty()) {
    if (v.quality == Tango::ATTR_VALID && s.axis_len == s.elements) return;
    for (std::uint32_t i = 0; i < s.elements; ++i) v.wave[i] = s.axis_start + s.axis_step * i;
    v.wave_len = s.elements;
    s.axis_len = s.elements;
    publish_wave(s.axis, now_);
    return;
  }
  if (s.axis_len != s.elements) s.axis_key.epoch = ~0ULL;  // read again for the new length
  core::ValueInfo info;
  switch (read_array(s.axis_key, info)) {
    case KeyRead::unchanged: return;
    case KeyRead::missing: return set_quality(s.axis, Tango::ATTR_INVALID);
    case KeyRead::changed: break;
  }
  s.axis_len = s.elements;
  if (info.array.elements() != s.elements) return set_quality(s.axis, Tango::ATTR_INVALID);  // not this spectrum's axis
  for (std::uint32_t i = 0; i < s.elements; ++i) v.wave[i] = tools::sample_as_f64(value_buf_.data(), info.array.elem, i);
  v.wave_len = s.elements;
  publish_wave(s.axis, now_);
}

void Server::update_spectra() {
  for (SpectrumRow& s : spectra_) {
    Value& v = values_[s.frame];
    if (!s.copier) {  // an array key
      core::ValueInfo info;
      const KeyRead r = read_array(s.key, info);
      if (r == KeyRead::missing) set_quality(s.frame, Tango::ATTR_INVALID);
      if (r == KeyRead::changed) {
        const auto n = static_cast<std::uint32_t>(std::min<std::uint64_t>(info.array.elements(), v.max_x));
        for (std::uint32_t i = 0; i < n; ++i) v.wave[i] = tools::sample_as_f64(value_buf_.data(), info.array.elem, i);
        v.wave_len = n;
        s.elements = n;
        publish_wave(s.frame, now_);
      }
      update_axis(s);  // the axis key may be written after the spectrum
      continue;
    }
    update_axis(s);
    const std::uint64_t head = s.copier->head();
    if (head == 0 || head == s.head_seen) continue;
    core::BlockRecord meta;
    if (s.copier->copy(head - 1, std::span<std::byte>(s.block), meta) != core::BlockStatus::ok) continue;  // next cycle
    s.head_seen = head;
    if ((meta.flags & core::kBlockGapFlag) != 0 || meta.samples < s.elements) continue;  // a gap carries no frame
    const std::size_t at = std::size_t{meta.samples / s.elements - 1} * s.elements;     // the block's newest frame
    for (std::uint32_t i = 0; i < s.elements; ++i) v.wave[i] = tools::sample_as_f64(s.block.data(), s.dtype, at + i);
    v.wave_len = s.elements;
    publish_wave(s.frame, time_of_ns(meta.realtime_ns));
  }
}

}  // namespace weir::tango::detail
