#include "run_check.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <system_error>

#include <fmt/format.h>

#include "run_threads.hpp"
#include "weir/recorder/naming.hpp"
#include "weir/recorder/recorder.hpp"
#include "weir/supervisor/pipeline_drivers.hpp"
#include "weir/supervisor/pipeline_shards.hpp"

namespace weir::supervisor {

using core::Result;

namespace {

core::Error part_error(const PartPlan& plan, const std::string& what) {
  return config::error_at(plan.origin, fmt::format("{}: {}", plan.title, what));
}

// The setting behind the first `--option` a message names (--flush-ms -> flush_ms), or "".
std::string setting_in(const std::string& message) {
  const std::size_t at = message.find("--");
  if (at == std::string::npos) return {};
  std::size_t end = at + 2;
  while (end < message.size() && (std::isalnum(static_cast<unsigned char>(message[end])) != 0 || message[end] == '-')) ++end;
  std::string key = message.substr(at + 2, end - at - 2);
  std::replace(key.begin(), key.end(), '-', '_');
  return key;
}

// `'key' = value: what` when the message names an option the file set.
std::string with_setting(const std::string& message, const std::map<std::string, std::string>& params) {
  const std::string key = setting_in(message);
  const auto it = params.find(key);
  if (it == params.end()) return message;
  return fmt::format("'{}' = {}: {}", key, it->second, message);
}

Result<void> check_sim(const config::Pipeline& p, const config::DriverDecl& d) {
  if (auto o = sim_options(p, d); !o)
    return tl::make_unexpected(config::error_at(d.origin, fmt::format("driver \"{}\": {}", d.name, o.error().what)));
  return {};
}

Result<void> check_replay(const config::DriverDecl& d) {
  const auto it = d.params.find("file");
  const std::string file = it == d.params.end() ? std::string{} : it->second;
  std::error_code ec;
  std::ifstream in(file, std::ios::binary);
  if (file.empty() || !in || std::filesystem::is_directory(file, ec))
    return tl::make_unexpected(config::error_at(
        d.origin, fmt::format("driver \"{}\": 'file' = \"{}\": cannot be read{}", d.name, file,
                              std::filesystem::exists(file, ec) ? "" : " (no such file)")));
  return {};
}

// The nearest directory that exists at or above `dir`: where creating `dir` would write.
std::filesystem::path existing_ancestor(std::filesystem::path dir) {
  std::error_code ec;
  if (dir.empty()) dir = ".";
  while (!std::filesystem::exists(dir, ec) && dir.has_parent_path() && dir.parent_path() != dir) dir = dir.parent_path();
  return dir;
}

Result<void> check_recorder(const config::RecordDecl& r, bool for_run) {
  rec::RecordOptions o;
  o.channels = r.channels;
  o.keys = r.keys;
  o.out = r.out;
  auto policy = core::parse_policy(r.policy);
  if (!policy) return tl::make_unexpected(config::error_at(r.origin, fmt::format("record \"{}\": {}", r.name, policy.error().what)));
  o.policy = *policy;
  const auto number = [&](const char* key, double fallback) {
    const auto it = r.params.find(key);
    return it == r.params.end() ? fallback : std::strtod(it->second.c_str(), nullptr);
  };
  o.flush_ms = static_cast<std::uint32_t>(number("flush_ms", o.flush_ms));
  o.rotate_s = number("rotate_s", 0);
  const double compress = number("compress", 0);
  if (compress != 0 && (compress < 1 || compress > 9 || compress != std::floor(compress)))
    return tl::make_unexpected(config::error_at(r.origin, fmt::format("record \"{}\": 'compress' = {}: levels are 1..9",
                                                                      r.name, r.params.at("compress"))));
  if (compress > 0) o.codec.codec = codec::Codec{codec::Method::deflate, true, static_cast<int>(compress)};
  if (const auto it = r.params.find("codec"); it != r.params.end())
    if (auto ok = rec::parse_codecs(it->second, o); !ok)
      return tl::make_unexpected(config::error_at(r.origin, fmt::format("record \"{}\": 'codec': {}", r.name, ok.error().what)));
  const double threads = number("encode_threads", 0);
  if (threads < 0 || threads > 64 || threads != std::floor(threads))
    return tl::make_unexpected(config::error_at(r.origin, fmt::format("record \"{}\": 'encode_threads' = {}: 1..64",
                                                                      r.name, r.params.at("encode_threads"))));
  o.encode_threads = static_cast<unsigned>(threads);
  if (!for_run) {  // check where the directory would be made, and make nothing
    const rec::OutTarget target = rec::parse_out(r.out);
    std::error_code ec;
    if (!std::filesystem::exists(target.dir, ec)) o.out = existing_ancestor(target.dir).string();
  }
  if (auto ok = rec::check_options(o); !ok) {
    std::string what = ok.error().what;
    if (!for_run && o.out != r.out && what.find("--out") != std::string::npos) what += fmt::format(" (to make '{}')", r.out);
    return tl::make_unexpected(config::error_at(r.origin, fmt::format("record \"{}\": {}", r.name, with_setting(what, r.params))));
  }
  return {};
}

const std::map<std::string, std::string>* params_of(const config::Pipeline& p, const PartPlan& plan) {
  for (const auto& d : p.drivers)
    if (d.name == plan.name) return &d.params;
  for (const auto& s : p.shards)
    if (s.name == plan.name) return &s.params;
  for (const auto& r : p.records)
    if (r.name == plan.name) return &r.params;
  return nullptr;
}

// runs = "controlled": the run numbers and the run log live in the first recorder's directory, every
// recorder takes its run from the arena (no `run = N`), and a schedule counts a channel that exists.
Result<void> check_controlled(const config::Pipeline& p, const config::Resolved& resolved,
                              const std::vector<RecorderTarget>& recorders) {
  const config::ArenaDecl& a = p.arena;
  if (!a.controlled_runs) return {};
  if (recorders.empty())
    return tl::make_unexpected(config::error_at(
        a.origin, "runs = \"controlled\": declare a recorder (record \"hdf5\" { out = DIR }): its directory keeps the "
                  "run numbers and the run log"));
  for (const RecorderTarget& t : recorders) {
    if (!t.is_dir)
      return tl::make_unexpected(config::error_at(
          t.origin, fmt::format("record \"{}\": runs = \"controlled\" writes each run into its own files: 'out' must "
                                "be a directory, not a FILE.h5",
                                t.part)));
    if (t.run != 0)
      return tl::make_unexpected(config::error_at(
          t.origin, fmt::format("record \"{}\": 'run' = {}: with runs = \"controlled\" the arena numbers its runs",
                                t.part, t.run)));
  }
  if (a.schedule && a.schedule->stop_after_blocks > 0) {
    const std::string& ch = a.schedule->channel;
    const bool known = std::any_of(resolved.channels.begin(), resolved.channels.end(),
                                   [&](const core::ChannelSpec& c) { return ch.empty() || c.name == ch; });
    if (!known || resolved.channels.empty())
      return tl::make_unexpected(config::error_at(
          a.schedule->origin, fmt::format("schedule: stop_after_blocks counts the blocks of channel '{}', which no "
                                          "part makes",
                                          ch.empty() ? std::string("(the first)") : ch)));
  }
  return {};
}

}  // namespace

Result<Loaded> load_checked(const std::string& file, const ArgsCheck& parse_args, bool for_run) {
  auto pipeline = config::load_pipeline(file);
  if (!pipeline) return tl::make_unexpected(pipeline.error());
  auto resolved = config::resolve(*pipeline, pipeline_shard_resolver(), pipeline_driver_channels());
  if (!resolved) return tl::make_unexpected(resolved.error());
  pipeline->arena.options.channel_data_bytes = resolved->pool_bytes;  // the arena weir run creates
  if (auto drivers = check_drivers(*pipeline); !drivers) return tl::make_unexpected(drivers.error());
  for (const auto& d : pipeline->drivers) {
    if (d.kind == "sim")
      if (auto ok = check_sim(*pipeline, d); !ok) return tl::make_unexpected(ok.error());
    if (d.kind == "replay")
      if (auto ok = check_replay(d); !ok) return tl::make_unexpected(ok.error());
  }
  for (const auto& r : pipeline->records)
    if (auto ok = check_recorder(r, false); !ok) return tl::make_unexpected(ok.error());
  auto parts = plan_parts(*pipeline, *resolved);
  if (!parts) return tl::make_unexpected(parts.error());
  auto recorders = recorder_targets(*pipeline, pipeline->arena.name);
  if (!recorders) return tl::make_unexpected(recorders.error());
  if (auto ok = check_controlled(*pipeline, *resolved, *recorders); !ok) return tl::make_unexpected(ok.error());
  if (parse_args)
    for (const PartPlan& plan : *parts) {
      if (plan.thread && plan.role == PartRole::shard) continue;  // the shard host checked it (resolve)
      if (!plan.program.empty()) continue;  // weir-epics's command line; its settings were checked above
      if (auto ok = parse_args(plan.args); !ok) {
        static const std::map<std::string, std::string> kNone;
        const auto* params = params_of(*pipeline, plan);
        return tl::make_unexpected(part_error(plan, with_setting(ok.error().what, params != nullptr ? *params : kNone)));
      }
    }
  if (for_run)  // every check passed: now the recorders' directories may be made
    for (const auto& r : pipeline->records)
      if (auto ok = check_recorder(r, true); !ok) return tl::make_unexpected(ok.error());
  return Loaded{std::move(*pipeline), std::move(*resolved), std::move(*parts), std::move(*recorders)};
}

Result<CheckedPipeline> check_pipeline(const std::string& file, const ArgsCheck& parse_args) {
  auto loaded = load_checked(file, parse_args, false);
  if (!loaded) return tl::make_unexpected(loaded.error());
  return CheckedPipeline{std::move(loaded->pipeline), std::move(loaded->resolved)};
}

}  // namespace weir::supervisor
