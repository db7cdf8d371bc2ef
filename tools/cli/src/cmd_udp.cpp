// `weir udp` and `weir udpgen`: the UDP stream driver (VITA 49 or raw packets from digitizers and
// FPGA boards into arena channels) and its load generator with injected faults.
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "channel_writer.hpp"
#include "command.hpp"
#include "weir/config/pipeline.hpp"
#include "weir/core/channel.hpp"
#include "weir/tools/arena_access.hpp"
#include "weir/tools/output.hpp"
#include "weir/tools/stop_signals.hpp"
#include "weir/udp/generator.hpp"
#include "weir/udp/udp_config.hpp"
#include "weir/udp/receiver.hpp"

namespace weir::tools {
namespace {

struct UdpArgs {
  std::string where;
  std::string pipeline;
  std::string part = "udp";
  std::uint16_t port = 0;
  std::string bind;
  std::string group;
  std::string format = "vita49";
  std::vector<std::string> streams;  // ID=CHANNEL
  std::int64_t rcvbuf = acq::kUdpDefaultRcvbufBytes;
  std::uint32_t batch = acq::kUdpDefaultBatch;
  int cpu = -1;
  std::uint32_t reorder = acq::kUdpDefaultReorderBlocks;
  std::uint32_t horizon = acq::kUdpDefaultHorizonBlocks;
  double seconds = 0;
  std::uint64_t packets = 0;
  std::string dtype;
  double rate_hz = 0;
  std::uint32_t block = 0;
  ChannelWriterArgs writer;
  bool json = false;
};

// "7=adc0" -> {7, "adc0"}; fails naming the text.
core::Result<acq::UdpStream> parse_stream(const std::string& part, const std::string& text) {
  const auto eq = text.find('=');
  const auto bad = [&](const std::string& why) {
    return core::fail(core::Errc::invalid_argument, "udp part '" + part + "': --stream '" + text + "': " + why);
  };
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) return bad("expected ID=CHANNEL, e.g. 1=adc0");
  acq::UdpStream s;
  try {
    std::size_t used = 0;
    const unsigned long long id = std::stoull(text.substr(0, eq), &used, 0);
    if (used != eq || id > UINT32_MAX) return bad("the stream id must be a 32-bit unsigned number");
    s.id = static_cast<std::uint32_t>(id);
  } catch (const std::exception&) {
    return bad("the stream id must be a 32-bit unsigned number");
  }
  s.channel = text.substr(eq + 1);
  return s;
}

// The options of the pipeline's driver called a.part, plus the run limits of the command line.
core::Result<acq::UdpOptions> pipeline_options(const UdpArgs& a) {
  auto pipeline = config::load_pipeline(a.pipeline);
  if (!pipeline) return tl::make_unexpected(pipeline.error());
  for (const config::DriverDecl& d : pipeline->drivers) {
    if (d.name != a.part) continue;
    if (d.kind != "udp")
      return core::fail(core::Errc::invalid_argument, fmt::format("{}: part '{}' is a {} driver, not udp",
                                                                  a.pipeline, a.part, d.kind));
    auto o = acq::udp_options(d);
    if (!o) return o;
    o->duration_s = a.seconds;
    o->max_packets = a.packets;
    return o;
  }
  return core::fail(core::Errc::invalid_argument, fmt::format("{}: no driver called '{}'", a.pipeline, a.part));
}

core::Result<acq::UdpOptions> to_options(const UdpArgs& a) {
  if (!a.pipeline.empty()) return pipeline_options(a);
  acq::UdpOptions o;
  o.part = a.part;
  o.port = a.port;
  o.bind = a.bind;
  o.group = a.group;
  auto format = acq::parse_packet_format(a.format);
  if (!format) return tl::make_unexpected(core::with_context(format.error(), "udp part '" + a.part + "'"));
  o.format = *format;
  for (const std::string& text : a.streams) {
    auto s = parse_stream(a.part, text);
    if (!s) return tl::make_unexpected(s.error());
    o.streams.push_back(*s);
  }
  o.rcvbuf_bytes = a.rcvbuf;
  o.batch = a.batch;
  o.cpu = a.cpu;
  o.reorder_blocks = a.reorder;
  o.horizon_blocks = a.horizon;
  o.duration_s = a.seconds;
  o.max_packets = a.packets;
  if (!a.dtype.empty() || a.rate_hz > 0 || a.block > 0) {
    if (a.dtype.empty() || a.rate_hz <= 0 || a.block == 0)
      return core::fail(core::Errc::invalid_argument,
                        "udp part '" + a.part + "': give --dtype, --rate and --block together to create channels");
    auto dtype = core::parse_dtype(a.dtype);
    if (!dtype) return tl::make_unexpected(dtype.error());
    o.create_missing = true;
    o.dtype = *dtype;
    o.rate_hz = a.rate_hz;
    o.block_samples = a.block;
    a.writer.apply_to(o);
  }
  if (auto ok = acq::validate(o); !ok) return tl::make_unexpected(ok.error());
  return o;
}

JsonObject counters_json(const acq::UdpStreamReport& s) {
  const acq::StreamCounters& c = s.counters;
  JsonObject j;
  j.number("id", s.id)
      .text("channel", s.channel)
      .number("packets", c.packets)
      .number("bytes", c.bytes)
      .number("samples", c.samples)
      .number("lost_samples", c.lost_samples)
      .number("discarded_samples", c.discarded_samples)
      .number("reordered", c.reordered)
      .number("late", c.late)
      .number("duplicates", c.duplicates)
      .number("overflow", c.overflow)
      .number("oversized", c.oversized)
      .number("dtype_mismatch", c.dtype_mismatch)
      .number("bad_timestamp", c.bad_timestamp)
      .number("width_mismatch", c.width_mismatch)
      .number("recorded", c.recorded)
      .number("missing", c.missing_packets)
      .number("source_loss", c.source_loss)
      .number("kernel_drop", c.kernel_drop)
      .number("malformed_missing", c.malformed_missing)
      .number("resyncs", c.resyncs)
      .number("blocks_published", c.blocks_published)
      .number("gap_blocks", c.gap_blocks)
      .number("blocks_dropped", c.blocks_dropped)
      .text("clock", s.clock);
  return j;
}

void print_udp(const UdpArgs& a, const acq::UdpReport& r) {
  if (a.json) {
    JsonArray streams;
    for (const acq::UdpStreamReport& s : r.streams) streams.raw(counters_json(s).str());
    JsonObject malformed;
    for (std::size_t i = 1; i < acq::kPacketStatusCount; ++i)
      malformed.number(acq::packet_status_name(static_cast<acq::PacketStatus>(i)), r.malformed[i]);
    const acq::UdpLedger& l = r.ledger;
    JsonObject accounting;
    accounting.number("recorded", l.recorded)
        .number("source_loss", l.source_loss)
        .number("kernel_drop", l.kernel_drop)
        .number("malformed", l.malformed)
        .number("duplicate", l.duplicate)
        .number("late", l.late);
    JsonObject out;
    out.text("arena", a.where)
        .text("part", r.part)
        .text("format", a.format)
        .number("port", r.port)
        .number("rcvbuf_requested", r.rcvbuf_requested)
        .number("rcvbuf_granted", r.rcvbuf_granted)
        .boolean("joined_group", r.joined_group)
        .number("datagrams", r.datagrams)
        .number("bytes", r.bytes)
        .number("batches", r.batches)
        .number("kernel_drops", r.kernel_drops)
        .number("unknown_stream", r.unknown_stream)
        .number("malformed_total", r.malformed_total)
        .raw("malformed", malformed.str())
        .real("elapsed_s", r.elapsed_s)
        .real("packets_per_s", r.packets_per_s)
        .real("bytes_per_s", r.bytes_per_s)
        .boolean("stopped", r.stopped)
        .raw("streams", streams.str())
        .raw("accounting", accounting.str());
    print_json(out);
    return;
  }
  fmt::print("udp part '{}' on port {} ({}) into {}: {}\n", r.part, r.port, a.format, a.where,
             r.stopped ? "stopped by a signal" : "limit reached");
  fmt::print("  {} datagrams, {} in {:.3f} s: {:.0f} packets/s; rcvbuf {} granted ({} asked); {} kernel drops\n",
             r.datagrams, human_bytes(r.bytes), r.elapsed_s, r.packets_per_s, human_bytes(static_cast<std::uint64_t>(r.rcvbuf_granted)),
             human_bytes(static_cast<std::uint64_t>(r.rcvbuf_requested)), r.kernel_drops);
  fmt::print("  {} malformed, {} of unknown streams\n", r.malformed_total, r.unknown_stream);
  const acq::UdpLedger& l = r.ledger;
  fmt::print("  packets sent = {} recorded + {} source_loss + {} kernel_drop + {} malformed + {} duplicate + {} late "
             "= {}\n", l.recorded, l.source_loss, l.kernel_drop, l.malformed, l.duplicate, l.late,
             l.recorded + l.source_loss + l.kernel_drop + l.malformed + l.duplicate + l.late);
  for (std::size_t i = 1; i < acq::kPacketStatusCount; ++i)
    if (r.malformed[i] > 0)
      fmt::print("    {:<20} {}\n", acq::packet_status_name(static_cast<acq::PacketStatus>(i)), r.malformed[i]);
  for (const acq::UdpStreamReport& s : r.streams) {
    const acq::StreamCounters& c = s.counters;
    fmt::print("  stream {} -> {}: {} packets, {} samples, {} lost, {} blocks, {} gap blocks, {} reordered, {} late, "
               "{} duplicates; clock {}\n",
               s.id, s.channel, c.packets, c.samples, c.lost_samples, c.blocks_published, c.gap_blocks, c.reordered,
               c.late, c.duplicates, s.clock);
  }
}

int run_udp_command(const UdpArgs& args) {
  auto options = to_options(args);
  if (!options) return report_usage(options.error().what);
  auto arena = open_arena(args.where, Access::read_write);
  if (!arena) return kExitError;
  const StopSignals signals;
  auto report = acq::run_udp(*arena, *options, StopSignals::flag());
  if (!report) return report_error("", report.error());
  print_udp(args, *report);
  return kExitOk;
}

struct UdpGenArgs {
  std::string dest = "127.0.0.1";
  std::uint16_t port = 0;
  std::string format = "vita49";
  std::uint32_t streams = 1;
  std::uint32_t first_id = 1;
  std::string dtype = "i16";
  std::string signal = "ramp";
  double noise_lsb = acq::kUdpGenNoiseLsb;
  double count_rate_hz = acq::kUdpGenCountRateHz;
  double rate_hz = 0;
  std::uint32_t samples = 0;
  double seconds = 0;
  std::uint64_t packets = 0;
  bool fast = false;
  std::uint32_t burst = 1;
  std::uint32_t batch = acq::kUdpDefaultBatch;
  double loss = 0;
  std::uint64_t drop_every = 0;
  double reorder = 0;
  double duplicate = 0;
  double malformed = 0;
  std::uint64_t seed = 1;
  std::string vita_time = "count";
  bool no_raw_time = false;
  bool json = false;
};

int run_udpgen_command(const UdpGenArgs& a) {
  acq::UdpGenOptions o;
  o.dest = a.dest;
  o.port = a.port;
  auto format = acq::parse_packet_format(a.format);
  if (!format) return report_usage("udpgen: " + format.error().what);
  o.format = *format;
  o.streams = a.streams;
  o.first_stream_id = a.first_id;
  auto dtype = core::parse_dtype(a.dtype);
  if (!dtype) return report_usage("udpgen: " + dtype.error().what);
  o.dtype = *dtype;
  auto signal = acq::parse_udpgen_signal(a.signal);
  if (!signal) return report_usage(signal.error().what);
  o.signal = *signal;
  o.noise_lsb = a.noise_lsb;
  o.count_rate_hz = a.count_rate_hz;
  o.rate_hz = a.rate_hz;
  o.packet_samples = a.samples;
  o.duration_s = a.seconds;
  o.packets = a.packets;
  o.fast = a.fast;
  o.burst = a.burst;
  o.batch = a.batch;
  o.loss = a.loss;
  o.drop_every = a.drop_every;
  o.reorder = a.reorder;
  o.duplicate = a.duplicate;
  o.malformed = a.malformed;
  o.seed = a.seed;
  auto vita_time = acq::parse_vita_time(a.vita_time);
  if (!vita_time) return report_usage(vita_time.error().what);
  o.vita_time = *vita_time;
  o.raw_timestamps = !a.no_raw_time;
  if (auto ok = acq::validate(o); !ok) return report_usage(ok.error().what);
  const StopSignals signals;
  auto report = acq::run_udpgen(o, StopSignals::flag());
  if (!report) return report_error("", report.error());
  const acq::UdpGenReport& r = *report;
  if (a.json) {
    JsonArray streams;
    for (const acq::UdpGenStreamReport& s : r.streams) {
      JsonObject j;
      j.number("id", s.id)
          .number("packets", s.packets)
          .number("packets_sent", s.packets_sent)
          .number("packets_dropped", s.packets_dropped)
          .number("samples_sent", s.samples_sent)
          .number("samples_dropped", s.samples_dropped)
          .number("duplicates", s.duplicates)
          .number("reordered", s.reordered)
          .number("malformed", s.malformed);
      streams.raw(j.str());
    }
    JsonObject out;
    out.text("dest", r.dest)
        .text("format", a.format)
        .text("dtype", a.dtype)
        .number("samples_per_packet", a.samples)
        .number("datagrams", r.datagrams)
        .number("bytes", r.bytes)
        .number("send_errors", r.send_errors)
        .number("samples_sent", r.samples_sent)
        .number("packets_dropped", r.packets_dropped)
        .number("samples_dropped", r.samples_dropped)
        .number("duplicates", r.duplicates)
        .number("reordered", r.reordered)
        .number("malformed", r.malformed)
        .real("elapsed_s", r.elapsed_s)
        .real("packets_per_s", r.packets_per_s)
        .number("max_lateness_ns", r.max_lateness_ns)
        .boolean("stopped", r.stopped)
        .raw("streams", streams.str());
    print_json(out);
  } else {
    fmt::print("udpgen {} to {}: {} datagrams, {} in {:.3f} s ({:.0f} datagrams/s){}\n", a.format, r.dest, r.datagrams,
               human_bytes(r.bytes), r.elapsed_s, r.packets_per_s, r.stopped ? ", stopped by a signal" : "");
    fmt::print("  {} samples sent; dropped {} packets = {} samples; {} reordered, {} duplicated, {} malformed; "
               "{} send errors\n",
               r.samples_sent, r.packets_dropped, r.samples_dropped, r.reordered, r.duplicates, r.malformed,
               r.send_errors);
  }
  return kExitOk;
}

}  // namespace

