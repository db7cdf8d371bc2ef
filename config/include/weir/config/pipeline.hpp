#pragma once
// A pipeline: what one Lua file declares (an arena, channels, drivers, shards, recorders), loaded
// in a restricted Lua state and checked before anything starts. Vocabulary: docs/design/pipelines.md.
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "weir/core/arena.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/error.hpp"

namespace weir::config {

/// Where a declaration is in its file, for `file:line: what is wrong`.
struct Origin {
  std::string file;
  int line = 0;
  [[nodiscard]] std::string where() const { return file + ":" + std::to_string(line); }
};

/// `schedule = { start = true, stop_after_s = 60, stop_after_blocks = 1000, channel = "adc0", restart = true,
/// runs = 10 }` in the arena of a pipeline with controlled runs: `weir run` starts and stops runs itself
/// (the door "schedule"), as MIDAS's auto-restart and areaDetector's NumCapture do. A run ends at the first
/// of its limits; stop_after_blocks ends it exactly after that many blocks of `channel`.
struct RunScheduleDecl {
  Origin origin;
  bool start = false;                   // start a run as soon as the pipeline runs
  double stop_after_s = 0;              // stop each run after this long (0: no time limit)
  std::uint64_t stop_after_blocks = 0;  // ... or once `channel` holds this many blocks of the run (0: no limit)
  std::string channel;                  // the channel counted; default: the first declared channel
  bool restart = false;                 // start the next run as soon as a scheduled stop has closed one
  std::uint64_t runs = 0;               // start no more than this many runs (0: no limit)
};

struct ArenaDecl {
  Origin origin;
  std::string name;                 // shm name, file path containing '/', or memfd:NAME
  core::ArenaOptions options;       // slots, channels, pool_mib, consumers, numa_node, ...
  bool pool_given = false;          // `pool_mib` (or `channel_mb`) was written; else resolve() sizes the pool
  bool attach = false;              // attach to an existing arena instead of creating one
  /// `runs = "controlled"`: the recorders record only inside the arena's runs (docs/design/runs.md), which
  /// doors start and stop (weir runctl, weir serve, the schedule) while everything else keeps running.
  /// "free" (the default): one run per `weir run` start.
  bool controlled_runs = false;
  std::optional<RunScheduleDecl> schedule;
};

/// A channel's calibration, `calibration = { scale = S, offset = O, units = "U" }` in its declaration:
/// a raw sample r (as recorded, in the channel's units) is the value O + S * r in units U. Recorders
/// store it beside the raw data (docs/design/recording.md, "Calibration"); nothing converts samples.
struct Calibration {
  double scale = 1;
  double offset = 0;
  std::string units;  // the calibrated values' units; the channel's units when the file names none
};

struct ChannelDecl {
  Origin origin;
  core::ChannelSpec spec;
  std::optional<Calibration> calibration;
};

/// `entry { title = "...", definition = "NXmonopd", default = "det0" }`, at most once: the NeXus entry
/// fields recorders write (docs/design/recording.md). Empty: the recorder's own (title "<arena> run
/// <run>", definition "NXentry", the default plot its first sample channel).
struct EntryDecl {
  Origin origin;
  std::string title;
  std::string definition;    // an NXDL name: "NX" then letters, digits or '_'
  std::string default_plot;  // a recorded channel whose NXdata is the entry's default plot
};

/// `source "ESS" { type = "Spallation Neutron Source", probe = "neutron" }`, at most once: the
/// facility's source, recorded as /entry/instrument/source (NXsource). type and probe, when given,
/// are values NeXus's NXsource enumerates.
struct SourceDecl {
  Origin origin;
  std::string name;
  std::string type;
  std::string probe;
};

/// A setting as the file wrote it: a scalar, or a table with list items (`{ "a", "b" }`) and named
/// entries (`{ send = "VOLT?", every = 0.5 }`), nested as deep as the file nests them.
struct Setting {
  enum class Type : std::uint8_t { number, integer, text, boolean, table } type = Type::text;
  double number = 0;
  long long integer = 0;
  std::string text;
  bool boolean = false;
  std::vector<Setting> items;              // table: t[1] .. t[n]
  std::map<std::string, Setting> fields;   // table: named entries
  [[nodiscard]] std::string as_text() const;  // a scalar as text (numbers with %.17g); a list of names joined by ','
  [[nodiscard]] const char* type_name() const noexcept;
  [[nodiscard]] bool is_name_list() const noexcept;  // a table of strings and numbers only, no named entries
};

inline constexpr int kMaxCpu = 1023;  // the highest CPU number `cpu = N` accepts (CPU_SETSIZE - 1)

/// Shard kinds that run as threads of `weir run` unless the file says `thread = false`: the built-in
/// kinds, whose code is the project's own (measured: `weir bench pipeline --threads` against
/// `--processes`). A .so or a Lua function gets a process of its own unless the file says
/// `thread = true`: a crash or a hang there would take the supervisor with it.
inline constexpr std::array<std::string_view, 7> kThreadShardKinds{"fft", "filter", "stats", "trigger", "mca", "null", "copy"};

/// A part that runs as its own process (or a thread of `weir run`, when `thread = true`).
struct PartDecl {
  Origin origin;
  std::string kind;      // driver: "sim" | "replay" | "udp" | "scpi" | "serial" | "lua" | "bridge" | "kafka" | "epics" | "tango"; shard: "fft" | ... | a .so path; record: "hdf5"; bridge, kafka: "send"; epics, tango: "serve"
  std::string name;      // unique among the parts; defaults to "<kind>" or "<kind>:<input>"
  bool thread = false;   // shards of the kinds in kThreadShardKinds default to true
  int cpu = -1;          // `cpu = N`: pinned to CPU N (sched_setaffinity); -1: wherever the kernel puts it
  int max_restarts = 5;  // restarts in a row before the supervisor gives up on it (not an essential part)
  /// `essential = true`: restarted with capped back-off for as long as the run goes on, never given up;
  /// a configuration error in it stops the run. Recorders default to true, other parts to false.
  bool essential = false;
  std::map<std::string, std::string> params;  // every other key, as text (numbers with %.17g)
};

struct DriverDecl : PartDecl {
  std::vector<std::string> channels;  // the channels it writes
  // udp, scpi, serial, lua and bridge drivers read their own (possibly nested) settings: every key but name,
  // thread, restarts and channels, as written; see driver_fields() in weir/config/fields.hpp.
  // sim and replay keep theirs in `params`.
  std::map<std::string, Setting> settings;
};

struct ShardDecl : PartDecl {
  std::string input;     // a channel (declared or another shard's output) or a label
  std::string output;    // output base; "" = the input's name
  std::string policy = "lossy";
  double batch_ms = -1;  // `batch_ms`: the host gathers streaming blocks this long per wake-up; -1: its default
};

/// `keep = { free_gib = 50, max_gib = 2000, max_age_days = 30, after = "handed_over" }` of a record
/// declaration: retention (weir record --keep-*; recorders/stream/README.md, "Retention"). 0: no limit.
struct KeepDecl {
  double free_gib = 0, max_gib = 0, max_age_days = 0;
  std::string after;  // "closed", "handed_over" or "" (handed_over with an on_close, else closed)
  [[nodiscard]] bool enabled() const noexcept { return free_gib > 0 || max_gib > 0 || max_age_days > 0; }
};

struct RecordDecl : PartDecl {
  std::vector<std::string> channels;  // glob patterns
  std::vector<std::string> keys;      // glob patterns
  std::string out;
  std::string policy = "lossless";
  // `on_close = {"cmd", "{path}", ...}`: the hand-off command run for each closed file (weir record
  // --on-close; recorders/stream/README.md, "Hand-off"); empty: none.
  std::vector<std::string> on_close;
  KeepDecl keep;  // retention; none enabled: nothing deleted
};

/// `bridge "send" { channels = { "adc*" }, to = "tcp://HOST:PORT", ... }`: follows channels and
/// sends their blocks to a `driver "bridge"` (or `weir bridge recv`) on another host. It reads its
/// own settings (bridge/README.md); every key but name, thread, cpu, restarts and channels is kept
/// as written in `settings`.
struct BridgeDecl : PartDecl {
  std::vector<std::string> channels;  // glob patterns, as a recorder's
  std::map<std::string, Setting> settings;
};

/// `kafka "send" { brokers = "HOST:PORT,...", topic = "...", channels = { "adc*" }, keys = { "psu.*" } }`:
/// follows channels and keys and produces them to a Kafka topic (`weir kafka send`). Its settings
/// are read by kafka_config (kafka/config); every key but name, thread, cpu, restarts and channels is
/// kept as written in `settings`. No channels: every channel.
struct KafkaDecl : PartDecl {
  std::vector<std::string> channels;  // glob patterns, as a recorder's
  std::map<std::string, Setting> settings;
};

/// `epics "serve" { prefix = "BL1:WEIR:", keys = { ... }, ... }`: serves the arena's status, keys, channels and
/// run control as EPICS process variables (Channel Access, and pvAccess where EPICS base has it), run by the
/// `weir-epics` program (epics/README.md). Every key but name, cpu and restarts is kept as written in
/// `settings`; epics/config reads them.
struct EpicsDecl : PartDecl {
  std::map<std::string, Setting> settings;
};

/// `tango "serve" { device = "weir/daq/1", keys = { ... }, ... }`: serves the arena's status, keys, channels and
/// run control as a Tango device, run by the `weir-tango` program (tango/README.md). Every key but name, cpu and
/// restarts is kept as written in `settings`; tango/config reads them.
struct TangoDecl : PartDecl {
  std::map<std::string, Setting> settings;
};

/// `ann "pulses" { m = 16, ef = 64 }`: a `weir ann` service keeping an HNSW index over the vectors of
/// the keys labelled "pulses" (the partition) and answering nearest-vector queries posted through the
/// arena (ann/README.md). `params` are its options (ef_construction -> --ef-construction).
struct AnnDecl : PartDecl {
  std::string part;  // the partition's label
};

/// The conditions an `alert` declaration may watch: the same as the Prometheus rules of
/// examples/prometheus/weir-rules.yml, evaluated by `weir run` itself (tools/alerts, README "Alerts").
inline constexpr std::array<std::string_view, 12> kAlertConditions{
    "writer_stalled", "rate_below",      "blocks_lost",    "gaps_growing",     "consumer_lagging", "disk_filling",
    "disk_below",     "part_restarting", "part_given_up",  "run_not_balanced", "handoff_failing",  "clock_unsynchronised"};

/// `alert "NAME" { when = "disk_below", floor_gib = 5, webhook = "http://HOST:PORT/PATH", command = {...}, ... }`:
/// a condition `weir run` evaluates once a second; held for `for_s` it fires, and a JSON body is POSTed to
/// `webhook` and/or `command` runs (README, "Alerts"). Which settings apply depends on `when`; unset
/// numbers keep the defaults below (those of the Prometheus rules).
struct AlertDecl {
  Origin origin;
  std::string name;
  std::string when;                   // one of kAlertConditions
  std::vector<std::string> channels;  // writer_stalled, rate_below, blocks_lost, consumer_lagging: none = every channel
  std::vector<std::string> parts;     // gaps_growing, part_*, handoff_failing: none = every part
  std::vector<std::string> paths;     // disk_*: filesystems watched; none = the recorders' out directories
  double stall_s = 0;                 // writer_stalled: newest block older than this; 0 = max(4 block periods, 30 s)
  double fraction = 0;                // rate_below: of the declared rate (0.95); consumer_lagging: of the ring (0.5)
  double floor_gib = 0;               // disk_below: free space under this; 0 = under floor_fraction of the size
  double floor_fraction = 0.05;       // disk_below without floor_gib
  double horizon_h = 24;              // disk_filling: predicted full within this many hours
  double window_s = 0;                // counters: increase within this window; disk_filling: the fit's history
  double for_s = 60;                  // the condition holds this long before the alert fires
  double clear_s = 10;                // ... and is false this long before it resolves (hysteresis)
  double every_s = 3600;              // while firing, notify again at most this often (0: never again)
  double timeout_s = 10;              // each POST or command is given this long
  int retries = 8;                    // a notice that cannot be delivered is tried this many times more
  std::string webhook;                // "http://HOST[:PORT]/PATH" (plain HTTP: a local relay for TLS)
  std::vector<std::string> command;   // argv; {name}, {state}, {subject}, {condition}, {value} substituted
};

/// A webhook URL taken apart: http only.
struct HttpUrl {
  std::string host;
  std::string port = "80";
  std::string target = "/";
};
/// Parses "http://HOST[:PORT][/PATH]"; refuses https (no TLS in weir), user info, an empty host or a bad port.
[[nodiscard]] core::Result<HttpUrl> parse_http_url(const std::string& url);

struct Pipeline {
  std::string file;
  std::string text;  // the file as read, for recorders' run metadata
  ArenaDecl arena;
  std::vector<ChannelDecl> channels;
  std::vector<DriverDecl> drivers;
  std::vector<ShardDecl> shards;
  std::vector<RecordDecl> records;
  std::vector<BridgeDecl> bridges;
  std::vector<KafkaDecl> kafkas;
  std::vector<AnnDecl> anns;
  std::vector<EpicsDecl> epics;
  std::vector<TangoDecl> tangos;
  std::vector<AlertDecl> alerts;
  EntryDecl entry;
  std::optional<SourceDecl> source;
};

/// What a shard kind would produce for an input: lets check() know shards' outputs and refuse bad
/// parameters without this module depending on the shard host. Returns the output channels (key
/// outputs need none), or an error naming the shard and the problem.
using ShardResolver = std::function<core::Result<std::vector<core::ChannelSpec>>(const ShardDecl&, const core::ChannelSpec& input)>;

struct LoadLimits {
  std::size_t memory_bytes = 64U << 20;        // Lua heap while loading
  std::uint64_t instructions = 50'000'000;     // VM instructions while loading
};

/// Runs the file in a restricted Lua state (no io, os, require, load of bytecode, debug) and
/// collects its declarations. Errors: `file:line: what`, with a did-you-mean for unknown keys.
[[nodiscard]] core::Result<Pipeline> load_pipeline(const std::string& path, const LoadLimits& limits = {});
/// The same, from text already in memory; `chunk_name` is the file name errors show.
[[nodiscard]] core::Result<Pipeline> load_pipeline_text(const std::string& text, const std::string& chunk_name,
                                                        const LoadLimits& limits = {});

/// Channels declared, plus shards' outputs as the resolver reports them, in dependency order.
struct Resolved {
  std::vector<core::ChannelSpec> channels;            // everything the arena will hold
  std::map<std::string, std::string> channel_writer;  // channel -> the part that writes it
  std::map<std::string, std::vector<std::string>> shard_inputs;   // shard -> input channels
  std::map<std::string, std::vector<std::string>> record_inputs;  // recorder -> channels
  std::map<std::string, std::vector<std::string>> bridge_inputs;  // bridge "send" -> channels
  std::map<std::string, std::vector<std::string>> kafka_inputs;   // kafka "send" -> channels
  std::uint64_t channel_bytes = 0;                    // pool bytes the channels take
  std::uint64_t pool_bytes = 0;                       // the arena's channel pool: pool_mib, or sized from channel_bytes
  std::uint64_t arena_bytes = 0;                      // the whole arena's mapping
  std::uint32_t consumers_needed = 0;
};

/// The channels a driver makes from its own settings, undeclared in the file (an EPICS driver's PV log
/// and waveform channels), or an error naming the driver.
using DriverChannels = std::function<core::Result<std::vector<core::ChannelSpec>>(const DriverDecl&)>;

/// Cross-checks: a shard input no channel provides, a recorder pattern matching nothing, two
/// writers for one channel, geometry too small for the channels, consumers or keys declared.
/// Each error is `file:line: what`. `resolver` may be empty: shards then have no known outputs;
/// `driver_channels` may be empty: drivers then make only the channels the file declares.
[[nodiscard]] core::Result<Resolved> resolve(const Pipeline& pipeline, const ShardResolver& resolver,
                                             const DriverChannels& driver_channels = {});

/// The resolved pipeline as text for people: every part, its process, inputs, outputs, the arena.
[[nodiscard]] std::string describe(const Pipeline& pipeline, const Resolved& resolved);

/// `file:line: message` as an invalid-argument error.
[[nodiscard]] core::Error error_at(const Origin& origin, const std::string& message);

/// True when `name` matches the glob `pattern` (`*`, `?`, `[...]`).
[[nodiscard]] bool glob_match(const std::string& pattern, const std::string& name) noexcept;

}  // namespace weir::config
