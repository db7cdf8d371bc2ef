#pragma once
// tango "serve" inside: the Server (the attributes made from the pipeline, the update thread that reads
// the arena and pushes events, the run commands), its Value rows and the Tango device and class that
// serve them. Each file has one job: server_build.cpp makes the rows, server_update.cpp (status, keys,
// State), server_waves.cpp (channels), server_spectra.cpp (spectrum channels and their axes) and server_runs.cpp (run attributes, StartRun/StopRun/AbortRun)
// are the reads and transitions, server_events.cpp decides and pushes events, weir_device.cpp is the
// Tango side (class, device, attributes, commands), tango_server.cpp run_server(). Private to tango/server.
#include <sys/time.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <tango.h>

#include "weir/config/pipeline.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/block_copier.hpp"
#include "weir/core/error.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/controls/channel_envelope.hpp"
#include "weir/controls/consumer_totals.hpp"
#include "weir/controls/served_channel.hpp"
#include "weir/core/run_control.hpp"
#include "weir/tango/serve_config.hpp"
#include "weir/tango/tango_server.hpp"

namespace weir::tango::detail {

inline constexpr const char* kClassName = "WeirDevice";
inline constexpr const char* kServerName = "weir-tango";
inline constexpr const char* kRunRefused = "WEIR_RUN_REFUSED";     // a run transition weir refused
inline constexpr const char* kWriteRefused = "WEIR_WRITE_REFUSED"; // a key write weir could not apply

enum class Kind : std::uint8_t { f64, i64, text, spectrum };

/// One attribute: what Tango reads (changed only under the device's monitor), its display properties
/// and what the last change and archive events carried.
struct Value {
  std::string name;
  Kind kind = Kind::f64;
  bool writable = false;
  int key = -1;                       // keys_ row of a key attribute
  std::string units, format, description, min, max, label;
  std::uint32_t max_x = 1;            // a spectrum's capacity
  EventCriteria criteria;

  double f64 = 0;
  Tango::DevLong64 i64 = 0;
  std::string text;
  Tango::DevString text_ptr = nullptr;  // text.c_str(), as Tango reads a DevString
  std::vector<double> wave;
  long wave_len = 0;
  Tango::AttrQuality quality = Tango::ATTR_INVALID;
  timeval time{};

