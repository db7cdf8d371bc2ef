// Client: posts requests to a partition's ann service through the arena and sleeps for the answer.
#include "weir/ann/client.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <vector>

#include "weir/ann/protocol.hpp"
#include "weir/ann/service.hpp"
#include "weir/core/clock.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/signals.hpp"

namespace weir::ann {

namespace {

constexpr std::int64_t kKeyWaitNs = 100'000'000;  // longest wait for a request key's slot or row held by another writer

std::atomic<std::uint64_t> g_serial{0};  // numbers this process's clients: ann/PART/q/<pid>.<n>

}  // namespace

struct Client::State {
  State(const core::Arena& a, std::string_view p, core::Watcher w)
      : arena(&a), kv(a), vectors(a), watcher(std::move(w)), part(p) {}
  const core::Arena* arena;
  core::KvStore kv;
  core::VectorStore vectors;
  core::Watcher watcher;
  std::string part;
  std::string where;
  std::string request_key;
  std::string answer_key;
  std::uint64_t request_mask = 0;  // Bloom mask and exact id of the label ann/PART/q
  std::uint64_t request_ids = 0;
  std::uint32_t service_pid = 0;
  std::uint32_t dim = 0;
  std::uint64_t next_id = 1;
  std::vector<std::byte> value;    // requests out, answers in

