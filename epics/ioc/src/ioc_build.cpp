// epics "serve", the PVs: what the server makes from the pipeline and the serve options (the status of
// channels, the disk and the parts; the chosen keys; the channels' waveforms and envelopes; run
// control), named and checked as they are added, then the IOC's start and the control thread's.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ioc_database.hpp"
#include "ioc_server_impl.hpp"
#include "weir/core/channel.hpp"

namespace weir::epics::detail {

namespace {

constexpr std::string_view kPartKeyPrefix = "weir.part.";   // the supervisor's part states (run_status.cpp)
constexpr std::uint32_t kStateTextBytes = 40;               // a part state's text
constexpr std::uint32_t kMessageBytes = 1024;               // RunMessage_RBV
constexpr std::uint32_t kPathBytes = 4096;                  // FilePath_RBV, FullFileName_RBV
constexpr std::uint32_t kTextKeyMaxBytes = 65535;           // an lsi holds at most this (SIZV)
constexpr std::uint32_t kDefaultEnvelope = 1000;

// A record's display fields, built up: F("desc").egu("V").prec(3).
struct F {
  PvFields f;
  explicit F(std::string desc) { f.desc = std::move(desc); }
  F& egu(std::string v) { f.egu = std::move(v); return *this; }
  F& prec(int v) { f.prec = v; return *this; }
  F& low(double v) { f.low = v; return *this; }
  F& high(double v) { f.high = v; return *this; }
  F& elements(std::uint32_t v) { f.elements = v; return *this; }
  F& states(std::vector<std::string> v) { f.states = std::move(v); return *this; }
  F& writable() { f.read_only = false; return *this; }
  operator PvFields() const { return f; }  // NOLINT: a builder
};

}  // namespace

core::Result<Pv*> Server::add(std::string_view suffix, RecKind kind, Role role, std::uint32_t index, PvFields fields) {
  auto pv = std::make_unique<Pv>();
  pv->name = options_.prefix + std::string(suffix);
  std::string why;
  if (!valid_pv_name(pv->name, why))
    return core::fail(core::Errc::invalid_argument, fmt::format("epics \"{}\": PV \"{}\" {}", options_.part, pv->name, why));
  if (registry().by_name.count(pv->name) != 0)
    return core::fail(core::Errc::invalid_argument,
                      fmt::format("epics \"{}\": PV \"{}\" would be served twice", options_.part, pv->name));
  pv->kind = kind;
  pv->role = role;
  pv->index = index;
  pv->fields = std::move(fields);
  if (kind == RecKind::lsi || kind == RecKind::lso) pv->text.reserve(pv->fields.elements);
  if (kind == RecKind::waveform) pv->wave.assign(pv->fields.elements, 0.0);
  Pv* raw = pv.get();
  registry().by_name.emplace(raw->name, raw);
  pvs_.push_back(std::move(pv));
  return raw;
}

Pv* Server::find(std::string_view suffix) const {
  const auto it = registry().by_name.find(options_.prefix + std::string(suffix));
  return it == registry().by_name.end() ? nullptr : it->second;
}

#define WEIR_TRY_PV(var, expr)                            \
  auto var##_made = (expr);                               \
  if (!var##_made) return tl::make_unexpected(var##_made.error()); \
  Pv* var = *var##_made

core::Result<void> Server::add_status() {
  const std::vector<core::ChannelInfo> list = core::list_channels(arena_);
  status_of_channel_.assign(arena_.geometry().channel_capacity, -1);
  for (const core::ChannelInfo& c : list) {
    auto copier = core::BlockCopier::open(arena_, c.index);
    if (!copier) return tl::make_unexpected(copier.error());
    const std::string part = pv_part_of(c.name);
    const auto i = static_cast<std::uint32_t>(channels_.size());
    PvFields rate = F("samples/s written to " + c.name).egu("S/s").prec(1);
    WEIR_TRY_PV(r, add(part + ":Rate_RBV", RecKind::ai, Role::rate, i, rate));
    WEIR_TRY_PV(l, add(part + ":Lost_RBV", RecKind::int64in, Role::lost, i, F("blocks its readers lost").egu("blocks")));
    WEIR_TRY_PV(d, add(part + ":Dropped_RBV", RecKind::int64in, Role::dropped, i,
                       F("blocks dropped at the source").egu("blocks")));
    WEIR_TRY_PV(g, add(part + ":Lag_RBV", RecKind::int64in, Role::lag, i, F("recorder lag").egu("blocks")));
    status_of_channel_[c.index] = static_cast<int>(i);
    channels_.push_back(ChannelStatusRow{c.name, std::move(*copier), r, l, d, g});
  }
  totals_.resize(channels_.size());
  if (!options_.record_dir.empty()) {
    WEIR_TRY_PV(disk, add("DiskFree_RBV", RecKind::ai, Role::disk_free, 0,
                          F("bytes free for the recorders").egu("B").prec(0)));
    disk_free_ = disk;
  }
  std::vector<std::string> names;
  for (const auto& d : pipeline_.drivers) names.push_back(d.name);
  for (const auto& s : pipeline_.shards) names.push_back(s.name);
  for (const auto& r : pipeline_.records) names.push_back(r.name);
  for (const auto& b : pipeline_.bridges) names.push_back(b.name);
  for (const auto& k : pipeline_.kafkas) names.push_back(k.name);
  for (const auto& a : pipeline_.anns) names.push_back(a.name);
  for (const auto& e : pipeline_.epics) names.push_back(e.name);
  for (const std::string& name : names) {
    const auto i = static_cast<std::uint32_t>(parts_.size());
    const std::string part = "Part:" + pv_part_of(name);
    WEIR_TRY_PV(s, add(part + ":State_RBV", RecKind::lsi, Role::part_state, i,
                       F("part " + name + ": state").elements(kStateTextBytes)));
    WEIR_TRY_PV(n, add(part + ":Restarts_RBV", RecKind::int64in, Role::part_restarts, i,
                       F("part " + name + ": restarts")));
    const std::string base = std::string(kPartKeyPrefix) + name;
    parts_.push_back(PartRow{base + ".state", base + ".restarts", s, n});
  }
  return {};
}

core::Result<void> Server::add_keys() {
  for (const KeyPv& k : options_.keys) {
    KeyRow row;
    row.opt = &k;
    core::ValueInfo info;
    const core::KvStatus got = kv_.get(k.key, value_buf_, info);
    if (got == core::KvStatus::ok) row.type = info.type;
    if (row.type == core::ValueType::none) row.type = core::ValueType::f64;
    if (row.type == core::ValueType::vector || row.type == core::ValueType::array)
      return core::fail(core::Errc::invalid_argument,
                        fmt::format("epics \"{}\": key '{}' holds {} values; only numbers and text are served as PVs",
                                    options_.part, k.key, core::value_type_name(row.type)));
    PvFields f = F("key " + k.key).egu(k.units).prec(k.precision).low(k.low).high(k.high);
    if (f.egu.empty()) {  // the key's `<key>_units` text key, when there is one
      core::ValueInfo ui;
      if (kv_.get(k.key + "_units", value_buf_, ui) == core::KvStatus::ok && ui.type == core::ValueType::text)
        f.egu.assign(reinterpret_cast<const char*>(value_buf_.data()), ui.length);
    }
    f.read_only = !k.writable;
    RecKind kind = RecKind::ai;
    switch (row.type) {
      case core::ValueType::i64:
      case core::ValueType::u64: kind = k.writable ? RecKind::int64out : RecKind::int64in; break;
      case core::ValueType::text:
      case core::ValueType::bytes:
        kind = k.writable ? RecKind::lso : RecKind::lsi;
        f.elements = std::min(kv_.value_bytes() + 1, kTextKeyMaxBytes);
        break;
      case core::ValueType::none:
      case core::ValueType::f64:
      case core::ValueType::vector:
      case core::ValueType::array: kind = k.writable ? RecKind::ao : RecKind::ai; break;
    }
    WEIR_TRY_PV(pv, add(k.pv, kind, k.writable ? Role::key_out : Role::key_in, static_cast<std::uint32_t>(keys_.size()), f));
    row.pv = pv;
    keys_.push_back(row);
  }
  return {};
}

core::Result<void> Server::add_channels() {
  for (const ChannelPv& c : options_.channels) {
    auto served = controls::open_served_channel(arena_, fmt::format("epics \"{}\"", options_.part), "channels", c.channel);
    if (!served) return tl::make_unexpected(served.error());
    core::BlockCopier* copier = &served->copier;
    WaveRow row;
    row.opt = &c;
    row.channel = served->index;
    row.dtype = copier->desc().dtype;
    const std::string& units = served->units;
    const auto i = static_cast<std::uint32_t>(waves_.size());
    if (c.mode == "envelope") {
      row.elements = c.elements != 0 ? c.elements : kDefaultEnvelope;
      row.envelope.emplace(copier->desc(), row.channel, row.elements);
      PvFields f = F(c.channel + ": envelope min").egu(units).prec(4).elements(row.elements);
      WEIR_TRY_PV(lo, add(c.pv + ":Min", RecKind::waveform, Role::env_min, i, f));
      f.desc = c.channel + ": envelope max";
      WEIR_TRY_PV(hi, add(c.pv + ":Max", RecKind::waveform, Role::env_max, i, f));
      row.min = lo;
      row.max = hi;
    } else {
      const std::uint32_t spb = copier->samples_per_block();
      row.elements = c.elements != 0 ? std::min(c.elements, spb) : spb;
      row.block.resize(copier->block_bytes());
      WEIR_TRY_PV(w, add(c.pv, RecKind::waveform, Role::wave, i,
                         F(c.channel + ": newest block").egu(units).prec(4).elements(row.elements)));
      row.wave = w;
    }
    row.copier.emplace(std::move(*copier));
    waves_.push_back(std::move(row));
  }
  return {};
}

core::Result<void> Server::add_run_control() {
  const std::vector<std::string> done_capture{"Done", "Capture"};
  WEIR_TRY_PV(cap, add("Capture", RecKind::bo, Role::capture, 0,
                       F("1: start a run, 0: stop it").states(done_capture).writable()));
  WEIR_TRY_PV(cap_rbv, add("Capture_RBV", RecKind::bi, Role::capture_rbv, 0,
                           F("a run is running").states({"Done", "Capturing"})));
  WEIR_TRY_PV(num, add("NumCaptured_RBV", RecKind::int64in, Role::num_captured, 0,
                       F("blocks recorded in this run").egu("blocks")));
  WEIR_TRY_PV(fp, add("FilePath", RecKind::lsi, Role::file_path, 0, F("the recorders' directory").elements(kPathBytes)));
  WEIR_TRY_PV(fp_rbv, add("FilePath_RBV", RecKind::lsi, Role::file_path_rbv, 0,
                          F("the recorders' directory").elements(kPathBytes)));
  WEIR_TRY_PV(full, add("FullFileName_RBV", RecKind::lsi, Role::full_file_name, 0,
                        F("the run's run record").elements(kPathBytes)));
  WEIR_TRY_PV(fnum, add("FileNumber_RBV", RecKind::int64in, Role::file_number, 0, F("the run number")));
  WEIR_TRY_PV(state, add("RunState_RBV", RecKind::mbbi, Role::run_state, 0, F("run state").states({"Idle", "Running"})));
  WEIR_TRY_PV(number, add("RunNumber_RBV", RecKind::int64in, Role::run_number, 0, F("the running or last run")));
  WEIR_TRY_PV(title, add("RunTitle", RecKind::lso, Role::run_title, 0,
                         F("the next run's title").elements(core::kRunTitleBytes + 1).writable()));
  WEIR_TRY_PV(op, add("RunOperator", RecKind::lso, Role::run_operator, 0,
                      F("the next run's operator").elements(core::kRunOperatorBytes + 1).writable()));
  WEIR_TRY_PV(sample, add("RunSample", RecKind::lso, Role::run_sample, 0,
                          F("the next run's sample").elements(core::kRunSampleBytes + 1).writable()));
  const std::vector<std::string> idle_busy{"Done", "Busy"};
  WEIR_TRY_PV(start, add("Start", RecKind::bo, Role::run_start, 0, F("start a run").states(idle_busy).writable()));
  WEIR_TRY_PV(stop, add("Stop", RecKind::bo, Role::run_stop, 0, F("stop the run").states(idle_busy).writable()));
  WEIR_TRY_PV(abort, add("Abort", RecKind::bo, Role::run_abort, 0, F("abort the run").states(idle_busy).writable()));
  WEIR_TRY_PV(msg, add("RunMessage_RBV", RecKind::lsi, Role::run_message, 0,
                       F("the last run transition's outcome").elements(kMessageBytes)));
  (void)title, (void)op, (void)sample, (void)start, (void)stop, (void)abort;
  capture_ = cap;
  capture_rbv_ = cap_rbv;
  num_captured_ = num;
  file_path_ = fp;
  file_path_rbv_ = fp_rbv;
  full_file_name_ = full;
  file_number_ = fnum;
  run_state_ = state;
  run_number_ = number;
  run_message_ = msg;
  return {};
}

#undef WEIR_TRY_PV

core::Result<void> Server::build() {
  registry().by_name.clear();
  registry().handler = this;
  value_buf_.resize(std::max<std::size_t>(kv_.value_bytes(), 64));
  if (options_.status)
    if (auto ok = add_status(); !ok) return ok;
  if (auto ok = add_keys(); !ok) return ok;
  if (auto ok = add_channels(); !ok) return ok;
  if (options_.run_control)
    if (auto ok = add_run_control(); !ok) return ok;
  if (pvs_.empty())
    return core::fail(core::Errc::invalid_argument,
                      fmt::format("epics \"{}\": nothing to serve (status = false, no keys, no channels, no run control)",
                                  options_.part));
  return {};
}

core::Result<void> Server::start() {
  std::uint64_t max_array = 0;
  for (const auto& pv : pvs_)
    if (pv->kind == RecKind::waveform) max_array = std::max<std::uint64_t>(max_array, std::uint64_t{pv->fields.elements} * sizeof(double));
  if (auto ok = start_ioc(pvs_, options_.env, options_.pva, max_array); !ok)
    return core::fail(ok.error().code, fmt::format("epics \"{}\": {}", options_.part, ok.error().what));
  for (const auto& pv : pvs_)
    if (pv->rec == nullptr)
      return core::fail(core::Errc::invalid_argument, fmt::format("epics \"{}\": record {} was not initialised", options_.part, pv->name));
  if (options_.run_control) control_ = std::thread([this] { control_loop(); });
  return {};
}

}  // namespace weir::epics::detail
