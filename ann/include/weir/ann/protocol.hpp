#pragma once
// The ann service's protocol through the arena: the values of three kinds of key, declared once.
// Design: docs/design/ann.md.
//
//   ann/PART/service      ServiceStatus: who serves PART (pid), its parameters and progress
//   ann/PART/q/<pid>.<n>  Request (+ the `like` key's name); for a vector query, this key's vector
//                         row is the query and the service deletes the key once it has read it.
//                         Labelled ann/PART/q: writing the request pulses the service's watcher.
//   ann/PART/r/<pid>.<n>  AnswerHeader + count AnswerHit. Labelled ann/PART/r: the asker sleeps on
//                         that group until the answer carrying its request's id is there.
//
// Values are plain bytes in native byte order (the arena never leaves the host), copied in and out
// of the key's seqlock as a whole, so these structs hold no atomics. Every value starts with a magic
// and kProtocolVersion; a reader refuses any other. A layout change bumps kProtocolVersion, the
// static_asserts and the golden test (tests/ann/protocol_test.cpp) in the same commit.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

namespace weir::ann {

inline constexpr std::uint16_t kProtocolVersion = 1;        // bump on ANY change below
inline constexpr std::uint32_t kRequestMagic = 0x514E'4E41U;  // "ANNQ" in memory order
inline constexpr std::uint32_t kAnswerMagic = 0x524E'4E41U;   // "ANNR"
inline constexpr std::uint32_t kStatusMagic = 0x534E'4E41U;   // "ANNS"
inline constexpr std::uint32_t kMaxHits = 256;               // largest k one request may ask for

enum class QueryKind : std::uint8_t {
  vector = 1,  // the query is the request key's vector row
  like = 2,    // the query is the vector of the key named after the Request
};

// A request key's value: this header, then like_bytes of key name (kind like).
struct Request {            // off size
  std::uint32_t magic;      //   0   4  kRequestMagic
  std::uint16_t version;    //   4   2  kProtocolVersion
  std::uint8_t kind;        //   6   1  QueryKind
  std::uint8_t reserved0;   //   7   1  zero
  std::uint64_t id;         //   8   8  the asker's serial; the answer carries it back
  std::uint32_t k;          //  16   4  hits wanted, 1..kMaxHits
  std::uint32_t ef;         //  20   4  HNSW search breadth; 0: the service's default
  std::uint32_t like_bytes; //  24   4  kind like: length of the key name after this header
  std::uint32_t reserved1;  //  28   4  zero
};
static_assert(std::is_standard_layout_v<Request> && std::is_trivially_copyable_v<Request>);
static_assert(sizeof(Request) == 32 && alignof(Request) == 8);
static_assert(offsetof(Request, kind) == 6 && offsetof(Request, id) == 8 && offsetof(Request, k) == 16);
static_assert(offsetof(Request, ef) == 20 && offsetof(Request, like_bytes) == 24);

enum class AnswerStatus : std::uint8_t {
  ok = 0,
  bad_request = 1,  // k out of range, or an answer of k hits would not fit the arena's value_bytes
  no_query = 2,     // the query vector was gone (request key deleted, or `like` key missing)
  no_vector = 3,    // the `like` key holds no vector (or a torn one)
  not_finite = 4,   // the query holds NaN or infinity
  failed = 5,       // the index refused the search (out of memory)
};

// An answer key's value: this header, then count AnswerHit, best first.
struct AnswerHeader {         // off size
  std::uint32_t magic;        //   0   4  kAnswerMagic
  std::uint16_t version;      //   4   2  kProtocolVersion
  std::uint8_t status;        //   6   1  AnswerStatus
  std::uint8_t reserved0;     //   7   1  zero
  std::uint64_t id;           //   8   8  the request's id
  std::uint32_t count;        //  16   4  hits that follow
  std::uint32_t reserved1;    //  20   4  zero
  std::uint64_t indexed;      //  24   8  vectors in the index when it answered
  std::uint64_t lag;          //  32   8  changes of the partition known but not indexed yet
  std::int64_t service_ns;    //  40   8  from reading the request to writing the answer
};
static_assert(std::is_standard_layout_v<AnswerHeader> && std::is_trivially_copyable_v<AnswerHeader>);
static_assert(sizeof(AnswerHeader) == 48 && alignof(AnswerHeader) == 8);
static_assert(offsetof(AnswerHeader, status) == 6 && offsetof(AnswerHeader, id) == 8);
static_assert(offsetof(AnswerHeader, count) == 16 && offsetof(AnswerHeader, indexed) == 24);
static_assert(offsetof(AnswerHeader, lag) == 32 && offsetof(AnswerHeader, service_ns) == 40);

struct AnswerHit {            // off size
  std::uint32_t slot;         //   0   4  KV slot of the hit's key
  std::uint32_t generation;   //   4   4  the key's insert generation when indexed (VectorStore::key_of checks it)
  float score;                //   8   4  cosine similarity, dot product or L2 distance
};
static_assert(std::is_standard_layout_v<AnswerHit> && sizeof(AnswerHit) == 12 && alignof(AnswerHit) == 4);
static_assert(offsetof(AnswerHit, generation) == 4 && offsetof(AnswerHit, score) == 8);

enum class ServiceState : std::uint8_t {
  building = 1,  // indexing the partition's current vectors; not answering yet
  serving = 2,   // answering requests and following changes
  stopped = 3,   // left cleanly
};

// The status key's value, rewritten by the service as it goes (at most every kStatusPeriodNs).
struct ServiceStatus {             // off size
  std::uint32_t magic;             //   0   4  kStatusMagic
  std::uint16_t version;           //   4   2  kProtocolVersion
  std::uint8_t state;              //   6   1  ServiceState
  std::uint8_t metric;             //   7   1  core::Metric
  std::uint32_t pid;               //   8   4  the service's process
  std::uint32_t dim;               //  12   4  floats per vector
  std::uint32_t m;                 //  16   4  HNSW links per node
  std::uint32_t ef_construction;   //  20   4  HNSW build breadth
  std::uint32_t ef;                //  24   4  default search breadth
  std::uint32_t threads;           //  28   4  build threads
  std::uint64_t indexed;           //  32   8  vectors in the index
  std::int64_t started_ns;         //  40   8  CLOCK_REALTIME at start
  std::int64_t updated_ns;         //  48   8  CLOCK_REALTIME of this write
  std::int64_t build_ns;           //  56   8  time the initial build took
  std::uint64_t inserts;           //  64   8  vectors added or replaced since start (build included)
  std::uint64_t deletes;           //  72   8  vectors removed since start
  std::uint64_t rescans;           //  80   8  full rescans after lost change-log entries
  std::uint64_t queries;           //  88   8  requests answered
};
static_assert(std::is_standard_layout_v<ServiceStatus> && std::is_trivially_copyable_v<ServiceStatus>);
static_assert(sizeof(ServiceStatus) == 96 && alignof(ServiceStatus) == 8);
static_assert(offsetof(ServiceStatus, pid) == 8 && offsetof(ServiceStatus, threads) == 28);
static_assert(offsetof(ServiceStatus, indexed) == 32 && offsetof(ServiceStatus, build_ns) == 56);
static_assert(offsetof(ServiceStatus, queries) == 88);

/// Bytes of an answer of k hits.
[[nodiscard]] constexpr std::size_t answer_bytes(std::uint32_t k) noexcept {
  return sizeof(AnswerHeader) + std::size_t{k} * sizeof(AnswerHit);
}

// ---- key names -------------------------------------------------------------------------------------

/// "ann/PART/service".
[[nodiscard]] std::string status_key(std::string_view part);
/// "ann/PART/q": the label of every request key.
[[nodiscard]] std::string request_label(std::string_view part);
/// "ann/PART/r": the label of every answer key.
[[nodiscard]] std::string answer_label(std::string_view part);
/// "ann/PART/q/" and "ann/PART/r/": the prefixes of request and answer keys.
[[nodiscard]] std::string request_prefix(std::string_view part);
[[nodiscard]] std::string answer_prefix(std::string_view part);
/// "ann/PART/q/<pid>.<n>" and "ann/PART/r/<pid>.<n>".
[[nodiscard]] std::string request_key(std::string_view part, std::uint32_t pid, std::uint64_t n);
[[nodiscard]] std::string answer_key(std::string_view part, std::uint32_t pid, std::uint64_t n);

// ---- values ----------------------------------------------------------------------------------------

/// Writes request + like into out; returns the bytes used, 0 if out is too small.
[[nodiscard]] std::size_t encode_request(const Request& request, std::string_view like, std::span<std::byte> out) noexcept;
/// Reads a request value; nullopt when the magic, version, kind or length do not match. like points
/// into bytes.
[[nodiscard]] std::optional<Request> decode_request(std::span<const std::byte> bytes, std::string_view& like) noexcept;
/// Reads an answer's header; nullopt unless magic and version match and the hits fit in bytes.
[[nodiscard]] std::optional<AnswerHeader> decode_answer(std::span<const std::byte> bytes) noexcept;
/// Reads hit i of an answer whose header decode_answer accepted.
[[nodiscard]] AnswerHit answer_hit(std::span<const std::byte> bytes, std::uint32_t i) noexcept;
/// Reads a status value; nullopt unless magic and version match.
[[nodiscard]] std::optional<ServiceStatus> decode_status(std::span<const std::byte> bytes) noexcept;
/// "ok", "bad_request", ... for messages.
[[nodiscard]] const char* answer_status_name(AnswerStatus status) noexcept;
/// "building", "serving", "stopped", or "unknown".
[[nodiscard]] const char* service_state_name(std::uint8_t state) noexcept;

}  // namespace weir::ann