  /// Posts the request (the request key exists), then sleeps until the answer with its id arrives.
  core::Result<std::size_t> exchange(const Request& base, std::string_view like, const QueryOptions& options,
                                     std::span<core::VectorHit> out, AnswerInfo* info);
  [[nodiscard]] std::string start_hint() const {
    const std::string& name = arena->location().path.empty() || arena->location().backing == core::Backing::shm
                                  ? arena->location().name
                                  : arena->location().path;
    return "start it with `weir ann " + name + " " + part + "`";
  }
};

Client::Client(std::unique_ptr<State> state) noexcept : state_(std::move(state)) {}
Client::Client(Client&&) noexcept = default;
Client& Client::operator=(Client&&) noexcept = default;

Client::~Client() {
  if (!state_) return;
  (void)state_->kv.del(state_->request_key);
  (void)state_->kv.del(state_->answer_key);
}

core::Result<Client> Client::open(const core::Arena& arena, std::string_view part) {
  const std::string where = arena.location().describe();
  const std::string start_hint = "start it with `weir ann " +
                                 (arena.location().backing == core::Backing::shm || arena.location().path.empty()
                                      ? arena.location().name
                                      : arena.location().path) +
                                 " " + std::string(part) + "`";
  const core::VectorStore vectors(arena);
  if (vectors.dim() == 0) return core::fail(core::Errc::invalid_argument, where + " has no vectors");
  if (arena.read_only())
    return core::fail(core::Errc::permission_denied, "asking the ann service needs a writable mapping of " + where);
  core::KvStore kv(arena);
  ServiceStatus status{};
  core::ValueInfo info;
  const auto bytes = std::as_writable_bytes(std::span(&status, 1));
  const core::KvStatus got = kv.get(status_key(part), bytes, info);
  const auto decoded = got == core::KvStatus::ok ? decode_status(std::span<const std::byte>(bytes.data(), info.length))
                                                 : std::nullopt;
  if (!decoded)
    return core::fail(core::Errc::not_found, "no ann service for partition '" + std::string(part) + "' in " + where + "; " + start_hint);
  if (decoded->state == static_cast<std::uint8_t>(ServiceState::stopped) || !pid_alive(decoded->pid))
    return core::fail(core::Errc::not_found, "the ann service for partition '" + std::string(part) + "' in " + where +
                                                 " (pid " + std::to_string(decoded->pid) + ") is not running; " + start_hint);
  if (decoded->dim != vectors.dim())
    return core::fail(core::Errc::layout_mismatch, "the ann service for partition '" + std::string(part) + "' in " + where +
                                                       " indexes vectors of " + std::to_string(decoded->dim) +
                                                       " floats, the arena holds " + std::to_string(vectors.dim()));

  auto watcher = core::Watcher::create(arena);
  if (!watcher) return tl::make_unexpected(watcher.error());
  if (auto g = watcher->subscribe_label(answer_label(part)); !g) return tl::make_unexpected(g.error());
  auto state = std::make_unique<State>(arena, part, std::move(*watcher));
  state->where = where;
  state->service_pid = decoded->pid;
  state->dim = vectors.dim();
  const auto pid = static_cast<std::uint32_t>(::getpid());
  const std::uint64_t n = g_serial.fetch_add(1, std::memory_order_relaxed);  // a ticket: orders nothing
  state->request_key = request_key(part, pid, n);
  state->answer_key = answer_key(part, pid, n);
  if (state->request_key.size() > kv.key_bytes())
    return core::fail(core::Errc::invalid_argument, "request key '" + state->request_key + "' is longer than the " +
                                                        std::to_string(kv.key_bytes()) + "-byte keys of " + where);
  core::GroupTable groups(arena);
  auto request_id = groups.label_id(request_label(part));
  if (!request_id) return tl::make_unexpected(request_id.error());
  state->request_mask = core::label_mask(request_label(part));
  state->request_ids = std::uint64_t{1} << *request_id;
  const std::string labels[] = {answer_label(part)};
  if (auto l = core::set_labels(arena, state->answer_key, labels); !l) return tl::make_unexpected(l.error());
  state->value.resize(std::max<std::size_t>(kv.value_bytes(), sizeof(Request)));
  return Client(std::move(state));
}

const std::string& Client::part() const noexcept { return state_->part; }
std::uint32_t Client::dim() const noexcept { return state_->dim; }

core::Result<std::size_t> Client::search(std::span<const float> query, const QueryOptions& options,
                                         std::span<core::VectorHit> out, AnswerInfo* info) {
  State& s = *state_;
  if (query.size() != s.dim)
    return core::fail(core::Errc::invalid_argument, "the query has " + std::to_string(query.size()) +
                                                        " floats, the vectors of " + s.where + " have " + std::to_string(s.dim));
  for (const float x : query)
    if (!std::isfinite(x)) return core::fail(core::Errc::invalid_argument, "the query holds NaN or infinity");
  const core::VectorStatus set = s.vectors.set_wait(s.request_key, query, kKeyWaitNs);
  if (set != core::VectorStatus::ok)
    return core::fail(core::Errc::io_error, "writing the query vector to '" + s.request_key + "' in " + s.where + ": " +
                                                core::vector_status_text(set));
  Request request{};
  request.kind = static_cast<std::uint8_t>(QueryKind::vector);
  return s.exchange(request, {}, options, out, info);
}

core::Result<std::size_t> Client::search_like(std::string_view like, const QueryOptions& options,
                                              std::span<core::VectorHit> out, AnswerInfo* info) {
  State& s = *state_;
  if (like.empty() || like.size() > s.kv.key_bytes() || sizeof(Request) + like.size() > s.value.size())
    return core::fail(core::Errc::invalid_argument, "key '" + std::string(like) + "' cannot name a key of " + s.where);
  core::KeyHandle handle;
  if (const core::KvStatus st = s.kv.resolve(s.request_key, handle, true); st != core::KvStatus::ok)
    return core::fail(core::Errc::io_error, "creating '" + s.request_key + "' in " + s.where + ": " + core::kv_status_text(st));
  Request request{};
  request.kind = static_cast<std::uint8_t>(QueryKind::like);
  return s.exchange(request, like, options, out, info);
}

core::Result<std::size_t> Client::State::exchange(const Request& base, std::string_view like, const QueryOptions& options,
                                                  std::span<core::VectorHit> out, AnswerInfo* info) {
  State& s = *this;
  if (options.k == 0 || options.k > kMaxHits || answer_bytes(options.k) > s.kv.value_bytes())
    return core::fail(core::Errc::invalid_argument, "k " + std::to_string(options.k) + " is out of range 1.." +
                                                        std::to_string(std::min<std::size_t>(kMaxHits, (s.kv.value_bytes() - sizeof(AnswerHeader)) / sizeof(AnswerHit))) +
                                                        " for " + s.where);
  // The key was (re)created by the vector or resolve above: give it the request label, then the
  // request, whose write pulses the service.
  if (const core::KvStatus st = s.kv.set_labels(s.request_key, s.request_mask, s.request_ids); st != core::KvStatus::ok)
    return core::fail(core::Errc::io_error, "labelling '" + s.request_key + "' in " + s.where + ": " + core::kv_status_text(st));
  Request request = base;
  request.id = s.next_id++;
  request.k = options.k;
  request.ef = options.ef;
  const std::size_t bytes = encode_request(request, like, s.value);
  const core::KvStatus posted = s.kv.set_wait(s.request_key, std::span<const std::byte>(s.value.data(), bytes),
                                              core::ValueType::bytes, kKeyWaitNs);
  if (posted != core::KvStatus::ok)
    return core::fail(core::Errc::io_error, "posting the request '" + s.request_key + "' in " + s.where + ": " +
                                                core::kv_status_text(posted));
  const std::int64_t start_ns = core::monotonic_ns();
  const std::int64_t deadline_ns = start_ns + options.timeout_ns;
  for (;;) {
    core::ValueInfo vi;
    if (s.kv.get(s.answer_key, s.value, vi) == core::KvStatus::ok) {
      const std::span<const std::byte> answer(s.value.data(), vi.length);
      if (const auto header = decode_answer(answer); header && header->id == request.id) {
        const auto status = static_cast<AnswerStatus>(header->status);
        if (status != AnswerStatus::ok)
          return core::fail(status == AnswerStatus::bad_request ? core::Errc::invalid_argument : core::Errc::not_found,
                            std::string("the ann service of '") + s.part + "' in " + s.where + " answered " +
                                answer_status_name(status) +
                                (like.empty() ? std::string() : " for key '" + std::string(like) + "'"));
        const std::size_t count = std::min<std::size_t>(header->count, out.size());
        for (std::size_t i = 0; i < count; ++i) {
          const AnswerHit hit = answer_hit(answer, static_cast<std::uint32_t>(i));
          out[i] = core::VectorHit{hit.slot, hit.generation, hit.score};
        }
        if (info != nullptr) *info = AnswerInfo{header->indexed, header->lag, header->service_ns};
        return count;
      }
    }
    const std::int64_t left_ns = deadline_ns - core::monotonic_ns();
    if (left_ns <= 0) break;
    (void)s.watcher.wait(left_ns);  // any answer of the partition wakes us; ours is checked above
  }
  (void)s.kv.del(s.request_key);  // a vector query's row must not linger in exact searches
  if (!pid_alive(s.service_pid))
    return core::fail(core::Errc::not_found, "the ann service of '" + s.part + "' in " + s.where + " (pid " +
                                                 std::to_string(s.service_pid) + ") is gone; " + s.start_hint());
  return core::fail(core::Errc::io_error, "no answer from the ann service of '" + s.part + "' in " + s.where +
                                              " (pid " + std::to_string(s.service_pid) + ") after " +
                                              std::to_string((core::monotonic_ns() - start_ns) / 1'000'000) + " ms");
}

}  // namespace weir::ann
