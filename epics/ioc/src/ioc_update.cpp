// epics "serve", the update thread's reads of status and keys: the channels' rates, losses, drops and
// recorder lag from the consumer rows, the disk's free bytes, the parts' states and restarts, and the
// chosen keys staged in their input records or shown in their output records.
#include <sys/statvfs.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <span>
#include <string_view>

#include <aoRecord.h>
#include <dbAccess.h>
#include <dbCommon.h>
#include <dbLock.h>
#include <int64outRecord.h>

#include "ioc_server_impl.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/channel_activity.hpp"
#include "weir/tools/value_codec.hpp"

namespace weir::epics::detail {

void Server::update_status(std::int64_t now_rt, std::int64_t now_mono) {
  const epicsTimeStamp t = epics_time(now_rt);
  for (std::size_t i = 0; i < channels_.size(); ++i) totals_[i].head = channels_[i].copier.head();
  controls::sum_consumers(arena_, status_of_channel_, totals_);
  const double since_start_s = static_cast<double>(now_mono - started_mono_) / 1e9;
  for (std::size_t i = 0; i < channels_.size(); ++i) {
    ChannelStatusRow& c = channels_[i];
    const core::ChannelActivity a = core::channel_activity(c.copier, now_mono);
    // A writer with no new block for stall_s (or none at all by then) is a MAJOR alarm on the rate.
    const bool stalled = a.known ? a.age_s > options_.stall_s : since_start_s > options_.stall_s;
    const epicsEnum16 sevr = stalled ? MAJOR_ALARM : NO_ALARM;
    const epicsEnum16 stat = stalled ? STATE_ALARM : NO_ALARM;
    (void)stage_f64(*c.rate, a.known ? a.samples_per_s : 0.0, sevr, stat, t);
    (void)stage_i64(*c.lost, static_cast<std::int64_t>(totals_[i].lost), NO_ALARM, NO_ALARM, t);
    (void)stage_i64(*c.dropped, static_cast<std::int64_t>(c.copier.desc().dropped_at_source.load(std::memory_order_relaxed)),
                    NO_ALARM, NO_ALARM, t);  // relaxed: a counter to display
    (void)stage_i64(*c.lag, static_cast<std::int64_t>(totals_[i].lag), NO_ALARM, NO_ALARM, t);
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

namespace {

}  // namespace

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
        if (tools::value_as_f64(info.type, v, d)) (void)stage_f64(pv, d, NO_ALARM, NO_ALARM, t);
        else (void)stage_alarm(pv, INVALID_ALARM, READ_ALARM, t);  // the key now holds another kind of value
        break;
      }
      case RecKind::int64in: {
        std::int64_t i = 0;
        if (tools::value_as_i64(info.type, v, i)) (void)stage_i64(pv, i, NO_ALARM, NO_ALARM, t);
        else (void)stage_alarm(pv, INVALID_ALARM, READ_ALARM, t);
        break;
      }
      case RecKind::lsi: {
        std::array<char, 32> scratch{};
        std::string_view text;
        if (tools::value_as_text(info.type, v, info.length, scratch, text)) (void)stage_text(pv, text, NO_ALARM, NO_ALARM, t);
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

void Server::show_key_out(KeyRow& row, const core::ValueInfo& info) {
  Pv& pv = *row.pv;
  const std::byte* v = value_buf_.data();
  if (pv.kind == RecKind::lso) {
    std::array<char, 32> scratch{};
    std::string_view text;
    if (tools::value_as_text(info.type, v, info.length, scratch, text)) show_lso(pv, text);
    return;
  }
  dbScanLock(pv.rec);
  if (pv.rec->pact == 0) {
    bool differs = false;
    if (pv.kind == RecKind::ao) {
      auto* rec = reinterpret_cast<aoRecord*>(pv.rec);
      double d = 0;
      if (tools::value_as_f64(info.type, v, d) && (rec->udf != 0 || !same(rec->val, d))) {
        rec->val = d;
        differs = true;
      }
    } else if (pv.kind == RecKind::int64out) {
      auto* rec = reinterpret_cast<int64outRecord*>(pv.rec);
      std::int64_t i = 0;
      if (tools::value_as_i64(info.type, v, i) && (rec->udf != 0 || rec->val != i)) {
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

}  // namespace weir::epics::detail
