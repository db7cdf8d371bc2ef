// epics "serve": the PVs made from the pipeline (status, keys, channels, run control), the update
// thread that stages what changed in the arena and asks for the records' scans, the control thread
// that makes run transitions through the doors library (door "epics") and completes the
// asynchronous puts, and the puts of writable keys. PV list: epics/ioc/README.md.
#include "weir/epics/ioc_server.hpp"

#include <sys/statvfs.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <array>
#include <thread>
#include <vector>

#include <aoRecord.h>
#include <boRecord.h>
#include <dbAccess.h>
#include <dbCommon.h>
#include <dbLock.h>
#include <dbScan.h>
#include <epicsExit.h>
#include <fmt/format.h>
#include <int64outRecord.h>
#include <lsoRecord.h>

#include "ioc_database.hpp"
#include "ioc_pv.hpp"
#include "weir/core/block_copier.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/channel_activity.hpp"
#include "weir/core/clock.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/run_control.hpp"
#include "weir/ledger/run_record.hpp"
#include "weir/runctl/doors.hpp"

namespace weir::epics {

std::string ServeReport::text() const {
  return fmt::format("epics serve: {:.1f} s, {} records, {} updates posted, {} puts accepted, {} refused", elapsed_s,
                     records, updates, puts, refused_puts);
}

std::string ServeReport::json() const {
  return fmt::format(R"({{"elapsed_s":{:.3f},"records":{},"updates":{},"puts":{},"refused_puts":{}}})", elapsed_s,
                     records, updates, puts, refused_puts);
}

namespace {

using detail::Pv;
using detail::PvFields;
using detail::RecKind;
using detail::Role;

constexpr std::string_view kDoor = "epics";
constexpr std::string_view kRecorderKindPrefix = "record";  // consumer rows of recorders ("record:hdf5")
constexpr std::string_view kPartKeyPrefix = "weir.part.";   // the supervisor's part states (run_status.cpp)
constexpr std::uint32_t kStateTextBytes = 40;               // a part state's text
constexpr std::uint32_t kMessageBytes = 1024;               // RunMessage_RBV
constexpr std::uint32_t kPathBytes = 4096;                  // FilePath_RBV, FullFileName_RBV
constexpr std::uint32_t kTextKeyMaxBytes = 65535;           // an lsi holds at most this (SIZV)
constexpr std::uint32_t kDefaultEnvelope = 1000;
constexpr std::int64_t kMaxWaitNs = 100'000'000;            // every wait looks at the stop flag this often
constexpr std::size_t kControlQueue = 16;
constexpr int kCallbackRetries = 500;                       // a full callback queue is asked again this often ...
constexpr std::int64_t kCallbackRetryNs = 10'000'000;       // ... this far apart (5 s in all)                   // run-control puts waiting for the control thread
constexpr std::uint64_t kEpicsEpochOffsetS = 631'152'000;   // POSIX_TIME_AT_EPICS_EPOCH

epicsTimeStamp epics_time(std::int64_t realtime_ns) noexcept {
  epicsTimeStamp t{};
  const auto s = static_cast<std::uint64_t>(std::max<std::int64_t>(realtime_ns, 0)) / 1'000'000'000ULL;
  t.secPastEpoch = static_cast<epicsUInt32>(s > kEpicsEpochOffsetS ? s - kEpicsEpochOffsetS : 0);
  t.nsec = static_cast<epicsUInt32>(static_cast<std::uint64_t>(std::max<std::int64_t>(realtime_ns, 0)) % 1'000'000'000ULL);
  return t;
}

bool same(double a, double b) noexcept { return a == b || (std::isnan(a) && std::isnan(b)); }

template <class T>
T load_as(const std::byte* p) noexcept {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Sample i of a block of `dtype` as a double (c64: its real part).
double sample_at(const std::byte* data, core::Dtype dtype, std::size_t i) noexcept {
  switch (dtype) {
    case core::Dtype::i8: return load_as<std::int8_t>(data + i);
    case core::Dtype::u8: return load_as<std::uint8_t>(data + i);
    case core::Dtype::i16: return load_as<std::int16_t>(data + 2 * i);
    case core::Dtype::u16: return load_as<std::uint16_t>(data + 2 * i);
    case core::Dtype::i32: return load_as<std::int32_t>(data + 4 * i);
    case core::Dtype::u32: return load_as<std::uint32_t>(data + 4 * i);
    case core::Dtype::i64: return static_cast<double>(load_as<std::int64_t>(data + 8 * i));
    case core::Dtype::f32: return load_as<float>(data + 4 * i);
    case core::Dtype::f64: return load_as<double>(data + 8 * i);
    case core::Dtype::c64: return load_as<float>(data + 8 * i);
  }
  return 0;
}

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

struct ChannelStatusRow {
  std::string name;
  core::BlockCopier copier;
  Pv* rate = nullptr;
  Pv* lost = nullptr;
  Pv* dropped = nullptr;
  Pv* lag = nullptr;
  std::uint64_t lost_sum = 0, lag_max = 0;  // this cycle's, from the consumer rows
};

struct PartRow {
  std::string state_key, restarts_key;
  Pv* state = nullptr;
  Pv* restarts = nullptr;
};

struct KeyRow {
  const KeyPv* opt = nullptr;
  core::ValueType type = core::ValueType::f64;  // as decided at start
  Pv* pv = nullptr;
  core::KeyHandle handle;
  bool resolved = false;
  std::uint64_t epoch = ~0ULL;  // of the last value staged or shown
};

struct WaveRow {
  const ChannelPv* opt = nullptr;
  std::optional<core::BlockCopier> copier;  // set at start
  std::uint32_t channel = 0;  // its index in the arena
  core::Dtype dtype = core::Dtype::f32;
  std::uint32_t elements = 0;
  Pv* wave = nullptr;
  Pv* min = nullptr;
  Pv* max = nullptr;
  std::vector<std::byte> block;       // one block's bytes
  std::vector<float> entry_lo, entry_hi;  // an envelope's pyramid entries, folded into its buckets
  std::uint64_t entry_samples = 0;    // samples per entry of the pyramid level it reads
  std::uint64_t span_entries = 0;     // entries it covers
  std::uint64_t head_seen = ~0ULL;
};

struct ControlAsk {
  Pv* pv = nullptr;
  std::int64_t value = 0;
};

class Server final : public detail::PutHandler {
 public:
  Server(const core::Arena& arena, const config::Pipeline& pipeline, const ServeOptions& options)
      : arena_(arena), pipeline_(pipeline), options_(options), kv_(arena), rc_(arena) {}
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  ~Server() override { stop_control(); }

  core::Result<void> build();
  core::Result<void> start();
  void serve(double duration_s, const std::atomic<bool>& stop);
  [[nodiscard]] ServeReport report() const;

  bool put_f64(Pv& pv, double v) noexcept override;
  bool put_i64(Pv& pv, std::int64_t v) noexcept override;
  bool put_text(Pv& pv, std::string_view v) noexcept override;
  bool queue(Pv& pv, std::int64_t v) noexcept override;

 private:
  core::Result<Pv*> add(std::string_view suffix, RecKind kind, Role role, std::uint32_t index, PvFields fields);
  core::Result<void> add_status();
  core::Result<void> add_keys();
  core::Result<void> add_channels();
  core::Result<void> add_run_control();

  void cycle();
  void update_status(std::int64_t now_rt, std::int64_t now_mono);
  void update_keys(std::int64_t now_rt);
  void update_channels();
  void update_runs(std::int64_t now_rt, bool force);
  void show_key_out(KeyRow& row, const core::ValueInfo& info);
  void show_capture(bool running);
  [[nodiscard]] Pv* find(std::string_view suffix) const;
  bool counted(bool ok) noexcept;

  bool stage_f64(Pv& pv, double v, epicsEnum16 sevr, epicsEnum16 stat, const epicsTimeStamp& t) noexcept;
  bool stage_i64(Pv& pv, std::int64_t v, epicsEnum16 sevr, epicsEnum16 stat, const epicsTimeStamp& t) noexcept;
  bool stage_text(Pv& pv, std::string_view v, epicsEnum16 sevr, epicsEnum16 stat, const epicsTimeStamp& t) noexcept;
  bool stage_alarm(Pv& pv, epicsEnum16 sevr, epicsEnum16 stat, const epicsTimeStamp& t) noexcept;
  void post(Pv& pv) noexcept;

  void control_loop();
  void stop_control() noexcept;
  void transition(const ControlAsk& ask, bool quitting);
  void message(const std::string& text, bool error);

  const core::Arena& arena_;
  const config::Pipeline& pipeline_;
  const ServeOptions& options_;
  core::KvStore kv_;
  core::RunControl rc_;
  std::vector<std::unique_ptr<Pv>> pvs_;
  std::vector<ChannelStatusRow> channels_;
  std::vector<int> status_of_channel_;  // channel index -> channels_ row, -1: not served
  std::vector<PartRow> parts_;
  std::vector<KeyRow> keys_;
  std::vector<WaveRow> waves_;
  std::vector<std::byte> value_buf_;    // a key's value
  Pv* disk_free_ = nullptr;
  std::int64_t started_mono_ = 0;

  // Run control.
  Pv* capture_ = nullptr;
  Pv* capture_rbv_ = nullptr;
  Pv* num_captured_ = nullptr;
  Pv* file_path_ = nullptr;
  Pv* file_path_rbv_ = nullptr;
  Pv* full_file_name_ = nullptr;
  Pv* file_number_ = nullptr;
  Pv* run_state_ = nullptr;
  Pv* run_number_ = nullptr;
  Pv* run_message_ = nullptr;
  std::uint32_t run_changes_seen_ = 0;
  bool running_ = false;
  std::uint64_t captured_base_ = 0;
  std::mutex meta_m_;
  core::RunMeta next_meta_;            // RunTitle, RunOperator, RunSample: the next run's

  std::mutex control_m_;
  std::condition_variable control_cv_;
  std::deque<ControlAsk> control_q_;
  bool control_quit_ = false;
  std::thread control_;

  std::atomic<std::uint64_t> updates_{0}, puts_{0}, refused_{0};
  double elapsed_s_ = 0;
};

core::Result<Pv*> Server::add(std::string_view suffix, RecKind kind, Role role, std::uint32_t index, PvFields fields) {
  auto pv = std::make_unique<Pv>();
  pv->name = options_.prefix + std::string(suffix);
  std::string why;
  if (!valid_pv_name(pv->name, why))
    return core::fail(core::Errc::invalid_argument, fmt::format("epics \"{}\": PV \"{}\" {}", options_.part, pv->name, why));
  if (detail::registry().by_name.count(pv->name) != 0)
    return core::fail(core::Errc::invalid_argument,
                      fmt::format("epics \"{}\": PV \"{}\" would be served twice", options_.part, pv->name));
  pv->kind = kind;
  pv->role = role;
  pv->index = index;
  pv->fields = std::move(fields);
  if (kind == RecKind::lsi || kind == RecKind::lso) pv->text.reserve(pv->fields.elements);
  if (kind == RecKind::waveform) pv->wave.assign(pv->fields.elements, 0.0);
  Pv* raw = pv.get();
  detail::registry().by_name.emplace(raw->name, raw);
  pvs_.push_back(std::move(pv));
  return raw;
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
    auto copier = core::BlockCopier::open(arena_, c.channel);
    if (!copier)
      return core::fail(core::Errc::not_found, fmt::format("epics \"{}\": channel '{}' (channels = {{...}}) is not in the arena: {}",
                                                           options_.part, c.channel, copier.error().what));
    auto index = core::find_channel(arena_, c.channel);
    if (!index) return tl::make_unexpected(index.error());
    WaveRow row;
    row.opt = &c;
    row.channel = *index;
    row.dtype = copier->desc().dtype;
    const std::string units(copier->desc().units, strnlen(copier->desc().units, sizeof copier->desc().units));
    const auto i = static_cast<std::uint32_t>(waves_.size());
    if (c.mode == "envelope") {
      row.elements = c.elements != 0 ? c.elements : kDefaultEnvelope;
      // The samples the ring holds, in `elements` buckets, from the coarsest pyramid level whose
      // entries are no wider than a bucket (each bucket then folds whole entries), as far back as
      // that level reaches.
      const core::ChannelDesc& d = copier->desc();
      const double bucket = static_cast<double>(std::uint64_t{d.ring_blocks} * d.samples_per_block) / row.elements;
      std::uint64_t width = std::max<std::uint32_t>(d.pyramid_factor, 1);
      for (std::uint32_t level = 1; level < d.pyramid_levels && static_cast<double>(width * d.pyramid_factor) <= bucket; ++level)
        width *= d.pyramid_factor;
      row.entry_samples = width;
      // A level keeps pyramid_entries entries, less those of the block the writer may be overwriting.
      const std::uint64_t reach = d.pyramid_entries > (d.samples_per_block + width - 1) / width + 2
                                      ? d.pyramid_entries - (d.samples_per_block + width - 1) / width - 2
                                      : 1;
      row.span_entries = std::clamp<std::uint64_t>(std::uint64_t{d.ring_blocks} * d.samples_per_block / width, 1, reach);
      row.entry_lo.assign(row.span_entries, 0.0F);
      row.entry_hi.assign(row.span_entries, 0.0F);
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
  detail::registry().by_name.clear();
  detail::registry().handler = this;
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
  if (auto ok = detail::start_ioc(pvs_, options_.env, options_.pva, max_array); !ok)
    return core::fail(ok.error().code, fmt::format("epics \"{}\": {}", options_.part, ok.error().what));
  for (const auto& pv : pvs_)
    if (pv->rec == nullptr)
      return core::fail(core::Errc::invalid_argument, fmt::format("epics \"{}\": record {} was not initialised", options_.part, pv->name));
  if (options_.run_control) control_ = std::thread([this] { control_loop(); });
  return {};
}

// --- staging ---------------------------------------------------------------------------------------

void Server::post(Pv& pv) noexcept {
  (void)scanIoRequest(pv.scan);
  updates_.fetch_add(1, std::memory_order_relaxed);  // relaxed: a counter for the report
}

bool Server::stage_f64(Pv& pv, double v, epicsEnum16 sevr, epicsEnum16 stat, const epicsTimeStamp& t) noexcept {
  {
    const std::lock_guard lock(pv.m);
    if (pv.staged && same(pv.f64, v) && pv.sevr == sevr && pv.stat == stat) return false;
    pv.f64 = v;
    pv.sevr = sevr;
    pv.stat = stat;
    pv.time = t;
    pv.staged = true;
  }
  post(pv);
  return true;
}

bool Server::stage_i64(Pv& pv, std::int64_t v, epicsEnum16 sevr, epicsEnum16 stat, const epicsTimeStamp& t) noexcept {
  {
    const std::lock_guard lock(pv.m);
    if (pv.staged && pv.i64 == v && pv.sevr == sevr && pv.stat == stat) return false;
    pv.i64 = v;
    pv.sevr = sevr;
    pv.stat = stat;
    pv.time = t;
    pv.staged = true;
  }
  post(pv);
  return true;
}

bool Server::stage_text(Pv& pv, std::string_view v, epicsEnum16 sevr, epicsEnum16 stat, const epicsTimeStamp& t) noexcept {
  {
    const std::lock_guard lock(pv.m);
    v = v.substr(0, std::min<std::size_t>(v.size(), pv.text.capacity()));  // within the capacity: no allocation
    if (pv.staged && pv.text == v && pv.sevr == sevr && pv.stat == stat) return false;
    pv.text.assign(v);
    pv.sevr = sevr;
    pv.stat = stat;
    pv.time = t;
    pv.staged = true;
  }
  post(pv);
  return true;
}

// --- the update thread -----------------------------------------------------------------------------

void Server::update_status(std::int64_t now_rt, std::int64_t now_mono) {
  const epicsTimeStamp t = epics_time(now_rt);
  for (ChannelStatusRow& c : channels_) c.lost_sum = c.lag_max = 0;
  const auto* rows = reinterpret_cast<const core::ConsumerRow*>(arena_.region(core::Region::consumers));
  for (std::uint32_t r = 0; r < arena_.geometry().consumer_capacity; ++r) {
    const core::ConsumerRow& row = rows[r];
    if (row.active.load(std::memory_order_acquire) == 0) continue;  // pairs with the row's registration
    const std::uint32_t ch = row.channel.load(std::memory_order_relaxed);  // relaxed: counters to display
    if (ch >= status_of_channel_.size() || status_of_channel_[ch] < 0) continue;
    ChannelStatusRow& c = channels_[static_cast<std::size_t>(status_of_channel_[ch])];
    c.lost_sum += row.blocks_lost.load(std::memory_order_relaxed);
    const std::string_view kind(row.kind, strnlen(row.kind, sizeof row.kind));
    if (kind.substr(0, kRecorderKindPrefix.size()) == kRecorderKindPrefix) {
      const std::uint64_t head = c.copier.head();
      const std::uint64_t cursor = row.cursor.load(std::memory_order_relaxed);
      c.lag_max = std::max(c.lag_max, head > cursor ? head - cursor : 0);
    }
  }
  const double since_start_s = static_cast<double>(now_mono - started_mono_) / 1e9;
  for (ChannelStatusRow& c : channels_) {
    const core::ChannelActivity a = core::channel_activity(c.copier, now_mono);
    // A writer with no new block for stall_s (or none at all by then) is a MAJOR alarm on the rate.
    const bool stalled = a.known ? a.age_s > options_.stall_s : since_start_s > options_.stall_s;
    const epicsEnum16 sevr = stalled ? MAJOR_ALARM : NO_ALARM;
    const epicsEnum16 stat = stalled ? STATE_ALARM : NO_ALARM;
    (void)stage_f64(*c.rate, a.known ? a.samples_per_s : 0.0, sevr, stat, t);
    (void)stage_i64(*c.lost, static_cast<std::int64_t>(c.lost_sum), NO_ALARM, NO_ALARM, t);
    (void)stage_i64(*c.dropped, static_cast<std::int64_t>(c.copier.desc().dropped_at_source.load(std::memory_order_relaxed)),
                    NO_ALARM, NO_ALARM, t);  // relaxed: a counter to display
    (void)stage_i64(*c.lag, static_cast<std::int64_t>(c.lag_max), NO_ALARM, NO_ALARM, t);
  }
  if (disk_free_ != nullptr) {
    struct statvfs fs{};
    if (statvfs(options_.record_dir.c_str(), &fs) == 0)
      (void)stage_f64(*disk_free_, static_cast<double>(fs.f_bavail) * static_cast<double>(fs.f_frsize), NO_ALARM, NO_ALARM, t);
    else
      (void)stage_f64(*disk_free_, 0, INVALID_ALARM, READ_ALARM, t);
  }
  for (PartRow& p : parts_) {
    core::ValueInfo info;
    const core::KvStatus s = kv_.get(p.state_key, value_buf_, info);
    if (s == core::KvStatus::ok && info.type == core::ValueType::text) {
      const std::string_view state(reinterpret_cast<const char*>(value_buf_.data()), info.length);
      const bool bad = state != "running";
      (void)stage_text(*p.state, state, bad ? MINOR_ALARM : NO_ALARM, bad ? STATE_ALARM : NO_ALARM, t);
    } else {
      (void)stage_text(*p.state, "unknown", INVALID_ALARM, UDF_ALARM, t);
    }
    std::uint64_t bits = 0;
    core::ValueType type{};
    if (kv_.get_scalar(p.restarts_key, bits, type) == core::KvStatus::ok)
      (void)stage_i64(*p.restarts, static_cast<std::int64_t>(bits), NO_ALARM, NO_ALARM, t);
  }
}

// The key's value as a number or text, for the PV's record type; false for a value of another kind.
bool key_number(core::ValueType type, const std::byte* v, double& out) noexcept {
  switch (type) {
    case core::ValueType::f64: out = load_as<double>(v); return true;
    case core::ValueType::i64: out = static_cast<double>(load_as<std::int64_t>(v)); return true;
    case core::ValueType::u64: out = static_cast<double>(load_as<std::uint64_t>(v)); return true;
    case core::ValueType::none:
    case core::ValueType::bytes:
    case core::ValueType::text:
    case core::ValueType::vector:
    case core::ValueType::array: return false;
  }
  return false;
}

bool key_integer(core::ValueType type, const std::byte* v, std::int64_t& out) noexcept {
  switch (type) {
    case core::ValueType::i64: out = load_as<std::int64_t>(v); return true;
    case core::ValueType::u64:
      out = static_cast<std::int64_t>(std::min<std::uint64_t>(load_as<std::uint64_t>(v), INT64_MAX));
      return true;
    case core::ValueType::f64: {
      const double d = load_as<double>(v);
      if (!std::isfinite(d)) return false;
      out = std::llround(std::clamp(d, -9.2e18, 9.2e18));
      return true;
    }
    case core::ValueType::none:
    case core::ValueType::bytes:
    case core::ValueType::text:
    case core::ValueType::vector:
    case core::ValueType::array: return false;
  }
  return false;
}

// Text of a key: the bytes of a text key, a number written out (into `scratch`, no allocation).
bool key_text(core::ValueType type, const std::byte* v, std::uint32_t length, std::span<char> scratch,
              std::string_view& out) noexcept {
  if (type == core::ValueType::text || type == core::ValueType::bytes) {
    out = std::string_view(reinterpret_cast<const char*>(v), length);
    return true;
  }
  std::to_chars_result r{};
  switch (type) {
    case core::ValueType::f64: r = std::to_chars(scratch.data(), scratch.data() + scratch.size(), load_as<double>(v)); break;
    case core::ValueType::i64: r = std::to_chars(scratch.data(), scratch.data() + scratch.size(), load_as<std::int64_t>(v)); break;
    case core::ValueType::u64: r = std::to_chars(scratch.data(), scratch.data() + scratch.size(), load_as<std::uint64_t>(v)); break;
    case core::ValueType::none:
    case core::ValueType::bytes:
    case core::ValueType::text:
    case core::ValueType::vector:
    case core::ValueType::array: return false;
  }
  if (r.ec != std::errc{}) return false;
  out = std::string_view(scratch.data(), static_cast<std::size_t>(r.ptr - scratch.data()));
  return true;
}

// Shows `text` in an lso record (weir's value, not a put): processed with `syncing` set.
void show_lso(Pv& pv, std::string_view text) {
  auto* rec = reinterpret_cast<lsoRecord*>(pv.rec);
  dbScanLock(pv.rec);
  if (rec->pact == 0 && rec->sizv > 0) {
    const std::size_t n = std::min<std::size_t>(text.size(), rec->sizv - 1U);
    if (rec->udf != 0 || std::string_view(rec->val, strnlen(rec->val, rec->sizv)) != text.substr(0, n)) {
      std::memcpy(rec->val, text.data(), n);
      rec->val[n] = '\0';
      rec->len = static_cast<epicsUInt32>(n + 1);
      rec->udf = 0;
      pv.syncing = true;
      (void)dbProcess(pv.rec);
      pv.syncing = false;
    }
  }
  dbScanUnlock(pv.rec);
}

}  // namespace

namespace {

void Server::show_key_out(KeyRow& row, const core::ValueInfo& info) {
  Pv& pv = *row.pv;
  const std::byte* v = value_buf_.data();
  if (pv.kind == RecKind::lso) {
    std::array<char, 32> scratch{};
    std::string_view text;
    if (key_text(info.type, v, info.length, scratch, text)) show_lso(pv, text);
    return;
  }
  dbScanLock(pv.rec);
  if (pv.rec->pact == 0) {
    bool differs = false;
    if (pv.kind == RecKind::ao) {
      auto* rec = reinterpret_cast<aoRecord*>(pv.rec);
      double d = 0;
      if (key_number(info.type, v, d) && (rec->udf != 0 || !same(rec->val, d))) {
        rec->val = d;
        differs = true;
      }
    } else if (pv.kind == RecKind::int64out) {
      auto* rec = reinterpret_cast<int64outRecord*>(pv.rec);
      std::int64_t i = 0;
      if (key_integer(info.type, v, i) && (rec->udf != 0 || rec->val != i)) {
        rec->val = i;
        differs = true;
      }
    }
    if (differs) {
      pv.rec->udf = 0;
      pv.syncing = true;
      (void)dbProcess(pv.rec);
      pv.syncing = false;
    }
  }
  dbScanUnlock(pv.rec);
}

bool Server::stage_alarm(Pv& pv, epicsEnum16 sevr, epicsEnum16 stat, const epicsTimeStamp& t) noexcept {
  {
    const std::lock_guard lock(pv.m);
    if (pv.sevr == sevr && pv.stat == stat) return false;
    pv.sevr = sevr;
    pv.stat = stat;
    pv.time = t;
  }
  post(pv);
  return true;
}

void Server::update_keys(std::int64_t now_rt) {
  const epicsTimeStamp t = epics_time(now_rt);
  for (KeyRow& row : keys_) {
    Pv& pv = *row.pv;
    const bool input = pv.role == Role::key_in;
    if (!row.resolved) {
      if (kv_.resolve(row.opt->key, row.handle, false) != core::KvStatus::ok) {
        if (input) (void)stage_alarm(pv, INVALID_ALARM, UDF_ALARM, t);  // no such key (yet)
        continue;
      }
      row.resolved = true;
      row.epoch = ~0ULL;
    }
    core::ValueInfo info;
    const core::KvStatus s = kv_.get(row.handle, value_buf_, info);
    if (s == core::KvStatus::not_found || s == core::KvStatus::stale_handle) {
      row.resolved = false;
      if (input) (void)stage_alarm(pv, INVALID_ALARM, UDF_ALARM, t);
      continue;
    }
    if (s != core::KvStatus::ok || info.epoch == row.epoch) continue;  // busy or torn: next cycle
    row.epoch = info.epoch;
    if (!input) {
      show_key_out(row, info);
      continue;
    }
    const std::byte* v = value_buf_.data();
    switch (pv.kind) {
      case RecKind::ai: {
        double d = 0;
        if (key_number(info.type, v, d)) (void)stage_f64(pv, d, NO_ALARM, NO_ALARM, t);
        else (void)stage_alarm(pv, INVALID_ALARM, READ_ALARM, t);  // the key now holds another kind of value
        break;
      }
      case RecKind::int64in: {
        std::int64_t i = 0;
        if (key_integer(info.type, v, i)) (void)stage_i64(pv, i, NO_ALARM, NO_ALARM, t);
        else (void)stage_alarm(pv, INVALID_ALARM, READ_ALARM, t);
        break;
      }
      case RecKind::lsi: {
        std::array<char, 32> scratch{};
        std::string_view text;
        if (key_text(info.type, v, info.length, scratch, text)) (void)stage_text(pv, text, NO_ALARM, NO_ALARM, t);
        else (void)stage_alarm(pv, INVALID_ALARM, READ_ALARM, t);
        break;
      }
      case RecKind::bi:
      case RecKind::mbbi:
      case RecKind::waveform:
      case RecKind::ao:
      case RecKind::bo:
      case RecKind::int64out:
      case RecKind::lso: break;
    }
  }
}

void Server::update_channels() {
  for (WaveRow& w : waves_) {
    const std::uint64_t head = w.copier->head();
    if (head == 0 || head == w.head_seen) continue;
    if (w.wave != nullptr) {
      core::BlockRecord meta;
      if (w.copier->copy(head - 1, std::span<std::byte>(w.block), meta) != core::BlockStatus::ok) continue;  // next cycle
      w.head_seen = head;
      if ((meta.flags & core::kBlockGapFlag) != 0) continue;  // a gap carries no samples
      const std::uint32_t n = std::min(meta.samples, w.elements);
      {
        Pv& pv = *w.wave;
        const std::lock_guard lock(pv.m);
        for (std::uint32_t i = 0; i < n; ++i) pv.wave[i] = sample_at(w.block.data(), w.dtype, i);
        pv.wave_len = n;
        pv.sevr = pv.stat = NO_ALARM;
        pv.time = epics_time(static_cast<std::int64_t>(meta.realtime_ns));
        pv.staged = true;
      }
      post(*w.wave);
      continue;
    }
    // The envelope: complete pyramid entries of the newest span, folded into `elements` buckets.
    w.head_seen = head;
    const core::ChannelDesc& d = w.copier->desc();
    const std::uint64_t written = d.samples_written.load(std::memory_order_acquire);  // pairs with the writer's publish
    const std::uint64_t end = written / w.entry_samples * w.entry_samples;
    const std::uint64_t span = w.span_entries * w.entry_samples;
    const std::uint64_t first = end > span ? end - span : 0;
    const auto n = static_cast<std::size_t>((end - first) / w.entry_samples);
    if (n == 0) continue;
    core::envelope(arena_, w.channel, first, end - first, std::span<float>(w.entry_lo.data(), n),
                   std::span<float>(w.entry_hi.data(), n));
    const std::size_t buckets = std::min<std::size_t>(w.elements, n);
    const epicsTimeStamp t = epics_time(core::realtime_ns());
    for (Pv* pv : {w.min, w.max}) {
      const bool lo = pv == w.min;
      const std::vector<float>& src = lo ? w.entry_lo : w.entry_hi;
      {
        const std::lock_guard lock(pv->m);
        std::fill_n(pv->wave.begin(), buckets, std::numeric_limits<double>::quiet_NaN());
        for (std::size_t i = 0; i < n; ++i) {
          if (std::isnan(src[i])) continue;  // an entry the writer overtook, or a gap
          double& b = pv->wave[i * buckets / n];
          const auto v = static_cast<double>(src[i]);
          b = std::isnan(b) ? v : lo ? std::min(b, v) : std::max(b, v);
        }
        pv->wave_len = static_cast<std::uint32_t>(buckets);
        pv->sevr = pv->stat = NO_ALARM;
        pv->time = t;
        pv->staged = true;
      }
      post(*pv);
    }
  }
}

void Server::show_capture(bool running) {
  dbCommon* rec = capture_->rec;
  dbScanLock(rec);
  auto* bo = reinterpret_cast<boRecord*>(rec);
  if (rec->pact == 0 && (rec->udf != 0 || (bo->val != 0) != running)) {
    bo->val = running ? 1 : 0;
    rec->udf = 0;
    capture_->syncing = true;
    (void)dbProcess(rec);
    capture_->syncing = false;
  }
  dbScanUnlock(rec);
}

void Server::update_runs(std::int64_t now_rt, bool force) {
  const epicsTimeStamp t = epics_time(now_rt);
  const std::uint32_t changes = rc_.changes();
  if (force || changes != run_changes_seen_) {  // a transition: rare, so the copy may allocate
    run_changes_seen_ = changes;
    const core::RunStatus s = rc_.status();
    running_ = s.state == core::RunState::running;
    (void)stage_i64(*run_state_, running_ ? 1 : 0, NO_ALARM, NO_ALARM, t);
    (void)stage_i64(*capture_rbv_, running_ ? 1 : 0, NO_ALARM, NO_ALARM, t);
    (void)stage_i64(*run_number_, static_cast<std::int64_t>(s.number), NO_ALARM, NO_ALARM, t);
    (void)stage_i64(*file_number_, static_cast<std::int64_t>(s.number), NO_ALARM, NO_ALARM, t);
    const std::string dir = s.dir.empty() ? options_.record_dir : s.dir;
    (void)stage_text(*file_path_, dir, NO_ALARM, NO_ALARM, t);
    (void)stage_text(*file_path_rbv_, dir, NO_ALARM, NO_ALARM, t);
    const std::string full =
        s.number > 0 && !dir.empty() ? ledger::run_record_path(dir, arena_.location().name, s.number).string() : "";
    (void)stage_text(*full_file_name_, full, NO_ALARM, NO_ALARM, t);
    show_capture(running_);
  }
  // Blocks the recorders wrote since the run began: their consumer rows' blocks_out (recorders of
  // controlled runs write only inside runs), less what they showed while idle.
  std::uint64_t sum = 0;
  const auto* rows = reinterpret_cast<const core::ConsumerRow*>(arena_.region(core::Region::consumers));
  for (std::uint32_t r = 0; r < arena_.geometry().consumer_capacity; ++r) {
    const core::ConsumerRow& row = rows[r];
    if (row.active.load(std::memory_order_acquire) == 0) continue;  // pairs with the row's registration
    const std::string_view kind(row.kind, strnlen(row.kind, sizeof row.kind));
    if (kind.substr(0, kRecorderKindPrefix.size()) == kRecorderKindPrefix)
      sum += row.blocks_out.load(std::memory_order_relaxed);  // relaxed: a counter to display
  }
  if (!running_) {
    captured_base_ = sum;
  } else {
    captured_base_ = std::min(captured_base_, sum);  // a recorder restarted: its row counts from 0
    (void)stage_i64(*num_captured_, static_cast<std::int64_t>(sum - captured_base_), NO_ALARM, NO_ALARM, t);
  }
}

void Server::cycle() {
  const std::int64_t now_rt = core::realtime_ns();
  const std::int64_t now_mono = core::monotonic_ns();
  if (options_.status) update_status(now_rt, now_mono);
  update_keys(now_rt);
  update_channels();
  if (options_.run_control) update_runs(now_rt, false);
}

void Server::serve(double duration_s, const std::atomic<bool>& stop) {
  started_mono_ = core::monotonic_ns();
  const auto period_ns = static_cast<std::int64_t>(std::llround(1e9 / options_.update_hz));
  const auto duration_ns = static_cast<std::int64_t>(duration_s * 1e9);
  if (options_.run_control) {
    update_runs(core::realtime_ns(), true);
    for (Pv* meta : {find("RunTitle"), find("RunOperator"), find("RunSample")})
      if (meta != nullptr) show_lso(*meta, "");
    message("ready", false);
  }
  std::int64_t next = started_mono_;
  while (!stop.load(std::memory_order_relaxed)) {  // relaxed: a flag set by a signal handler
    const std::int64_t now = core::monotonic_ns();
    if (duration_ns > 0 && now - started_mono_ >= duration_ns) break;
    if (now >= next) {
      cycle();
      next += period_ns;
      if (next < now) next = now + period_ns;  // late (a slow cycle): no burst to catch up
      continue;
    }
    const std::int64_t wait_ns = std::min(next - now, kMaxWaitNs);
    if (options_.run_control) {
      if (rc_.wait(run_changes_seen_, wait_ns) != run_changes_seen_) update_runs(core::realtime_ns(), false);
    } else {
      std::this_thread::sleep_for(std::chrono::nanoseconds(wait_ns));
    }
  }
  elapsed_s_ = static_cast<double>(core::monotonic_ns() - started_mono_) / 1e9;
  stop_control();
}

Pv* Server::find(std::string_view suffix) const {
  const auto it = detail::registry().by_name.find(options_.prefix + std::string(suffix));
  return it == detail::registry().by_name.end() ? nullptr : it->second;
}

// --- puts ------------------------------------------------------------------------------------------

bool Server::counted(bool ok) noexcept {
  (ok ? puts_ : refused_).fetch_add(1, std::memory_order_relaxed);  // relaxed: counters for the report
  return ok;
}

bool Server::put_f64(Pv& pv, double v) noexcept {
  if (pv.role != Role::key_out || pv.index >= keys_.size() || !std::isfinite(v)) return counted(false);
  const KeyRow& row = keys_[pv.index];
  core::KvStatus s = core::KvStatus::type_mismatch;
  switch (row.type) {
    case core::ValueType::i64: s = kv_.set_i64(row.opt->key, std::llround(v)); break;
    case core::ValueType::u64: s = v < 0 ? core::KvStatus::type_mismatch : kv_.set_u64(row.opt->key, static_cast<std::uint64_t>(std::llround(v))); break;
    case core::ValueType::none:
    case core::ValueType::f64: s = kv_.set_f64(row.opt->key, v); break;
    case core::ValueType::bytes:
    case core::ValueType::text:
    case core::ValueType::vector:
    case core::ValueType::array: break;
  }
  return counted(s == core::KvStatus::ok);
}

bool Server::put_i64(Pv& pv, std::int64_t v) noexcept {
  if (pv.role != Role::key_out || pv.index >= keys_.size()) return counted(false);
  const KeyRow& row = keys_[pv.index];
  core::KvStatus s = core::KvStatus::type_mismatch;
  if (row.type == core::ValueType::u64) s = v < 0 ? core::KvStatus::type_mismatch : kv_.set_u64(row.opt->key, static_cast<std::uint64_t>(v));
  else if (row.type == core::ValueType::i64) s = kv_.set_i64(row.opt->key, v);
  return counted(s == core::KvStatus::ok);
}

bool Server::put_text(Pv& pv, std::string_view v) noexcept {
  if (pv.role == Role::key_out && pv.index < keys_.size())
    return counted(kv_.set_text(keys_[pv.index].opt->key, v) == core::KvStatus::ok);
  if (pv.role != Role::run_title && pv.role != Role::run_operator && pv.role != Role::run_sample) return counted(false);
  try {  // a put of a run's metadata: checked as a start would check it
    core::RunMeta one;
    std::string& field = pv.role == Role::run_title ? one.title : pv.role == Role::run_operator ? one.operator_name : one.sample;
    field.assign(v);
    if (!core::check_run_meta(one)) return counted(false);
    const std::lock_guard lock(meta_m_);
    (pv.role == Role::run_title ? next_meta_.title : pv.role == Role::run_operator ? next_meta_.operator_name : next_meta_.sample) = field;
  } catch (...) {  // std::bad_alloc: refuse the put
    return counted(false);
  }
  return counted(true);
}

bool Server::queue(Pv& pv, std::int64_t v) noexcept {
  try {
    const std::lock_guard lock(control_m_);
    if (control_quit_ || control_q_.size() >= kControlQueue) return counted(false);
    control_q_.push_back(ControlAsk{&pv, v});
  } catch (...) {
    return counted(false);
  }
  control_cv_.notify_one();
  return true;
}

// --- the control thread ----------------------------------------------------------------------------

void Server::message(const std::string& text, bool error) {
  if (run_message_ == nullptr) return;
  (void)stage_text(*run_message_, text, error ? MINOR_ALARM : NO_ALARM, error ? STATE_ALARM : NO_ALARM,
                   epics_time(core::realtime_ns()));
}

void Server::transition(const ControlAsk& ask, bool quitting) {
  Pv& pv = *ask.pv;
  bool ok = false;
  std::int64_t value = 0;
  std::string text;
  const auto start = [&] {
    core::RunMeta meta;
    {
      const std::lock_guard lock(meta_m_);
      meta = next_meta_;
    }
    auto s = runctl::start_run(arena_, meta, kDoor);
    ok = s.has_value();
    text = ok ? fmt::format("run {} started", s->number) : s.error().what;
  };
  const auto stop = [&](core::RunEnd how) {
    auto s = runctl::stop_run(arena_, kDoor, how);
    ok = s.has_value();
    const char* verb = how == core::RunEnd::aborted ? "abort" : "stop";
    if (!ok) {
      text = fmt::format("{}: {}", verb, s.error().what);
      return;
    }
    text = runctl::ledger_line(s->row);
    if (!s->closed) text += fmt::format(" ({} recorder(s) had not closed the run's files)", s->late.size());
  };
  if (quitting) {
    text = "refused: weir-epics is stopping";
  } else {
    switch (pv.role) {
      case Role::capture:
        if (ask.value != 0) start();
        else if (rc_.status().state == core::RunState::idle) ok = true, text = "no run is running";
        else stop(core::RunEnd::stopped);
        value = rc_.status().state == core::RunState::running ? 1 : 0;
        break;
      case Role::run_start: start(); break;
      case Role::run_stop: stop(core::RunEnd::stopped); break;
      case Role::run_abort: stop(core::RunEnd::aborted); break;
      default: text = "refused: not a run-control PV"; break;
    }
  }
  (void)counted(ok);
  message(text, !ok);
  {
    const std::lock_guard lock(pv.m);
    pv.async_ok = ok;
    pv.async_val = value;
  }
  // The put's second pass. A full callback queue is retried, bounded: the record stays active until
  // it is queued, and a client's put-callback waits for it.
  for (int attempt = 0; attempt < kCallbackRetries; ++attempt) {
    if (callbackRequestProcessCallback(&pv.done, priorityLow, pv.rec) == 0) return;
    std::this_thread::sleep_for(std::chrono::nanoseconds(kCallbackRetryNs));
  }
  refused_.fetch_add(1, std::memory_order_relaxed);  // relaxed: a counter for the report
}

void Server::control_loop() {
  std::unique_lock lock(control_m_);
  for (;;) {
    control_cv_.wait_for(lock, std::chrono::nanoseconds(kMaxWaitNs), [&] { return control_quit_ || !control_q_.empty(); });
    if (control_q_.empty()) {
      if (control_quit_) return;
      continue;
    }
    const ControlAsk ask = control_q_.front();
    control_q_.pop_front();
    const bool quitting = control_quit_;
    lock.unlock();
    transition(ask, quitting);
    lock.lock();
  }
}

void Server::stop_control() noexcept {
  {
    const std::lock_guard lock(control_m_);
    control_quit_ = true;
  }
  control_cv_.notify_all();
  if (control_.joinable()) control_.join();
}

ServeReport Server::report() const {
  ServeReport r;
  r.elapsed_s = elapsed_s_;
  r.records = pvs_.size();
  r.updates = updates_.load(std::memory_order_relaxed);  // relaxed: counters, read after the threads stopped
  r.puts = puts_.load(std::memory_order_relaxed);
  r.refused_puts = refused_.load(std::memory_order_relaxed);
  return r;
}

}  // namespace

core::Result<ServeReport> run_server(const core::Arena& arena, const config::Pipeline& pipeline,
                                     const ServeOptions& options, double duration_s, const std::atomic<bool>& stop) {
  static std::atomic<bool> started{false};
  if (started.exchange(true))
    return core::fail(core::Errc::conflict, "epics serve: one server per process (the IOC database is the process's)");
  // The IOC's records point at the server's PVs until the process exits: it is never destroyed.
  auto* server = new Server(arena, pipeline, options);  // NOLINT: lives as long as the process
  if (auto ok = server->build(); !ok) return tl::make_unexpected(ok.error());
  if (auto ok = server->start(); !ok) return tl::make_unexpected(ok.error());
  server->serve(duration_s, stop);
  // EPICS's own exit handlers (the servers' threads, QSRV's and RSRV's sockets) run now, while the
  // objects they use still exist, rather than among the process's static destructors.
  epicsExitCallAtExits();
  return server->report();
}

}  // namespace weir::epics
