// The file-writer's receivers: the data topics' sources into the staging arena.
#include "staging_feed.hpp"

#include <utility>

#include <fmt/format.h>

namespace weir::kafka::fw {

StagingFeed::~StagingFeed() { (void)stop(); }

core::Result<void> StagingFeed::start(const core::Arena& staging, const FileWriterOptions& o, const Notice& notice) {
  notice_ = notice;
  // One consumer per data topic, taking every source into its channel (a source not on a topic never
  // makes its channel there).
  for (const std::string& topic : o.topics) {
    kafka::ReceiverOptions r;
    r.name = fmt::format("{}-{}", o.name, options_.size());
    r.brokers = o.brokers;
    r.topic = topic;
    for (const SourceRoute& route : o.sources)
      r.routes.push_back({route.source, route.channel.empty() ? route.source : route.channel});
    r.ring_blocks = o.ring_blocks;
    r.from_newest = o.from_newest;
    r.properties = o.properties;
    if (auto ok = kafka::validate(r); !ok)
      return core::fail(ok.error().code, fmt::format("topic '{}': {}", topic, ok.error().what));
    options_.push_back(std::move(r));
  }
  results_.resize(options_.size(), core::fail(core::Errc::not_ready, "not run"));
  threads_.reserve(options_.size());
  for (std::size_t i = 0; i < options_.size(); ++i)
    threads_.emplace_back([this, &staging, i] { results_[i] = kafka::run_receiver(staging, options_[i], stop_); });
  return {};
}

std::vector<kafka::ReceiverReport> StagingFeed::stop() {
  stop_.store(true, std::memory_order_relaxed);
  for (std::thread& t : threads_) t.join();
  threads_.clear();
  std::vector<kafka::ReceiverReport> out;
  for (auto& r : results_) {
    if (r) {
      out.push_back(*r);
    } else if (r.error().code != core::Errc::not_ready) {
      notice_(r.error().what);
    }
  }
  results_.clear();
  return out;
}

}  // namespace weir::kafka::fw
