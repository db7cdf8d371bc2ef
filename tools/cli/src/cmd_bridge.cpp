// `weir bridge send|recv|keygen`: channels across hosts over ZeroMQ (bridge/README.md). send follows
// channels and pushes their blocks to a receiver; recv publishes what arrives into its own arena,
// every block it did not get a gap; keygen makes CURVE key files. Ctrl-C stops and reports.

#include <memory>
#include <type_traits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "command.hpp"
#include "weir/bridge/curve_keys.hpp"
#include "weir/bridge/pipeline_settings.hpp"
#include "weir/bridge/receiver.hpp"
#include "weir/bridge/sender.hpp"
#include "weir/config/pipeline.hpp"
#include "weir/tools/arena_access.hpp"
#include "weir/tools/output.hpp"
#include "weir/tools/stop_signals.hpp"

namespace weir::tools {
namespace {

constexpr double kNsPerMsBridge = 1e6;

struct SendArgs {
  std::string where;
  bridge::SenderOptions o;
  std::string to, bind;
  double wait_ms = static_cast<double>(bridge::kDefaultLosslessWaitNs) / kNsPerMsBridge;
  std::string pipeline, part;
  bool json = false;
};

struct RecvArgs {
  std::string where;
  bridge::ReceiverOptions o;
  std::string from, bind;
  std::string pipeline, part;
  bool json = false;
};

struct KeygenArgs {
  std::string stem;
  bool json = false;
};

void add_security(CLI::App& sub, bridge::Security& s, bool sender) {
  sub.add_option("--curve-key", s.secret_key_file, "this end's secret key file (STEM.key from keygen, mode 0600)");
  if (sender)
    sub.add_option("--curve-server-key", s.server_key_file, "the receiver's public key file (STEM.pub)");
  else
    sub.add_option("--allow", s.allow_folder, "folder of the senders' public key files (*.pub) to accept");
  sub.add_flag("--plain", s.plain, "plain TCP: no encryption, no authentication (only when asked for)");
}

// The options of the pipeline file's `bridge "send"` or `driver "bridge"` called `part`.
template <typename Options>
core::Result<Options> from_pipeline(const std::string& file, const std::string& part, bool sender) {
  auto pipeline = config::load_pipeline(file);
  if (!pipeline) return tl::make_unexpected(pipeline.error());
  if constexpr (std::is_same_v<Options, bridge::SenderOptions>) {
    for (const auto& b : pipeline->bridges)
      if (b.name == part) return bridge::sender_options(b);
  } else {
    for (const auto& d : pipeline->drivers)
      if (d.name == part && d.kind == "bridge") return bridge::receiver_options(d);
  }
  return core::fail(core::Errc::invalid_argument, fmt::format("{}: no {} called '{}'", file,
                                                              sender ? "bridge \"send\"" : "driver \"bridge\"", part));
}

int run_send(const SendArgs& args) {
  bridge::SenderOptions o = args.o;
  if (!args.pipeline.empty()) {
    auto loaded = from_pipeline<bridge::SenderOptions>(args.pipeline, args.part, true);
    if (!loaded) return report_error("bridge send", loaded.error());
    o = *loaded;
  } else {
    if (o.patterns.empty()) return report_usage("bridge send: give --channels (or --pipeline and --part)");
    if (args.to.empty() == args.bind.empty()) return report_usage("bridge send: give exactly one of --to and --bind");
    o.endpoint = args.to.empty() ? args.bind : args.to;
    o.bind = !args.bind.empty();
    if (o.name.empty()) o.name = host_name_or("bridge");
    o.lossless_wait_ns = static_cast<std::int64_t>(args.wait_ms * kNsPerMsBridge);
  }
  if (auto ok = bridge::validate(o); !ok) return report_usage(ok.error().what);
  auto arena = open_arena(args.where, Access::read_write);
  if (!arena) return kExitError;
  const StopSignals signals;
  auto r = bridge::run_sender(*arena, o, StopSignals::flag());
  if (!r) return report_error("", r.error());
  if (args.json) {
    JsonArray channels;
    for (const auto& c : r->channels)
      channels.raw(JsonObject()
                       .text("name", c.name)
                       .number("sent", c.sent)
                       .number("dropped", c.dropped)
                       .number("lost", c.lost)
                       .number("bytes", c.bytes)
                       .str());
    JsonObject out;
    out.text("arena", args.where)
        .text("bridge", o.name)
        .text("endpoint", o.endpoint)
        .text("session", fmt::format("{:016x}", r->session))
        .boolean("lossless", o.lossless)
        .boolean("plain", o.security.plain)
        .number("sent", r->sent)
        .number("dropped", r->dropped)
        .number("lost", r->lost)
        .number("bytes", r->bytes)
        .number("handshakes", r->handshakes)
        .number("disconnects", r->disconnects)
        .number("auth_failures", r->auth_failures)
        .real("elapsed_s", r->elapsed_s)
        .raw("channels", channels.str());
    print_json(out);
  } else {
    fmt::print("bridge send {} from {} to {} ({}, {}), session {:016x}: {:.3f} s\n", o.name, args.where, o.endpoint,
               o.lossless ? "lossless" : "lossy", o.security.plain ? "plain TCP" : "CURVE", r->session, r->elapsed_s);
    fmt::print("  {} blocks sent ({} bytes), {} dropped on purpose, {} lost on this side; {} handshakes, {} "
               "disconnects, {} refused\n",
               r->sent, r->bytes, r->dropped, r->lost, r->handshakes, r->disconnects, r->auth_failures);
    for (const auto& c : r->channels)
      fmt::print("  {:<24} {:>10} sent {:>8} dropped {:>8} lost\n", c.name, c.sent, c.dropped, c.lost);
  }
  return kExitOk;
}

int run_recv(const RecvArgs& args) {
  bridge::ReceiverOptions o = args.o;
  if (!args.pipeline.empty()) {
    auto loaded = from_pipeline<bridge::ReceiverOptions>(args.pipeline, args.part, false);
    if (!loaded) return report_error("bridge recv", loaded.error());
    o = *loaded;
  } else {
    if (args.from.empty() == args.bind.empty()) return report_usage("bridge recv: give exactly one of --from and --bind");
    o.endpoint = args.from.empty() ? args.bind : args.from;
    o.bind = !args.bind.empty();
    if (o.name.empty()) o.name = host_name_or("bridge");
  }
  if (auto ok = bridge::validate(o); !ok) return report_usage(ok.error().what);
  auto arena = open_arena(args.where, Access::read_write);
  if (!arena) return kExitError;
  const StopSignals signals;
  auto r = bridge::run_receiver(*arena, o, StopSignals::flag());
  if (!r) return report_error("", r.error());
  if (args.json) {
    JsonArray channels;
    for (const auto& c : r->channels)
      channels.raw(JsonObject()
                       .text("name", c.name)
                       .text("sender", c.sender)
                       .boolean("created", c.created)
                       .number("received", c.received)
                       .number("gaps", c.gaps)
                       .number("late", c.late)
                       .number("dropped", c.dropped)
                       .str());
    JsonObject out;
    out.text("arena", args.where)
        .text("bridge", o.name)
        .text("endpoint", o.endpoint)
        .boolean("plain", o.security.plain)
        .number("received", r->received)
        .number("bytes", r->bytes)
        .number("gaps", r->gaps)
        .number("late", r->late)
        .number("dropped", r->dropped)
        .number("refused", r->refused)
        .number("undescribed", r->undescribed)
        .number("malformed", r->malformed)
        .number("sessions", r->sessions)
        .number("handshakes", r->handshakes)
        .number("disconnects", r->disconnects)
        .number("auth_failures", r->auth_failures)
        .number("zap_refused", r->zap_refused)
        .real("elapsed_s", r->elapsed_s)
        .raw("channels", channels.str());
    print_json(out);
  } else {
    fmt::print("bridge recv {} into {} from {} ({}): {:.3f} s\n", o.name, args.where, o.endpoint,
               o.security.plain ? "plain TCP" : "CURVE", r->elapsed_s);
    fmt::print("  {} blocks received ({} bytes), {} gap blocks, {} late, {} dropped here, {} refused, {} sessions, "
               "{} auth failures\n",
               r->received, r->bytes, r->gaps, r->late, r->dropped, r->refused, r->sessions, r->auth_failures);
    for (const auto& c : r->channels)
      fmt::print("  {:<24} from {:<12} {:>10} received {:>8} gaps {:>8} late\n", c.name, c.sender, c.received, c.gaps,
                 c.late);
  }
  return kExitOk;
}

int run_keygen(const KeygenArgs& args) {
  auto files = bridge::write_keypair(args.stem);
  if (!files) return report_error("bridge keygen", files.error());
  if (args.json) {
    print_json(JsonObject()
                   .text("secret_key_file", files->secret_path)
                   .text("public_key_file", files->public_path)
                   .text("public_key", files->public_z85));
  } else {
    fmt::print("secret key {} (mode 0600: keep it on this host)\npublic key {} ({})\n", files->secret_path,
               files->public_path, files->public_z85);
  }
  return kExitOk;
}

// --pipeline FILE --part NAME: run the file's declaration with its settings (the way `weir run`
// starts it); the other options then do not apply.
void add_pipeline_options(CLI::App& sub, std::string& pipeline, std::string& part, const char* what) {
  CLI::Option* file = sub.add_option("--pipeline", pipeline, fmt::format("run the pipeline file's {} called --part", what));
  sub.add_option("--part", part, "the declaration's name in --pipeline")->needs(file);
  file->needs("--part");
  for (const char* other : {"--name", "--channels", "--to", "--bind", "--from", "--curve-key", "--curve-server-key",
                            "--allow", "--plain", "--lossless", "--wait-ms", "--hwm", "--newest", "--prefix"})
    if (CLI::Option* o = sub.get_option_no_throw(other); o != nullptr) file->excludes(o);
}

}  // namespace

void add_bridge_commands(CLI::App& app, Action& action) {
  CLI::App* bridge = app.add_subcommand("bridge", "Carry channels to another host over ZeroMQ (CURVE unless --plain)");
  bridge->require_subcommand(1);

  auto send = std::make_shared<SendArgs>();
  CLI::App* s = bridge->add_subcommand(
      "send", "Follow channels and push every block to a receiver; blocks the link cannot take are dropped and "
              "counted (or waited for with --lossless); Ctrl-C stops and reports");
  add_name_option(*s, send->where);
  s->add_option("--name", send->o.name, "this bridge's name: keys bridge.NAME.*, {sender} at the receiver (default: host name)");
  s->add_option("--channels", send->o.patterns, "channel names or globs ('adc*'); channels made later join")
      ->expected(1, -1);
  s->add_option("--to", send->to, "connect to the receiver: tcp://HOST:PORT");
  s->add_option("--bind", send->bind, "bind here instead (the receiver uses --from): tcp://ADDRESS:PORT");
  add_security(*s, send->o.security, true);
  s->add_flag("--lossless", send->o.lossless,
              "read as a lossless consumer and wait (bounded by --wait-ms) for the link instead of dropping");
  s->add_option("--wait-ms", send->wait_ms, "lossless: longest wait for the link per block before it is dropped")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  s->add_option("--hwm", send->o.send_hwm, "blocks queued for the link before drops (ZMQ_SNDHWM)")->capture_default_str();
  s->add_flag("--newest", send->o.from_newest, "start at each channel's newest block, not the oldest still held");
  add_pipeline_options(*s, send->pipeline, send->part, "bridge \"send\"");
  add_json_flag(*s, send->json);
  bind_action(*s, action, send, &run_send);

  auto recv = std::make_shared<RecvArgs>();
  CLI::App* r = bridge->add_subcommand(
      "recv", "Publish the blocks senders push into channels of this arena (created, or attached if they match); "
              "every block not received becomes a gap; Ctrl-C stops and reports");
  add_name_option(*r, recv->where);
  r->add_option("--name", recv->o.name, "this bridge's name: keys bridge.NAME.* (default: host name)");
  r->add_option("--bind", recv->bind, "bind and let senders connect: tcp://ADDRESS:PORT");
  r->add_option("--from", recv->from, "connect to a sender that binds: tcp://HOST:PORT");
  r->add_option("--prefix", recv->o.prefix, "put before every channel name; {sender} is the sending bridge's name");
  add_security(*r, recv->o.security, false);
  r->add_option("--hwm", recv->o.recv_hwm, "blocks queued per link before TCP pushes back (ZMQ_RCVHWM)")->capture_default_str();
  add_pipeline_options(*r, recv->pipeline, recv->part, "driver \"bridge\"");
  add_json_flag(*r, recv->json);
  bind_action(*r, action, recv, &run_recv);

  auto keygen = std::make_shared<KeygenArgs>();
  CLI::App* k = bridge->add_subcommand("keygen", "Make a CURVE key pair: STEM.key (secret, 0600) and STEM.pub");
  k->add_option("STEM", keygen->stem, "path without extension, e.g. keys/daq1")->required();
  add_json_flag(*k, keygen->json);
  bind_action(*k, action, keygen, &run_keygen);
}

}  // namespace weir::tools