  struct Last {
    bool sent = false;
    double number = 0;
    Tango::AttrQuality quality = Tango::ATTR_INVALID;
  } change, archive;
};

/// A value row before it is added: its name, kind, description and display properties.
inline Value make_value(std::string name, Kind kind, std::string description, std::string units = "", std::string format = "") {
  Value v;
  v.name = std::move(name);
  v.kind = kind;
  v.description = std::move(description);
  v.units = std::move(units);
  v.format = std::move(format);
  return v;
}

/// A block's acquisition time (ns since the epoch) as Tango stamps a value.
inline timeval time_of_ns(std::uint64_t realtime_ns) {
  timeval t{};
  t.tv_sec = static_cast<time_t>(realtime_ns / 1'000'000'000ULL);
  t.tv_usec = static_cast<suseconds_t>(realtime_ns % 1'000'000'000ULL / 1000ULL);
  return t;
}

struct ChannelStatusRow {
  std::string name;
  core::BlockCopier copier;
  std::size_t rate = 0, lost = 0, dropped = 0, lag = 0;  // values_ rows
  std::uint64_t losses_seen = ~0ULL;                     // lost + dropped at the last change
  std::int64_t losses_at_ns = 0;                         // when they last grew (monotonic)
  bool stalled = false;
};

struct PartRow {
  std::string name, state_key, restarts_key;
  std::size_t state = 0, restarts = 0;
};

struct KeyRow {
  const KeyAttr* opt = nullptr;
  core::ValueType type = core::ValueType::f64;
  std::size_t value = 0;
  core::KeyHandle handle;
  bool resolved = false;
  std::uint64_t epoch = ~0ULL;
};

struct WaveRow {
  const ChannelAttr* opt = nullptr;
  std::optional<core::BlockCopier> copier;
  std::uint32_t channel = 0;
  core::Dtype dtype = core::Dtype::f32;
  std::uint32_t elements = 0;
  std::optional<std::size_t> wave, min, max;  // values_ rows
  std::vector<std::byte> block;
  std::optional<controls::ChannelEnvelope> envelope;
  std::uint64_t head_seen = ~0ULL;
};

/// An array key read when it changes: resolved once, read again only when its epoch moved.
struct ArrayKey {
  std::string name;
  core::KeyHandle handle;
  bool resolved = false;
  std::uint64_t epoch = ~0ULL;
};

struct SpectrumRow {
  const SpectrumAttr* opt = nullptr;
  std::optional<core::BlockCopier> copier;  // a framed channel's; none for an array key
  ArrayKey key;                             // an array key's spectrum
  core::Dtype dtype = core::Dtype::f64;
  std::uint32_t elements = 0;               // a frame's, or the key's array's (changes with it)
  std::size_t frame = 0, axis = 0;          // values_ rows
  std::vector<std::byte> block;
  std::uint64_t head_seen = ~0ULL;
  double axis_start = 0, axis_step = 1;
  ArrayKey axis_key;                        // explicit axis values; no name: start + i * step
  std::uint32_t axis_len = 0;               // elements the axis was last made for
};

class Server {
 public:
  Server(const core::Arena& arena, const config::Pipeline& pipeline, const ServeOptions& options)
      : arena_(arena), pipeline_(pipeline), options_(options), kv_(arena), rc_(arena) {}
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  core::Result<void> build();                                       // server_build.cpp
  [[nodiscard]] const std::vector<Value>& values() const { return values_; }
  [[nodiscard]] const ServeOptions& options() const { return options_; }

  // The device's side (weir_device.cpp calls these, under the device's monitor).
  void attach(Tango::DeviceImpl* device) { device_ = device; }
  [[nodiscard]] bool attached() const { return device_ != nullptr; }
  void read(std::size_t i, Tango::Attribute& att);                  // server_events.cpp
  void write_key(std::size_t i, Tango::WAttribute& att);            // server_update.cpp
  Tango::DevLong64 start_run(const Tango::DevVarStringArray& args); // server_runs.cpp
  std::string stop_run(bool abort);                                 // server_runs.cpp

  void serve(double duration_s, const std::atomic<bool>& stop, const std::atomic<bool>& orb_done);  // tango_server.cpp
  [[nodiscard]] ServeReport report() const;                         // tango_server.cpp

 private:
  std::size_t add(Value v);                                         // server_build.cpp
  core::Result<void> add_status();
  core::Result<void> add_keys();
  core::Result<void> add_channels();
  core::Result<void> add_spectra();                                 // server_spectra.cpp
  void add_run_control();

  void cycle();                                                     // tango_server.cpp
  void update_status(std::int64_t now_mono);                        // server_update.cpp
  void update_keys();                                               // server_update.cpp
  void update_state(std::int64_t now_mono);                         // server_update.cpp
  void update_channels();                                           // server_waves.cpp
  void update_spectra();                                            // server_spectra.cpp
  void update_axis(SpectrumRow& s);                                 // server_spectra.cpp
  enum class KeyRead : std::uint8_t { unchanged, changed, missing };
  KeyRead read_array(ArrayKey& k, core::ValueInfo& info);           // server_spectra.cpp
  void update_runs(bool force);                                     // server_runs.cpp
  void message(const std::string& text);                            // server_runs.cpp

  // server_events.cpp: a value set and its events pushed when they are due.
  void set_f64(std::size_t i, double v, Tango::AttrQuality q);
  void set_i64(std::size_t i, Tango::DevLong64 v, Tango::AttrQuality q);
  void set_text(std::size_t i, std::string_view v, Tango::AttrQuality q);
  void set_quality(std::size_t i, Tango::AttrQuality q);
  void publish_wave(std::size_t i, const timeval& t);
  void publish(Value& v, bool changed);

  const core::Arena& arena_;
  const config::Pipeline& pipeline_;
  const ServeOptions& options_;
  core::KvStore kv_;
  core::RunControl rc_;
  Tango::DeviceImpl* device_ = nullptr;
  std::vector<Value> values_;
  std::vector<ChannelStatusRow> channels_;
  std::vector<int> status_of_channel_;
  std::vector<controls::ChannelTotals> totals_;  // channels_' rows, this cycle's
  std::vector<PartRow> parts_;
  std::vector<KeyRow> keys_;
  std::vector<WaveRow> waves_;
  std::vector<SpectrumRow> spectra_;
  std::vector<std::byte> value_buf_;
  std::optional<std::size_t> disk_free_;
  std::int64_t started_mono_ = 0;
  timeval now_{};                       // this cycle's time stamp

  // Run control.
  std::optional<std::size_t> run_state_, run_number_, run_title_, run_operator_, run_sample_, run_comment_, run_dir_,
      run_file_, run_message_, num_captured_;
  std::uint32_t run_changes_seen_ = 0;
  bool running_ = false;
  std::uint64_t captured_base_ = 0;
  Tango::DevState state_ = Tango::UNKNOWN;
  std::string status_text_;

  std::atomic<std::uint64_t> pushed_{0}, commands_{0}, refused_{0}, writes_{0};
  double elapsed_s_ = 0;
};

/// The device's monitor held for a scope: the one Tango holds while it calls a read, a write or a
/// command (serialisation by device, Tango's default), so the update thread's values and events never
/// meet a client's read half-way.
class DeviceLock {
 public:
  explicit DeviceLock(Tango::DeviceImpl* device) : m_(device->get_dev_monitor()) { m_.get_monitor(); }
  ~DeviceLock() { m_.rel_monitor(); }
  DeviceLock(const DeviceLock&) = delete;
  DeviceLock& operator=(const DeviceLock&) = delete;

 private:
  Tango::TangoMonitor& m_;
};

/// The server the class and device serve: set before Tango's server_init, which makes them.
Server*& current_server();
/// Without a database server: renames the heartbeat's event name as clients subscribe to it
/// (nodb_heartbeat.cpp says why). Call after Util::init, before server_init. True if it was renamed.
bool match_nodb_heartbeat();
/// The Tango class WeirDevice (weir_device.cpp), for DServer::class_factory.
Tango::DeviceClass* make_class();

}  // namespace weir::tango::detail
