// tango "serve", the attributes: what the server makes from the pipeline and the serve options (the
// status of channels, the disk and the parts; the chosen keys; the channels' blocks and envelopes; the run;
// server_spectra.cpp adds the spectrum channels), named
// and checked as they are added, before Tango makes the device.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <set>
#include <string>

#include <fmt/format.h>

#include "server_impl.hpp"
#include "weir/core/channel.hpp"

namespace weir::tango::detail {

namespace {

constexpr std::string_view kPartKeyPrefix = "weir.part.";  // the supervisor's part states (run_status.cpp)

}  // namespace

std::size_t Server::add(Value v) {
  if (v.kind == Kind::spectrum) v.wave.assign(v.max_x, 0.0);
  values_.push_back(std::move(v));
  return values_.size() - 1;
}

core::Result<void> Server::add_status() {
  const std::vector<core::ChannelInfo> list = core::list_channels(arena_);
  status_of_channel_.assign(arena_.geometry().channel_capacity, -1);
  for (const core::ChannelInfo& c : list) {
    auto copier = core::BlockCopier::open(arena_, c.index);
    if (!copier) return tl::make_unexpected(copier.error());
    const std::string a = attribute_part_of(c.name);
    ChannelStatusRow row{c.name, std::move(*copier)};
    Value rate = make_value(a + "_Rate", Kind::f64, "samples/s written to " + c.name, "S/s", "%.1f");
    rate.criteria = options_.rate_events;
    row.rate = add(std::move(rate));
    row.lost = add(make_value(a + "_Lost", Kind::i64, "blocks the readers of " + c.name + " lost", "blocks"));
    row.dropped = add(make_value(a + "_Dropped", Kind::i64, "blocks of " + c.name + " dropped at the source", "blocks"));
    row.lag = add(make_value(a + "_Lag", Kind::i64, "blocks of " + c.name + " not yet read by the slowest recorder", "blocks"));
    status_of_channel_[c.index] = static_cast<int>(channels_.size());
    channels_.push_back(std::move(row));
  }
  totals_.resize(channels_.size());
  if (!options_.record_dir.empty())
    disk_free_ = add(make_value("DiskFree", Kind::f64, "bytes free for the recorders in " + options_.record_dir, "B", "%.0f"));
  std::vector<std::string> names;
  for (const auto& d : pipeline_.drivers) names.push_back(d.name);
  for (const auto& s : pipeline_.shards) names.push_back(s.name);
  for (const auto& r : pipeline_.records) names.push_back(r.name);
  for (const auto& b : pipeline_.bridges) names.push_back(b.name);
  for (const auto& k : pipeline_.kafkas) names.push_back(k.name);
  for (const auto& a : pipeline_.anns) names.push_back(a.name);
  for (const auto& e : pipeline_.epics) names.push_back(e.name);
  for (const auto& t : pipeline_.tangos) names.push_back(t.name);
  for (const std::string& name : names) {
    const std::string a = "Part_" + attribute_part_of(name);
    PartRow p;
    p.name = name;
    p.state_key = std::string(kPartKeyPrefix) + name + ".state";
    p.restarts_key = std::string(kPartKeyPrefix) + name + ".restarts";
    p.state = add(make_value(a + "_State", Kind::text, "part " + name + ": the supervisor's state"));
    p.restarts = add(make_value(a + "_Restarts", Kind::i64, "part " + name + ": restarts"));
    parts_.push_back(std::move(p));
  }
  return {};
}

core::Result<void> Server::add_keys() {
  for (const KeyAttr& k : options_.keys) {
    KeyRow row;
    row.opt = &k;
    core::ValueInfo info;
    if (kv_.get(k.key, value_buf_, info) == core::KvStatus::ok) row.type = info.type;
    Kind kind = Kind::f64;
    switch (row.type) {
      case core::ValueType::i64:
      case core::ValueType::u64: kind = Kind::i64; break;
      case core::ValueType::text:
      case core::ValueType::bytes: kind = Kind::text; break;
      case core::ValueType::none:
      case core::ValueType::f64: row.type = core::ValueType::f64; break;
      case core::ValueType::vector:
      case core::ValueType::array:
        return core::fail(core::Errc::invalid_argument,
                          fmt::format("tango \"{}\": key '{}' holds {} values; only numbers and text are served as attributes",
                                      options_.part, k.key, core::value_type_name(row.type)));
    }
    Value v = make_value(k.attribute, kind, "key " + k.key, k.units, k.format);
    if (v.units.empty()) {  // the key's `<key>_units` text key, when there is one
      core::ValueInfo ui;
      if (kv_.get(k.key + "_units", value_buf_, ui) == core::KvStatus::ok && ui.type == core::ValueType::text)
        v.units.assign(reinterpret_cast<const char*>(value_buf_.data()), ui.length);
    }
    v.writable = k.writable;
    v.key = static_cast<int>(keys_.size());
    v.criteria = k.events;
    if (k.has_min) v.min = fmt::format("{}", k.min);
    if (k.has_max) v.max = fmt::format("{}", k.max);
    row.value = add(std::move(v));
    keys_.push_back(row);
  }
  return {};
}

core::Result<void> Server::add_channels() {
  for (const ChannelAttr& c : options_.channels) {
    auto served = controls::open_served_channel(arena_, fmt::format("tango \"{}\"", options_.part), "channels", c.channel);
    if (!served) return tl::make_unexpected(served.error());
    core::BlockCopier* copier = &served->copier;
    WaveRow row;
    row.opt = &c;
    row.channel = served->index;
    row.dtype = copier->desc().dtype;
    const std::string& units = served->units;
    if (c.mode == "envelope") {
      row.elements = c.elements;
      row.envelope.emplace(copier->desc(), row.channel, row.elements);
      for (const bool lo : {true, false}) {
        Value v = make_value(c.attribute + (lo ? "_Min" : "_Max"), Kind::spectrum,
                         c.channel + (lo ? ": envelope min" : ": envelope max"), units, "%.4g");
        v.max_x = row.elements;
        (lo ? row.min : row.max) = add(std::move(v));
      }
    } else {
      const std::uint32_t spb = copier->samples_per_block();
      row.elements = c.elements != 0 ? std::min(c.elements, spb) : spb;
      row.block.resize(copier->block_bytes());
      Value v = make_value(c.attribute, Kind::spectrum, c.channel + ": newest block", units, "%.4g");
      v.max_x = row.elements;
      row.wave = add(std::move(v));
    }
    row.copier.emplace(std::move(*copier));
    waves_.push_back(std::move(row));
  }
  return {};
}

void Server::add_run_control() {
  run_state_ = add(make_value("RunState", Kind::text, "the arena's run state: Idle or Running"));
  run_number_ = add(make_value("RunNumber", Kind::i64, "the running run's number, or the last one's (0: none yet)"));
  run_title_ = add(make_value("RunTitle", Kind::text, "the running or last run's title"));
  run_operator_ = add(make_value("RunOperator", Kind::text, "the running or last run's operator"));
  run_sample_ = add(make_value("RunSample", Kind::text, "the running or last run's sample"));
  run_comment_ = add(make_value("RunComment", Kind::text, "the running or last run's comment"));
  run_dir_ = add(make_value("RunDir", Kind::text, "the run directory (run log, run numbers, files)"));
  run_file_ = add(make_value("RunFile", Kind::text, "the run record of the running or last run"));
  run_message_ = add(make_value("RunMessage", Kind::text, "the last transition's outcome, or why it was refused"));
  num_captured_ = add(make_value("NumCaptured", Kind::i64, "blocks the recorders wrote in the running or last run", "blocks"));
}

core::Result<void> Server::build() {
  value_buf_.resize(std::max<std::size_t>(kv_.value_bytes(), 64));
  if (options_.status)
    if (auto ok = add_status(); !ok) return ok;
  if (auto ok = add_keys(); !ok) return ok;
  if (auto ok = add_channels(); !ok) return ok;
  if (auto ok = add_spectra(); !ok) return ok;
  if (options_.run_control) add_run_control();
  std::set<std::string> seen;  // Tango's attribute names are case-insensitive
  for (const Value& v : values_) {
    std::string lower = v.name;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (!seen.insert(lower).second || lower == "state" || lower == "status")
      return core::fail(core::Errc::invalid_argument,
                        fmt::format("tango \"{}\": attribute \"{}\" would be served twice (names are case-insensitive); "
                                    "give the key or channel its own attribute = \"...\"",
                                    options_.part, v.name));
  }
  return {};
}

}  // namespace weir::tango::detail
