// RequestServer: one request at a time, from the change log of the ann/PART/q group.
#include "request_server.hpp"

#include <algorithm>
#include <cstring>

#include "weir/core/clock.hpp"

namespace weir::ann::detail {

namespace {

constexpr std::int64_t kStopPollNs = 100'000'000;  // longest sleep before the request thread looks at its stop flag
constexpr std::int64_t kSpinNs = 20'000;           // spin before sleeping: a client's next request often follows at once
constexpr std::int64_t kAnswerWaitNs = 10'000'000; // longest wait for an answer key held by a reader-writer
// Searches of one request before it is answered `failed`: a search that meets inserts relinking its
// path, or finds only hits deleted meanwhile, can come back empty (seen once in 254 calls of a quick
// bench while the partition was rewritten); a second search after them finds the graph settled.
constexpr int kSearchAttempts = 3;

}  // namespace

RequestServer::RequestServer(const core::Arena& arena, std::string_view part, core::Watcher watcher, HnswIndex& index,
                             const PartitionFollower& follower, std::uint32_t default_ef,
                             const std::atomic<std::uint64_t>& lag)
    : arena_(&arena),
      kv_(arena),
      vectors_(arena),
      watcher_(std::move(watcher)),
      index_(&index),
      follower_(&follower),
      default_ef_(default_ef),
      lag_(&lag),
      request_prefix_(request_prefix(part)),
      answer_prefix_(answer_prefix(part)),
      key_(kv_.key_bytes()),
      value_(std::max<std::size_t>(kv_.value_bytes(), answer_bytes(1))),
      query_(vectors_.dim()),
      prepared_(vectors_.dim()),
      neighbours_(kMaxHits),
      served_(vectors_.rows()) {
  answer_key_.reserve(kv_.key_bytes());
}

void RequestServer::run(const std::atomic<bool>& stop) noexcept {
  while (!stop.load(std::memory_order_relaxed)) {  // a flag: orders nothing
    if (watcher_.wait(kStopPollNs, kSpinNs) == core::WaitStatus::timed_out) continue;
    const std::uint64_t lost = watcher_.drain([this](const core::Change& c) { serve(c.slot, c.generation); });
    if (lost != 0) rescan();
  }
}

void RequestServer::rescan() noexcept {
  const auto& header = arena_->geometry();
  for (std::uint32_t slot = 0; slot < header.slot_count; ++slot) {
    const auto* s = reinterpret_cast<const core::SlotHeader*>(arena_->region(core::Region::slots) +
                                                               std::uint64_t{slot} * header.slot_stride);
    serve(slot, s->generation.load(std::memory_order_acquire));
  }
}

AnswerStatus RequestServer::find_query(const Request& request, core::KeyHandle handle, std::string_view like) noexcept {
  core::VectorStatus got = core::VectorStatus::ok;
  if (static_cast<QueryKind>(request.kind) == QueryKind::vector) {
    got = vectors_.get(handle, query_);
    // At once, whatever was read: the query vector must never show in an exact search.
    const std::string_view key(key_.data(), key_.size());
    (void)kv_.del(key);
  } else {
    got = vectors_.get(like, query_);
  }
  switch (got) {
    case core::VectorStatus::ok: return AnswerStatus::ok;
    case core::VectorStatus::not_found:
    case core::VectorStatus::stale_handle:
    case core::VectorStatus::key_too_long:
    case core::VectorStatus::key_empty: return AnswerStatus::no_query;
    case core::VectorStatus::not_finite: return AnswerStatus::not_finite;
    case core::VectorStatus::no_vector:
    case core::VectorStatus::torn:
    case core::VectorStatus::busy:
    case core::VectorStatus::wrong_length:
    case core::VectorStatus::no_vectors:
    case core::VectorStatus::full:
    case core::VectorStatus::read_only:
    case core::VectorStatus::no_kernel: return AnswerStatus::no_vector;
  }
  return AnswerStatus::no_vector;
}

// Writes the hits after the answer header in value_; returns how many.
std::uint32_t RequestServer::search(const Request& request) noexcept {
  index_->prepare(query_, prepared_);
  const std::int64_t n = index_->search(prepared_, request.ef != 0 ? request.ef : default_ef_,
                                        std::span<Neighbour>(neighbours_.data(), request.k));
  if (n < 0) return 0;
  std::uint32_t count = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const Neighbour& nb = neighbours_[static_cast<std::size_t>(i)];
    AnswerHit hit{nb.slot, 0, nb.score};
    if (!follower_->indexed_generation(nb.slot, hit.generation)) continue;  // deleted since it was found
    std::memcpy(value_.data() + sizeof(AnswerHeader) + std::size_t{count} * sizeof(AnswerHit), &hit, sizeof hit);
    ++count;
  }
  return count;
}

void RequestServer::serve(std::uint32_t slot, std::uint32_t generation) noexcept {
  std::uint32_t length = 0;
  core::ValueInfo info;
  key_.resize(kv_.key_bytes());
  if (kv_.key_at(slot, key_, length, info) != core::KvStatus::ok) return;
  const std::string_view key(key_.data(), length);
  if (!key.starts_with(request_prefix_)) return;  // not a request key (or reused since)
  const core::KeyHandle handle{slot, generation};
  if (kv_.get(handle, value_, info) != core::KvStatus::ok) return;  // deleted or rewritten: its own entry follows
  if (slot < served_.size() && served_[slot].generation == generation && served_[slot].epoch == info.epoch) return;
  std::string_view like;
  const auto request = decode_request(std::span<const std::byte>(value_.data(), info.length), like);
  if (!request) return;  // a request key being set up (labels, vector row) before its request
  if (slot < served_.size()) served_[slot] = Served{generation, info.epoch};
  const std::int64_t start_ns = core::monotonic_ns();

  // like points into value_, which the answer overwrites: take the query out first.
  key_.resize(length);
  AnswerStatus status = find_query(*request, handle, like);
  if (status == AnswerStatus::ok && (request->k == 0 || request->k > kMaxHits || answer_bytes(request->k) > value_.size()))
    status = AnswerStatus::bad_request;
  std::uint32_t count = 0;
  if (status == AnswerStatus::ok) {
    for (int attempt = 0; attempt < kSearchAttempts && count == 0; ++attempt) count = search(*request);
    if (count == 0 && index_->live() != 0) status = AnswerStatus::failed;
  }
  AnswerHeader header{};
  header.magic = kAnswerMagic;
  header.version = kProtocolVersion;
  header.status = static_cast<std::uint8_t>(status);
  header.id = request->id;
  header.count = count;
  header.indexed = index_->live();
  header.lag = lag_->load(std::memory_order_relaxed);  // a figure for people: orders nothing
  header.service_ns = core::monotonic_ns() - start_ns;
  std::memcpy(value_.data(), &header, sizeof header);

  answer_key_.assign(answer_prefix_);
  answer_key_.append(key.substr(request_prefix_.size()));
  if (answer_key_.size() > kv_.key_bytes()) return;
  const core::KvStatus written = kv_.set_wait(answer_key_, std::span<const std::byte>(value_.data(), answer_bytes(count)),
                                              core::ValueType::bytes, kAnswerWaitNs);
  if (written != core::KvStatus::ok || status != AnswerStatus::ok) refused_.fetch_add(1, std::memory_order_relaxed);
  answered_.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace weir::ann::detail