void add_udp_commands(CLI::App& app, Action& action) {
  {
    auto args = std::make_shared<UdpArgs>();
    CLI::App* sub = app.add_subcommand(
        "udp", "Receive VITA 49 or raw UDP packets (digitizers, SDRs, FPGA boards) into channels: exact gaps, "
               "reordering, counters in <part>.* keys; Ctrl-C stops and reports");
    add_name_option(*sub, args->where);
    CLI::Option* pipeline = sub->add_option("--pipeline", args->pipeline,
                                            "run the pipeline file's driver \"udp\" called --part with its settings");
    sub->add_option("--stream", args->streams, "ID=CHANNEL: packets of stream ID go to CHANNEL (repeat per stream)")
        ->excludes(pipeline);
    sub->add_option("--port", args->port, "UDP port (0: the kernel picks one, published in <part>.port)")
        ->capture_default_str();
    sub->add_option("--bind", args->bind, "numeric local address to bind (default: any)");
    sub->add_option("--group", args->group, "multicast group to join (IPv4 or IPv6)");
    sub->add_option("--format", args->format, "packet format: vita49 or raw")->capture_default_str();
    sub->add_option("--part", args->part, "the part's name: prefixes its keys, names it in errors; with --pipeline "
                                          "the driver to run")->capture_default_str();
    sub->add_option("--rcvbuf", args->rcvbuf, "socket receive buffer to ask for, bytes")->capture_default_str();
    sub->add_option("--batch", args->batch, "datagrams per recvmmsg")->capture_default_str();
    sub->add_option("--cpu", args->cpu, "pin the receiving thread to this CPU");
    sub->add_option("--reorder", args->reorder, "blocks a block waits for late packets")->capture_default_str();
    sub->add_option("--horizon", args->horizon,
                    "blocks a timestamp may jump before its packet count must agree (else one bad packet)")
        ->capture_default_str();
    CLI::Option* seconds = sub->add_option("--seconds", args->seconds, "stop after this many seconds")
                               ->check(CLI::PositiveNumber);
    sub->add_option("--packets", args->packets, "stop after this many datagrams")->excludes(seconds);
    sub->add_option("--dtype", args->dtype, "create missing channels with this dtype (with --rate and --block)");
    sub->add_option("--rate", args->rate_hz, "create missing channels with this rate, Hz");
    sub->add_option("--block", args->block, "create missing channels with blocks of this many samples");
    add_channel_writer_options(*sub, args->writer, "udp");
    add_json_flag(*sub, args->json);
    bind_action(*sub, action, args, &run_udp_command);
  }
  {
    auto args = std::make_shared<UdpGenArgs>();
    CLI::App* sub = app.add_subcommand(
        "udpgen", "Send VITA 49 or raw UDP packets at a given rate, with injected loss, reordering, duplicates, "
                  "bursts and malformed packets; reports exactly what it dropped");
    sub->add_option("--dest", args->dest, "numeric destination address (IPv4, IPv6 or a multicast group)")
        ->capture_default_str();
    sub->add_option("--port", args->port, "destination port")->required();
    sub->add_option("--format", args->format, "packet format: vita49 or raw")->capture_default_str();
    sub->add_option("--streams", args->streams, "number of streams")->capture_default_str();
    sub->add_option("--first-id", args->first_id, "id of the first stream; the others follow")->capture_default_str();
    sub->add_option("--dtype", args->dtype, "sample type: i8 u8 i16 u16 i32 u32 i64 f32 f64 c64")->capture_default_str();
    sub->add_option("--rate", args->rate_hz, "samples per second per stream")->required();
    sub->add_option("--signal", args->signal, "ramp (checkable) or pulses (the simulator's detector pulses as ADC codes)")
        ->capture_default_str();
    sub->add_option("--noise-lsb", args->noise_lsb, "pulses: baseline noise sigma in LSB of the dtype")->capture_default_str();
    sub->add_option("--count-rate", args->count_rate_hz, "pulses: mean counts per second (Poisson)")->capture_default_str();
    sub->add_option("--samples", args->samples, "samples per packet")->required();
    CLI::Option* seconds = sub->add_option("--seconds", args->seconds, "send rate x seconds samples per stream");
    sub->add_option("--packets", args->packets, "send this many packets per stream")->excludes(seconds);
    sub->add_flag("--fast", args->fast, "no pacing: as fast as the socket takes them");
    sub->add_option("--burst", args->burst, "packets per stream sent back to back per pacing tick")->capture_default_str();
    sub->add_option("--batch", args->batch, "datagrams per sendmmsg")->capture_default_str();
    sub->add_option("--loss", args->loss, "probability a packet is dropped (never a stream's first or last)");
    sub->add_option("--drop-every", args->drop_every, "drop every Nth packet of each stream");
    sub->add_option("--reorder", args->reorder, "probability a packet is sent after the next one");
    sub->add_option("--duplicate", args->duplicate, "probability a packet is sent twice");
    sub->add_option("--malformed", args->malformed, "probability a malformed datagram follows a packet");
    sub->add_option("--seed", args->seed, "seed of the fault draws")->capture_default_str();
    sub->add_option("--vita-time", args->vita_time, "VITA 49 timestamps: count (TSF sample count), ps or none")
        ->capture_default_str();
    sub->add_flag("--no-raw-time", args->no_raw_time, "raw: send timestamp_ns 0");
    add_json_flag(*sub, args->json);
    bind_action(*sub, action, args, &run_udpgen_command);
  }
}

}  // namespace weir::tools
