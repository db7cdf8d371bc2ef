#include "weir/ledger/run_record.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "durable_file.hpp"

namespace weir::ledger {

namespace {

using nlohmann::json;

core::Error io_failure(const std::filesystem::path& path, const std::string& what, int error_number) {
  return detail::io_failure("run record", path, what, error_number);
}

}  // namespace

ChannelMark& RunRecord::channel(std::string_view name) {
  const auto it = std::find_if(channels.begin(), channels.end(), [&](const ChannelMark& c) { return c.channel == name; });
  if (it != channels.end()) return *it;
  ChannelMark mark;
  mark.channel = std::string(name);
  channels.push_back(std::move(mark));
  return channels.back();
}

const ChannelMark* RunRecord::find_channel(std::string_view name) const noexcept {
  const auto it = std::find_if(channels.begin(), channels.end(), [&](const ChannelMark& c) { return c.channel == name; });
  return it != channels.end() ? &*it : nullptr;
}

PartMark& RunRecord::part(std::string_view name) {
  const auto it = std::find_if(parts.begin(), parts.end(), [&](const PartMark& p) { return p.name == name; });
  if (it != parts.end()) return *it;
  PartMark mark;
  mark.name = std::string(name);
  parts.push_back(std::move(mark));
  return parts.back();
}

std::filesystem::path run_record_path(const std::filesystem::path& dir, std::string_view prefix, std::uint64_t run) {
  char number[32];
  std::snprintf(number, sizeof number, "%06llu", static_cast<unsigned long long>(run));
  return dir / (std::string(prefix) + "_run" + number + kRunRecordSuffix);
}

std::string to_json(const RunRecord& r) {
  json j;
  j["format"] = r.format;
  j["run"] = r.run;
  j["arena"] = r.arena;
  j["arena_created_ns"] = r.arena_created_ns;
  j["pipeline"] = r.pipeline;
  j["writer"] = r.writer;
  j["started_ns"] = r.started_ns;
  j["stopped_ns"] = r.stopped_ns;
  j["fsync"] = r.fsync;
  j["synced_ns"] = r.synced_ns;
  j["channels"] = json::array();
  for (const ChannelMark& c : r.channels)
    j["channels"].push_back({{"channel", c.channel},
                             {"first_sequence", c.first_sequence},
                             {"written", c.written},
                             {"dropped_at_source", c.dropped_at_source},
                             {"final", c.final},
                             {"arena_created_ns", c.arena_created_ns}});
  j["parts"] = json::array();
  for (const PartMark& p : r.parts)
    j["parts"].push_back({{"name", p.name},
                          {"role", p.role},
                          {"state", p.state},
                          {"last_exit", p.last_exit},
                          {"restarts", p.restarts},
                          {"essential", p.essential}});
  j["faults"] = json::array();
  for (const Fault& f : r.faults)
    j["faults"].push_back({{"part", f.part},
                           {"reason", f.reason},
                           {"what", f.what},
                           {"errno", f.error_number},
                           {"realtime_ns", f.realtime_ns}});
  if (!r.pipeline_at_end.empty()) j["pipeline_at_end"] = r.pipeline_at_end;
  if (!r.config_events.empty()) {
    j["config_events"] = json::array();
    for (const ConfigEvent& e : r.config_events)
      j["config_events"].push_back({{"realtime_ns", e.realtime_ns}, {"what", e.what}, {"pipeline", e.pipeline}});
  }
  if (!r.deleted.empty()) {
    j["deleted"] = json::array();
    for (const DeletedFile& d : r.deleted)
      j["deleted"].push_back({{"file", d.file}, {"segment", d.segment}, {"bytes", d.bytes}, {"sha256", d.sha256},
                              {"reason", d.reason}, {"part", d.part}, {"deleted_ns", d.deleted_ns}});
  }
  return j.dump(2) + "\n";
}

core::Result<RunRecord> from_json(std::string_view text, const std::string& where) {
  const json j = json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return core::fail(core::Errc::invalid_argument, "run record " + where + ": not a JSON object");
  RunRecord r;
  try {
    r.format = j.value("format", "");
    if (r.format != kRunRecordFormat)
      return core::fail(core::Errc::invalid_argument, "run record " + where + ": format '" + r.format +
                                                          "', this build reads '" + kRunRecordFormat + "'");
    r.run = j.value("run", std::uint64_t{0});
    r.arena = j.value("arena", "");
    r.arena_created_ns = j.value("arena_created_ns", std::uint64_t{0});
    r.pipeline = j.value("pipeline", "");
    r.writer = j.value("writer", "");
    r.started_ns = j.value("started_ns", std::uint64_t{0});
    r.stopped_ns = j.value("stopped_ns", std::uint64_t{0});
    r.fsync = j.value("fsync", "");
    r.synced_ns = j.value("synced_ns", std::uint64_t{0});
    for (const json& c : j.value("channels", json::array()))
      r.channels.push_back(ChannelMark{c.value("channel", ""), c.value("first_sequence", std::uint64_t{0}),
                                       c.value("written", std::uint64_t{0}), c.value("dropped_at_source", std::uint64_t{0}),
                                       c.value("final", false), c.value("arena_created_ns", std::uint64_t{0})});
    for (const json& p : j.value("parts", json::array()))
      r.parts.push_back(PartMark{p.value("name", ""), p.value("role", ""), p.value("state", ""), p.value("last_exit", ""),
                                 p.value("restarts", std::uint64_t{0}), p.value("essential", false)});
    for (const json& f : j.value("faults", json::array()))
      r.faults.push_back(Fault{f.value("part", ""), f.value("reason", ""), f.value("what", ""), f.value("errno", 0),
                               f.value("realtime_ns", std::uint64_t{0})});
    r.pipeline_at_end = j.value("pipeline_at_end", "");
    for (const json& e : j.value("config_events", json::array()))
      r.config_events.push_back(ConfigEvent{e.value("realtime_ns", std::uint64_t{0}), e.value("what", ""),
                                            e.value("pipeline", "")});
    for (const json& d : j.value("deleted", json::array()))
      r.deleted.push_back(DeletedFile{d.value("file", ""), d.value("segment", std::uint64_t{0}), d.value("bytes", std::uint64_t{0}),
                                      d.value("sha256", ""), d.value("reason", ""), d.value("part", ""),
                                      d.value("deleted_ns", std::uint64_t{0})});
  } catch (const json::exception& e) {
    return core::fail(core::Errc::invalid_argument, "run record " + where + ": " + e.what());
  }
  return r;
}

core::Result<std::optional<RunRecord>> read_run_record(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) {
    if (errno == ENOENT) return std::optional<RunRecord>{};
    return tl::make_unexpected(io_failure(path, "cannot read", errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  auto record = from_json(text.str(), path.string());
  if (!record) return tl::make_unexpected(record.error());
  return std::optional<RunRecord>(std::move(*record));
}

core::Result<void> update_run_record(const std::filesystem::path& path, const std::function<void(RunRecord&)>& change) {
  auto lock = detail::lock_file(path, "run record");
  if (!lock) return tl::make_unexpected(lock.error());
  auto existing = read_run_record(path);
  if (!existing) return tl::make_unexpected(existing.error());
  RunRecord record = existing->has_value() ? std::move(**existing) : RunRecord{};
  change(record);
  return detail::write_atomically(path, to_json(record), "run record");  // the lock is released when `lock` closes
}

}  // namespace weir::ledger
