#pragma once
// epics "serve" inside: the Server (the PVs made from the pipeline, the update thread, the puts and the
// run-control thread), the rows that tie its PVs to the arena, and the helpers its files share. The
// server's work is split by job: ioc_build.cpp makes the PVs, ioc_stage.cpp hands values to the
// records, ioc_update.cpp (status, keys) and ioc_waves.cpp (channels) are the update thread's reads,
// ioc_puts.cpp the puts of writable keys and run metadata, ioc_runs.cpp run control, and
// ioc_server.cpp the serve loop, the report and run_server(). Private to epics/ioc.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <alarm.h>
#include <epicsTime.h>

#include "ioc_pv.hpp"
#include "weir/config/pipeline.hpp"
#include "weir/controls/channel_envelope.hpp"
#include "weir/controls/consumer_totals.hpp"
#include "weir/controls/served_channel.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/block_copier.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/error.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/run_control.hpp"
#include "weir/epics/epics_config.hpp"
#include "weir/epics/ioc_server.hpp"

namespace weir::epics::detail {

inline constexpr std::int64_t kMaxWaitNs = 100'000'000;            // every wait looks at the stop flag this often
inline constexpr std::uint64_t kEpicsEpochOffsetS = 631'152'000;   // POSIX_TIME_AT_EPICS_EPOCH

inline epicsTimeStamp epics_time(std::int64_t realtime_ns) noexcept {
  epicsTimeStamp t{};
  const auto s = static_cast<std::uint64_t>(std::max<std::int64_t>(realtime_ns, 0)) / 1'000'000'000ULL;
  t.secPastEpoch = static_cast<epicsUInt32>(s > kEpicsEpochOffsetS ? s - kEpicsEpochOffsetS : 0);
  t.nsec = static_cast<epicsUInt32>(static_cast<std::uint64_t>(std::max<std::int64_t>(realtime_ns, 0)) % 1'000'000'000ULL);
  return t;
}

inline bool same(double a, double b) noexcept { return a == b || (std::isnan(a) && std::isnan(b)); }

template <class T>
T load_as(const std::byte* p) noexcept {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

/// Shows `text` in an lso record (weir's value, not a put): processed with `syncing` set. ioc_stage.cpp.
void show_lso(Pv& pv, std::string_view text);

struct ChannelStatusRow {
  std::string name;
  core::BlockCopier copier;
  Pv* rate = nullptr;
  Pv* lost = nullptr;
  Pv* dropped = nullptr;
  Pv* lag = nullptr;
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
  std::optional<controls::ChannelEnvelope> envelope;  // an envelope's pyramid entries, folded into its buckets
  std::uint64_t head_seen = ~0ULL;
};

struct ControlAsk {
  Pv* pv = nullptr;
  std::int64_t value = 0;
};

class Server final : public PutHandler {
 public:
  Server(const core::Arena& arena, const config::Pipeline& pipeline, const ServeOptions& options)
      : arena_(arena), pipeline_(pipeline), options_(options), kv_(arena), rc_(arena) {}
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  ~Server() override { stop_control(); }

  core::Result<void> build();                                      // ioc_build.cpp
  core::Result<void> start();                                      // ioc_build.cpp
  void serve(double duration_s, const std::atomic<bool>& stop);    // ioc_server.cpp
  [[nodiscard]] ServeReport report() const;                        // ioc_server.cpp

  bool put_f64(Pv& pv, double v) noexcept override;                // ioc_puts.cpp
  bool put_i64(Pv& pv, std::int64_t v) noexcept override;          // ioc_puts.cpp
  bool put_text(Pv& pv, std::string_view v) noexcept override;     // ioc_puts.cpp
  bool queue(Pv& pv, std::int64_t v) noexcept override;            // ioc_runs.cpp

 private:
  // ioc_build.cpp
  core::Result<Pv*> add(std::string_view suffix, RecKind kind, Role role, std::uint32_t index, PvFields fields);
  core::Result<void> add_status();
  core::Result<void> add_keys();
  core::Result<void> add_channels();
  core::Result<void> add_run_control();
  [[nodiscard]] Pv* find(std::string_view suffix) const;

  void cycle();                                                    // ioc_server.cpp
  void update_status(std::int64_t now_rt, std::int64_t now_mono);  // ioc_update.cpp
  void update_keys(std::int64_t now_rt);                           // ioc_update.cpp
  void show_key_out(KeyRow& row, const core::ValueInfo& info);     // ioc_update.cpp
  void update_channels();                                          // ioc_waves.cpp
  void update_runs(std::int64_t now_rt, bool force);               // ioc_runs.cpp
  void show_capture(bool running);                                 // ioc_runs.cpp
  bool counted(bool ok) noexcept;                                  // ioc_puts.cpp

  // ioc_stage.cpp
  bool stage_f64(Pv& pv, double v, epicsEnum16 sevr, epicsEnum16 stat, const epicsTimeStamp& t) noexcept;
  bool stage_i64(Pv& pv, std::int64_t v, epicsEnum16 sevr, epicsEnum16 stat, const epicsTimeStamp& t) noexcept;
  bool stage_text(Pv& pv, std::string_view v, epicsEnum16 sevr, epicsEnum16 stat, const epicsTimeStamp& t) noexcept;
  bool stage_alarm(Pv& pv, epicsEnum16 sevr, epicsEnum16 stat, const epicsTimeStamp& t) noexcept;
  void post(Pv& pv) noexcept;

  // ioc_runs.cpp
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
  std::vector<controls::ChannelTotals> totals_;  // channels_' rows, this cycle's
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

}  // namespace weir::epics::detail
