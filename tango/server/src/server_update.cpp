// tango "serve", the update thread's reads of status and keys: the channels' rates, losses, drops and
// recorder lag from the consumer rows, the disk's free bytes, the parts' states and restarts, the chosen
// keys, and the device's State and Status from them; a client's write of a writable key.
#include <sys/statvfs.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <span>
#include <string_view>

#include <fmt/format.h>

#include "server_impl.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/channel_activity.hpp"
#include "weir/tools/value_codec.hpp"

namespace weir::tango::detail {

void Server::update_status(std::int64_t now_mono) {
  for (std::size_t i = 0; i < channels_.size(); ++i) totals_[i].head = channels_[i].copier.head();
  controls::sum_consumers(arena_, status_of_channel_, totals_);
  const double since_start_s = static_cast<double>(now_mono - started_mono_) / 1e9;
  for (std::size_t i = 0; i < channels_.size(); ++i) {
    ChannelStatusRow& c = channels_[i];
    const std::uint64_t lost = totals_[i].lost;
    const core::ChannelActivity a = core::channel_activity(c.copier, now_mono);
    c.stalled = a.known ? a.age_s > options_.stall_s : since_start_s > options_.stall_s;
    // ALARM when stalled; INVALID until the channel's first block (and not stalled yet).
    set_f64(c.rate, a.known ? a.samples_per_s : 0.0,
            c.stalled ? Tango::ATTR_ALARM : a.known ? Tango::ATTR_VALID : Tango::ATTR_INVALID);
    const std::uint64_t dropped = c.copier.desc().dropped_at_source.load(std::memory_order_relaxed);  // relaxed: a counter
    set_i64(c.lost, static_cast<Tango::DevLong64>(lost), Tango::ATTR_VALID);
    set_i64(c.dropped, static_cast<Tango::DevLong64>(dropped), Tango::ATTR_VALID);
    set_i64(c.lag, static_cast<Tango::DevLong64>(totals_[i].lag), Tango::ATTR_VALID);
    if (c.losses_seen != ~0ULL && lost + dropped > c.losses_seen) c.losses_at_ns = now_mono;
    c.losses_seen = lost + dropped;
  }
  if (disk_free_) {
    struct statvfs fs{};
    if (statvfs(options_.record_dir.c_str(), &fs) == 0)
      set_f64(*disk_free_, static_cast<double>(fs.f_bavail) * static_cast<double>(fs.f_frsize), Tango::ATTR_VALID);
    else
      set_quality(*disk_free_, Tango::ATTR_INVALID);
  }
  for (PartRow& p : parts_) {
    core::ValueInfo info;
    if (kv_.get(p.state_key, value_buf_, info) == core::KvStatus::ok && info.type == core::ValueType::text) {
      const std::string_view state(reinterpret_cast<const char*>(value_buf_.data()), info.length);
      set_text(p.state, state, state == "running" ? Tango::ATTR_VALID : Tango::ATTR_WARNING);
    } else {
      set_quality(p.state, Tango::ATTR_INVALID);
    }
    std::uint64_t bits = 0;
    core::ValueType type{};
    if (kv_.get_scalar(p.restarts_key, bits, type) == core::KvStatus::ok)
      set_i64(p.restarts, static_cast<Tango::DevLong64>(bits), Tango::ATTR_VALID);
  }
}

void Server::update_keys() {
  for (KeyRow& row : keys_) {
    if (!row.resolved) {
      if (kv_.resolve(row.opt->key, row.handle, false) != core::KvStatus::ok) {
        set_quality(row.value, Tango::ATTR_INVALID);  // no such key (yet)
        continue;
      }
      row.resolved = true;
      row.epoch = ~0ULL;
    }
    core::ValueInfo info;
    const core::KvStatus s = kv_.get(row.handle, value_buf_, info);
    if (s == core::KvStatus::not_found || s == core::KvStatus::stale_handle) {
      row.resolved = false;
      set_quality(row.value, Tango::ATTR_INVALID);
      continue;
    }
    if (s != core::KvStatus::ok || info.epoch == row.epoch) continue;  // busy or torn: next cycle
    row.epoch = info.epoch;
    const std::byte* v = value_buf_.data();
    switch (values_[row.value].kind) {
      case Kind::f64: {
        double d = 0;
        if (tools::value_as_f64(info.type, v, d)) set_f64(row.value, d, Tango::ATTR_VALID);
        else set_quality(row.value, Tango::ATTR_INVALID);  // the key now holds another kind of value
        break;
      }
      case Kind::i64: {
        std::int64_t i = 0;
        if (tools::value_as_i64(info.type, v, i)) set_i64(row.value, i, Tango::ATTR_VALID);
        else set_quality(row.value, Tango::ATTR_INVALID);
        break;
      }
      case Kind::text: {
        std::array<char, 32> scratch{};
        std::string_view text;
        if (tools::value_as_text(info.type, v, info.length, scratch, text)) set_text(row.value, text, Tango::ATTR_VALID);
        else set_quality(row.value, Tango::ATTR_INVALID);
        break;
      }
      case Kind::spectrum: break;
    }
  }
}

// ON idle, RUNNING in a run, ALARM with a stalled writer or losses in the last stall_s, FAULT with a
// part the supervisor gave up on.
void Server::update_state(std::int64_t now_mono) {
  std::string why;
  Tango::DevState state = running_ ? Tango::RUNNING : Tango::ON;
  const auto window_ns = static_cast<std::int64_t>(options_.stall_s * 1e9);
  for (const ChannelStatusRow& c : channels_) {
    if (c.stalled) why += fmt::format("channel {}: no new block for {} s\n", c.name, options_.stall_s);
    if (c.losses_at_ns != 0 && now_mono - c.losses_at_ns < window_ns)
      why += fmt::format("channel {}: blocks lost or dropped in the last {} s\n", c.name, options_.stall_s);
  }
  if (!why.empty()) state = Tango::ALARM;
  for (const PartRow& p : parts_) {
    const Value& v = values_[p.state];
    if (v.quality != Tango::ATTR_INVALID && v.text == "given_up") {
      state = Tango::FAULT;
      why.insert(0, fmt::format("part {}: given up\n", p.name));
    }
  }
  if (!why.empty() && why.back() == '\n') why.pop_back();
  const std::string text = fmt::format("weir arena {}: {}{}{}", arena_.location().name,
                                       running_ ? "a run is running" : "idle", why.empty() ? "" : "\n", why);
  if (state != state_ || text != status_text_) {
    state_ = state;
    status_text_ = text;
    device_->set_state(state);
    device_->set_status(text);
    try {
      device_->push_change_event("State", &state_, now_, Tango::ATTR_VALID);
      pushed_.fetch_add(1, std::memory_order_relaxed);  // relaxed: a counter for the report
    } catch (const Tango::DevFailed&) {
    }
  }
}

void Server::write_key(std::size_t i, Tango::WAttribute& att) {
  const Value& v = values_[i];
  const KeyRow& row = keys_[static_cast<std::size_t>(v.key)];
  core::KvStatus s = core::KvStatus::type_mismatch;
  std::string asked;
  switch (v.kind) {
    case Kind::f64: {
      Tango::DevDouble x = 0;
      att.get_write_value(x);
      asked = fmt::format("{}", x);
      s = kv_.set_f64(row.opt->key, x);
      break;
    }
    case Kind::i64: {
      Tango::DevLong64 x = 0;
      att.get_write_value(x);
      asked = fmt::format("{}", x);
      if (row.type == core::ValueType::u64) s = x < 0 ? core::KvStatus::type_mismatch : kv_.set_u64(row.opt->key, static_cast<std::uint64_t>(x));
      else s = kv_.set_i64(row.opt->key, x);
      break;
    }
    case Kind::text: {
      Tango::DevString x = nullptr;
      att.get_write_value(x);
      asked = x != nullptr ? x : "";
      s = kv_.set_text(row.opt->key, asked);
      break;
    }
    case Kind::spectrum: break;
  }
  if (s == core::KvStatus::ok) {
    writes_.fetch_add(1, std::memory_order_relaxed);  // relaxed: a counter for the report
    return;
  }
  refused_.fetch_add(1, std::memory_order_relaxed);
  Tango::Except::throw_exception(kWriteRefused,
                                 fmt::format("writing {} = {} to key '{}' was refused: {}", v.name, asked, row.opt->key,
                                             core::kv_status_name(s)),
                                 "weir::tango::Server::write_key");
}

}  // namespace weir::tango::detail
