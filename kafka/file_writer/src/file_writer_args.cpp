// The file-writer's options from what a command line gives: routes parsed, seconds and MiB turned
// into ns and bytes, properties split.
#include "weir/kafka_file_writer/file_writer_args.hpp"

#include <utility>

#include <fmt/format.h>

namespace weir::kafka::fw {

namespace {

constexpr double kBytesPerMb = 1024.0 * 1024.0;
constexpr double kNsPerSecondReal = 1e9;

}  // namespace

core::Result<SourceRoute> parse_source_route(std::string_view text) {
  const std::size_t eq = text.find('=');
  if (text.empty() || eq == 0 || eq + 1 == text.size())
    return core::fail(core::Errc::invalid_argument, fmt::format("--source '{}': give SOURCE or SOURCE=CHANNEL", text));
  if (eq == std::string_view::npos) return SourceRoute{std::string(text), ""};
  return SourceRoute{std::string(text.substr(0, eq)), std::string(text.substr(eq + 1))};
}

core::Result<FileWriterOptions> writer_options(const FileWriterArgs& a, const std::string& name,
                                               const rec::RecordOptions& record) {
  FileWriterOptions o;
  o.name = name;
  o.brokers = a.brokers;
  o.topics = a.topics;
  for (const std::string& s : a.sources) {
    auto route = parse_source_route(s);
    if (!route) return tl::make_unexpected(route.error());
    o.sources.push_back(std::move(*route));
  }
  if (o.sources.empty())
    return core::fail(core::Errc::invalid_argument, "--from-kafka: name the se00 sources to record (--source NAME ...)");
  if (o.topics.empty()) return core::fail(core::Errc::invalid_argument, "--from-kafka: no --topic");
  o.control_topic = a.control_topic;
  o.service_id = a.service_id;
  o.grace_ns = static_cast<std::int64_t>(a.grace_s * kNsPerSecondReal);
  o.connect_timeout_ns = static_cast<std::int64_t>(a.connect_timeout_s * kNsPerSecondReal);
  o.duration_s = record.duration_s;
  o.runs = a.runs;
  o.ring_blocks = a.ring_blocks;
  o.arena_bytes = static_cast<std::uint64_t>(a.arena_mb * kBytesPerMb);
  o.from_newest = a.newest;
  for (const std::string& t : a.properties) {
    auto p = kafka::parse_property(t);
    if (!p) return tl::make_unexpected(p.error());
    o.properties.push_back(std::move(*p));
  }
  o.record = record;
  if (!a.control_topic.empty() && record.duration_s > 0)
    return core::fail(core::Errc::invalid_argument, "--duration: runs end by run stop messages with --control-topic");
  return o;
}

}  // namespace weir::kafka::fw
