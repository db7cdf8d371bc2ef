// /metrics: Prometheus text exposition 0.0.4, built per scrape from what the arena holds. No second
// set of counters: channel descriptors, consumer rows and the header are read as `weir ls` and
// `weir run`'s summary read them.
#include "weir/serve/metrics.hpp"

#include <sys/statvfs.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <map>
#include <span>
#include <tuple>

#include <fmt/format.h>

#include "clock_metrics.hpp"
#include "epics_metrics.hpp"
#include "handoff_metrics.hpp"
#include "retention_metrics.hpp"
#include "kafka_metrics.hpp"
#include "metric_family.hpp"
#include "process_metrics.hpp"
#include "weir/core/block_copier.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/channel_activity.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/run_control.hpp"
#include "weir/runctl/doors.hpp"

namespace weir::serve {

namespace {

std::string channel_labels(const core::ChannelInfo& c) { return fmt::format("channel=\"{}\"", escape_label(c.name)); }

// A consumer is named by what it is, never by its pid, so a restarted part continues its series.
// Rows sharing a name on a channel (a dead row not yet reclaimed beside its restarted part, or two
// readers started alike) keep the plain name for the first live one; the others add "#ROW".
std::vector<std::string> consumer_names(const core::ChannelInfo& c) {
  std::map<std::string, std::size_t> plain;  // name -> the row index that keeps it
  for (std::size_t i = 0; i < c.consumers.size(); ++i) {
    const auto [it, first] = plain.emplace(c.consumers[i].name, i);
    if (!first && c.consumers[i].alive && !c.consumers[it->second].alive) it->second = i;
  }
  std::vector<std::string> names;
  names.reserve(c.consumers.size());
  for (std::size_t i = 0; i < c.consumers.size(); ++i) {
    const core::ConsumerInfo& k = c.consumers[i];
    names.push_back(plain[k.name] == i ? k.name : fmt::format("{}#{}", k.name, k.row));
  }
  return names;
}

std::string consumer_labels(const core::ChannelInfo& c, const core::ConsumerInfo& k, const std::string& name) {
  return fmt::format("channel=\"{}\",consumer=\"{}\",policy=\"{}\",kind=\"{}\"", escape_label(c.name),
                     escape_label(name), core::policy_name(k.policy), escape_label(k.kind));
}

// Where the arena lives, absolute: /dev/shm/weir.NAME, the mapped file's path, or memfd:NAME.
std::string arena_path(const core::Arena& arena) {
  const core::Location& where = arena.location();
  if (where.backing == core::Backing::memfd || where.path.empty()) return "memfd:" + where.name;
  std::error_code ec;
  const std::filesystem::path abs = std::filesystem::absolute(where.path, ec);
  return ec ? where.path : abs.lexically_normal().string();
}

std::uint64_t footprint(const core::ChannelInfo& c) {
  core::ChannelSpec spec;
  spec.dtype = c.dtype;
  spec.samples_per_block = c.samples_per_block;
  spec.ring_blocks = c.ring_blocks;
  spec.frame = c.frame;
  return core::channel_footprint(spec);
}

}  // namespace

std::string escape_label(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (const char ch : value) {
    if (ch == '\\') out += "\\\\";
    else if (ch == '"') out += "\\\"";
    else if (ch == '\n') out += "\\n";
    else out += ch;
  }
  return out;
}

std::string prometheus_text(const core::Arena& arena, const std::vector<std::string>& disk_paths,
                            const ServerCounters* server) {
  const std::vector<core::ChannelInfo> channels = core::list_channels(arena);
  std::string out;
  out.reserve(4096 + channels.size() * 2048);

  const auto per_channel = [&](std::string_view name, std::string_view type, std::string_view help, auto&& value) {
    Family f(out, name, type, help);
    for (const auto& c : channels) f.sample(channel_labels(c), value(c));
  };
  per_channel("weir_channel_blocks_written_total", "counter", "Blocks published by the channel's writer.",
              [](const core::ChannelInfo& c) { return c.blocks_written; });
  per_channel("weir_channel_samples_written_total", "counter", "Samples published by the channel's writer.",
              [](const core::ChannelInfo& c) { return c.samples_written; });
  per_channel("weir_channel_written_bytes_total", "counter", "Sample bytes published by the channel's writer.",
              [](const core::ChannelInfo& c) { return c.samples_written * core::dtype_bytes(c.dtype); });
  per_channel("weir_channel_dropped_blocks_total", "counter",
              "Blocks dropped at the source (a full lossless consumer past the writer's timeout).",
              [](const core::ChannelInfo& c) { return c.dropped_at_source; });
  per_channel("weir_channel_writer_waits_total", "counter", "Times the writer waited for a full lossless consumer.",
              [](const core::ChannelInfo& c) { return c.writer_waits; });
  per_channel("weir_channel_sample_rate_hertz", "gauge", "The channel's nominal sample rate, in hertz.",
              [](const core::ChannelInfo& c) { return c.rate_hz; });
  per_channel("weir_channel_writer_up", "gauge", "1 while the channel's writer process is alive.",
              [](const core::ChannelInfo& c) { return std::uint64_t{c.writer_alive ? 1U : 0U}; });
  per_channel("weir_channel_ring_bytes", "gauge", "Bytes of the arena's channel pool the channel takes.",
              [](const core::ChannelInfo& c) { return footprint(c); });
  per_channel("weir_channel_ring_blocks", "gauge",
              "Block slots in the channel's ring: a consumer lagging this many blocks behind is lapped.",
              [](const core::ChannelInfo& c) { return std::uint64_t{c.ring_blocks}; });
  {
    // True rates from the channel's own block timestamps (one look, no second scrape needed); a
    // channel with no block yet has no samples in these families.
    std::vector<std::pair<const core::ChannelInfo*, core::ChannelActivity>> active;
    for (const auto& c : channels)
      if (auto copier = core::BlockCopier::open(arena, c.index))
        if (const core::ChannelActivity a = core::channel_activity(*copier); a.known) active.emplace_back(&c, a);
    const auto per_active = [&](std::string_view name, std::string_view help, auto&& value) {
      Family f(out, name, "gauge", help);
      for (const auto& [c, a] : active) f.sample(channel_labels(*c), value(a));
    };
    per_active("weir_channel_blocks_per_second", "Blocks the writer publishes per second, from the blocks' own "
               "timestamps over the recent ones; decays while the writer stalls.",
               [](const core::ChannelActivity& a) { return a.blocks_per_s; });
    per_active("weir_channel_samples_per_second", "Samples the writer publishes per second (as blocks_per_second).",
               [](const core::ChannelActivity& a) { return a.samples_per_s; });
    per_active("weir_channel_newest_block_age_seconds", "Seconds since the newest block was stamped (monotonic clock).",
               [](const core::ChannelActivity& a) { return a.age_s; });
  }

  std::vector<std::vector<std::string>> consumer_name;  // per channel, per consumer row
  consumer_name.reserve(channels.size());
  for (const auto& c : channels) consumer_name.push_back(consumer_names(c));
  const auto per_consumer = [&](std::string_view name, std::string_view type, std::string_view help, auto&& value) {
    Family f(out, name, type, help);
    for (std::size_t i = 0; i < channels.size(); ++i)
      for (std::size_t j = 0; j < channels[i].consumers.size(); ++j)
        f.sample(consumer_labels(channels[i], channels[i].consumers[j], consumer_name[i][j]), value(channels[i].consumers[j]));
  };
  per_consumer("weir_consumer_blocks_read_total", "counter", "Blocks the consumer has read.",
               [](const core::ConsumerInfo& k) { return k.blocks_read; });
  per_consumer("weir_consumer_samples_read_total", "counter", "Samples the consumer has read.",
               [](const core::ConsumerInfo& k) { return k.samples_read; });
  per_consumer("weir_consumer_blocks_lost_total", "counter", "Blocks the writer overwrote before the consumer read them.",
               [](const core::ConsumerInfo& k) { return k.blocks_lost; });
  per_consumer("weir_consumer_lag_blocks", "gauge", "Blocks published but not yet read by the consumer.",
               [](const core::ConsumerInfo& k) { return k.lag; });
  per_consumer("weir_consumer_up", "gauge", "1 while the consumer's process is alive.",
               [](const core::ConsumerInfo& k) { return std::uint64_t{k.alive ? 1U : 0U}; });
  per_consumer("weir_consumer_errors_total", "counter", "Blocks whose processing failed (shards, recorders).",
               [](const core::ConsumerInfo& k) { return k.errors; });
  per_consumer("weir_consumer_blocks_out_total", "counter", "Output blocks or records the consuming part published.",
               [](const core::ConsumerInfo& k) { return k.blocks_out; });
  per_consumer("weir_consumer_blocks_skipped_total", "counter", "Input blocks the consuming part chose not to process.",
               [](const core::ConsumerInfo& k) { return k.blocks_skipped; });
  per_consumer("weir_consumer_written_bytes_total", "counter", "Bytes the consuming part wrote (recorders: to disk).",
               [](const core::ConsumerInfo& k) { return k.bytes_out; });

  {
    // The shard host keeps only a recent p50 and p99 per consumer row (no bucket counts and no sum),
    // so these are two gauges of recent quantiles, not a summary (whose quantile label promises a
    // _sum); the blocks processed are a counter beside them. Parts that keep no timing (recorders
    // today) report no quantiles.
    std::string p99, processed;
    Family p50_f(out, "weir_stage_duration_p50_seconds", "gauge",
                 "Processing time per block of a shard or recorder: the recent median the part keeps itself.");
    Family p99_f(p99, "weir_stage_duration_p99_seconds", "gauge",
                 "Processing time per block of a shard or recorder: the recent 99th percentile the part keeps itself.");
    Family count(processed, "weir_stage_blocks_processed_total", "counter",
                 "Blocks a shard or recorder processed (read and not skipped).");
    for (std::size_t i = 0; i < channels.size(); ++i)
      for (std::size_t j = 0; j < channels[i].consumers.size(); ++j) {
        const core::ConsumerInfo& k = channels[i].consumers[j];
        if (k.kind.empty()) continue;
        const std::string labels = fmt::format("stage=\"{}\",channel=\"{}\",consumer=\"{}\"", escape_label(k.kind),
                                               escape_label(channels[i].name), escape_label(consumer_name[i][j]));
        if (k.proc_p50_ns != 0 || k.proc_p99_ns != 0) {
          p50_f.sample(labels, static_cast<double>(k.proc_p50_ns) / 1e9);
          p99_f.sample(labels, static_cast<double>(k.proc_p99_ns) / 1e9);
        }
        count.sample(labels, k.blocks_read >= k.blocks_skipped ? k.blocks_read - k.blocks_skipped : 0);
      }
    out += p99;
    out += processed;
  }

  const core::Geometry& g = arena.geometry();
  std::uint64_t pool_used = 0;
  for (const auto& c : channels) pool_used += footprint(c);
  const core::KvStore kv(arena);
  Family(out, "weir_arena_info", "gauge", "The arena served: its name and where it lives (absolute), always 1.")
      .sample(fmt::format("arena=\"{}\",path=\"{}\"", escape_label(arena.location().name), escape_label(arena_path(arena))),
              std::uint64_t{1});
  Family(out, "weir_arena_bytes", "gauge", "Bytes of the arena's mapping.").sample("", arena.bytes());
  Family(out, "weir_arena_key_slots", "gauge", "Key slots in the arena.").sample("", std::uint64_t{g.slot_count});
  Family(out, "weir_arena_key_slots_used", "gauge", "Key slots holding a live key.").sample("", kv.count());
  Family(out, "weir_arena_channels", "gauge", "Ready channels.").sample("", std::uint64_t{channels.size()});
  Family(out, "weir_arena_channel_capacity", "gauge", "Channel descriptors in the arena.")
      .sample("", std::uint64_t{g.channel_capacity});
  Family(out, "weir_arena_channel_pool_bytes", "gauge", "Bytes of the arena's channel pool.")
      .sample("", g.channel_data_bytes);
  Family(out, "weir_arena_channel_pool_used_bytes", "gauge", "Bytes of the channel pool taken by channels.")
      .sample("", pool_used);
  std::uint64_t consumers = 0;
  for (const auto& c : channels) consumers += c.consumers.size();
  Family(out, "weir_arena_consumers", "gauge", "Registered consumer rows.").sample("", consumers);
  Family(out, "weir_arena_consumer_capacity", "gauge", "Consumer rows in the arena.")
      .sample("", std::uint64_t{g.consumer_capacity});
  Family(out, "weir_arena_attached_processes", "gauge", "Live processes in the arena's attach table.")
      .sample("", std::uint64_t{core::attached_pids(arena).size()});
  {
    // The arena's runs (core::RunControl): the running run, or the last one once idle.
    const core::RunStatus run = core::RunControl(arena).status();
    Family(out, "weir_run_number", "gauge", "The running run's number, or the last run's (0: no run yet).")
        .sample("", run.number);
    Family(out, "weir_run_state", "gauge", "1 while a run is running, 0 when idle.")
        .sample("", std::uint64_t{run.state == core::RunState::running ? 1U : 0U});
    Family(out, "weir_run_started_timestamp_seconds", "gauge",
           "When the running (or last) run started, in seconds since the epoch (0: no run yet).")
        .sample("", static_cast<double>(run.start_ns) / 1e9);
    // The last run audited as it closed (a controlled run's stop, or weir run's own at its end).
    std::uint64_t closed = 0, exact = 0;
    core::ValueType type = core::ValueType::none;
    if (kv.get_scalar(runctl::kClosedRunKey, closed, type) == core::KvStatus::ok && type == core::ValueType::u64 &&
        kv.get_scalar(runctl::kClosedExactKey, exact, type) == core::KvStatus::ok && type == core::ValueType::u64) {
      Family(out, "weir_run_last_closed_number", "gauge", "The last run whose files were audited as it closed.")
          .sample("", closed);
      Family(out, "weir_run_last_closed_exact", "gauge",
             "1 when that run's audit balanced (nothing unaccounted or duplicated), 0 when it did not.")
          .sample("", exact);
    }
  }

  {
    // The parts of a `weir run` on this arena, from the keys it keeps (weir.part.<NAME>.state,
    // .restarts, .last_exit): a gauge per part and state (1 for the state it is in), and its restarts.
    constexpr std::string_view kPrefix = "weir.part.", kState = ".state";
    constexpr std::array<std::string_view, 6> kStates{"running", "restarting", "finished", "given up", "stopped",
                                                      "configuration error"};
    std::vector<std::string> parts;
    kv.for_each_key([&](std::string_view key, const core::ValueInfo&) {
      if (key.size() > kPrefix.size() + kState.size() && key.starts_with(kPrefix) && key.ends_with(kState))
        parts.emplace_back(key.substr(kPrefix.size(), key.size() - kPrefix.size() - kState.size()));
    });
    std::sort(parts.begin(), parts.end());
    const auto text = [&](const std::string& key) {
      std::array<char, 256> buf{};
      core::ValueInfo info;
      if (kv.get(key, std::as_writable_bytes(std::span{buf}), info) != core::KvStatus::ok) return std::string{};
      return std::string(buf.data(), std::min<std::size_t>(info.length, buf.size()));
    };
    if (!parts.empty()) {
      Family state_f(out, "weir_part_state", "gauge",
                     "1 for the state a part of `weir run` is in (running, restarting, given up, ...), 0 for the others.");
      for (const auto& part : parts) {
        const std::string state = text(std::string(kPrefix) + part + std::string(kState));
        for (const auto st : kStates)
          state_f.sample(fmt::format("part=\"{}\",state=\"{}\"", escape_label(part), st), std::uint64_t{state == st ? 1U : 0U});
      }
      Family restarts_f(out, "weir_part_restarts_total", "counter", "Times `weir run` restarted the part.");
      for (const auto& part : parts) {
        std::uint64_t restarts = 0;
        core::ValueInfo info;
        (void)kv.get(std::string(kPrefix) + part + ".restarts", std::as_writable_bytes(std::span{&restarts, 1}), info);
        restarts_f.sample(fmt::format("part=\"{}\"", escape_label(part)), restarts);
      }
      Family exit_f(out, "weir_part_last_exit_info", "gauge", "The part's last exit, as a label (1 while it has one).");
      for (const auto& part : parts)
        if (const std::string last = text(std::string(kPrefix) + part + ".last_exit"); !last.empty())
          exit_f.sample(fmt::format("part=\"{}\",last_exit=\"{}\"", escape_label(part), escape_label(last)), std::uint64_t{1});
    }
  }

  {
    // Every driver's accounting of its units (packets, queries, calls): the u64 keys
    // <part>.accounting.<term>, term "recorded" or the loss it names (a gap reason, "duplicate").
    constexpr std::string_view kInfix = ".accounting.";
    std::vector<std::pair<std::string, std::string>> names;  // (part, term)
    kv.for_each_key([&](std::string_view key, const core::ValueInfo& info) {
      const std::size_t at = key.rfind(kInfix);
      if (at == std::string_view::npos || at == 0 || at + kInfix.size() == key.size()) return;
      const std::string_view term = key.substr(at + kInfix.size());
      if (info.type != core::ValueType::u64 || term.find('.') != std::string_view::npos) return;
      names.emplace_back(key.substr(0, at), term);
    });
    std::sort(names.begin(), names.end());
    std::vector<std::tuple<std::string, std::string, std::uint64_t>> terms;
    for (auto& [part, term] : names) {  // a key gone or retyped meanwhile is left out
      std::uint64_t bits = 0;
      core::ValueType type = core::ValueType::none;
      if (kv.get_scalar(part + std::string(kInfix) + term, bits, type) == core::KvStatus::ok && type == core::ValueType::u64)
        terms.emplace_back(std::move(part), std::move(term), bits);
    }
    if (!terms.empty()) {
      Family f(out, "weir_driver_accounting_total", "counter",
               "A driver's units (packets, queries, calls) by what became of them: recorded, or the loss term.");
      for (const auto& [part, term, value] : terms)
        f.sample(fmt::format("part=\"{}\",term=\"{}\"", escape_label(part), escape_label(term)), value);
    }
  }

  if (!disk_paths.empty()) {
    // Labelled by absolute path: a relative one would depend on where serve was started.
    const auto absolute = [](const std::string& path) {
      std::error_code ec;
      const std::filesystem::path abs = std::filesystem::absolute(path, ec);
      std::string text = ec ? path : abs.lexically_normal().string();
      while (text.size() > 1 && text.back() == '/') text.pop_back();
      return text;
    };
    Family free_f(out, "weir_disk_free_bytes", "gauge", "Bytes available to unprivileged writers under a recorder's output directory.");
    std::vector<std::pair<std::string, std::uint64_t>> sizes;
    for (const auto& path : disk_paths) {
      struct statvfs s {};
      if (statvfs(path.c_str(), &s) != 0) continue;
      free_f.sample(fmt::format("path=\"{}\"", escape_label(absolute(path))), std::uint64_t{s.f_bavail} * s.f_frsize);
      sizes.emplace_back(absolute(path), std::uint64_t{s.f_blocks} * s.f_frsize);
    }
    Family size_f(out, "weir_disk_size_bytes", "gauge", "Size of the filesystem under a recorder's output directory.");
    for (const auto& [path, bytes] : sizes) size_f.sample(fmt::format("path=\"{}\"", escape_label(path)), bytes);
  }

  if (server != nullptr) {
    Family(out, "weir_serve_http_requests_total", "counter", "HTTP requests served.").sample("", server->http_requests);
    Family(out, "weir_serve_websocket_clients", "gauge", "WebSocket sessions connected.").sample("", server->ws_clients);
    Family(out, "weir_serve_frames_encoded_total", "counter", "Frames encoded (once per view per tick).")
        .sample("", server->frames_encoded);
    Family(out, "weir_serve_frames_sent_total", "counter", "Frames written to WebSocket sessions.")
        .sample("", server->frames_sent);
    Family(out, "weir_serve_frames_replaced_total", "counter",
           "Frames a slow session never got: replaced by a newer one while it was still writing.")
        .sample("", server->frames_replaced);
  }
  append_kafka_metrics(out, kv);
  append_epics_metrics(out, kv);
  append_clock_metrics(out);
  append_handoff_metrics(out, kv);
  append_retention_metrics(out, kv);
  append_process_metrics(out);
  return out;
}

}  // namespace weir::serve
