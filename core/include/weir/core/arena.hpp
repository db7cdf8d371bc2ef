#pragma once
// An arena: one shared mapping that any process creates or attaches by name. Passive: no daemon.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "weir/core/arena_layout.hpp"
#include "weir/core/assert.hpp"
#include "weir/core/error.hpp"

namespace weir::core {

enum class Backing : std::uint8_t { shm, file, memfd, fd };

/// Where an arena lives, parsed from one string:
///   "NAME"          POSIX shm at /dev/shm/weir.NAME (the default, RAM-only)
///   "PATH" with '/' a mapped file (persistent; the file is the raw arena)
///   "memfd:NAME"    anonymous memfd, inherited by child processes (create only)
///   "fd:N"          an inherited descriptor, e.g. a parent's memfd (open only)
struct Location {
  Backing backing = Backing::shm;
  std::string name;  // the arena's name (the file's base name for files)
  std::string path;  // /dev/shm path, file path, or empty
  int fd = -1;       // for Backing::fd

  [[nodiscard]] static Result<Location> parse(std::string_view where);
  [[nodiscard]] std::string describe() const;  // "arena 'daq1'" or "arena file './run.arena'"
};

struct ArenaOptions {
  std::uint32_t slot_count = kDefaultSlotCount;
  std::uint32_t key_bytes = kDefaultKeyBytes;
  std::uint32_t value_bytes = kDefaultValueBytes;
  std::uint32_t max_probe = kDefaultMaxProbe;
  std::uint32_t channel_capacity = kDefaultChannelCapacity;
  std::uint64_t channel_data_bytes = kDefaultChannelDataBytes;
  std::uint32_t consumer_capacity = kDefaultConsumerCapacity;
  std::uint32_t vector_dim = kDefaultVectorDim;  // float32 per key's vector; 0 builds no vector partition
  std::uint32_t group_log_entries = kDefaultGroupLogEntries;
  std::uint32_t mode = kDefaultMode;  // 0600 unless a group mode is asked for
  bool replace_stale = false;         // create over a stale arena of the same name
  int numa_node = -1;                 // bind every page to this node before first touch (-1: no binding)
  bool prefault = false;              // touch every page at create (always done with a numa_node)
};

struct OpenOptions {
  bool read_only = false;                           // map PROT_READ; no attach row, no recovery
  std::int64_t ready_timeout_ns = kOpenReadyTimeoutNs;  // wait this long for a creator to finish
};

/// Computes and checks the geometry and region table for the options. Pure: no system calls.
[[nodiscard]] Result<void> plan_layout(const ArenaOptions& options, ArenaHeader& out);

class Arena {
 public:
  /// Creates and maps a new arena, fills its header, publishes the magic last.
  /// Fails if the name exists (stale ones only with replace_stale), or the geometry is absurd.
  /// Thread: any. The arena is attached by the caller on success.
  [[nodiscard]] static Result<Arena> create(std::string_view where, const ArenaOptions& options = {});

  /// Maps an existing arena and validates every header field against the mapping's real size.
  /// Refuses a truncated, foreign, corrupted or newer-version arena with Errc::layout_mismatch.
  [[nodiscard]] static Result<Arena> open(std::string_view where, const OpenOptions& options = {});

  /// Unlinks the arena's name (shm) or file. Processes that have it mapped keep their mapping.
  [[nodiscard]] static Result<void> remove(std::string_view where);

  Arena() = default;
  Arena(Arena&& other) noexcept;
  Arena& operator=(Arena&& other) noexcept;
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  ~Arena();

  /// Leaves the attach table and unmaps. Safe to call twice.
  void close() noexcept;

  /// msync of the whole mapping (meaningful for file-backed arenas). Thread: any.
  [[nodiscard]] Result<void> sync() const;

  [[nodiscard]] bool is_open() const noexcept { return base_ != nullptr; }
  [[nodiscard]] std::byte* base() const noexcept { return base_; }
  [[nodiscard]] std::uint64_t bytes() const noexcept { return bytes_; }
  [[nodiscard]] ArenaHeader& header() const noexcept { return *reinterpret_cast<ArenaHeader*>(base_); }
  [[nodiscard]] const Geometry& geometry() const noexcept { return header().geometry; }
  [[nodiscard]] std::byte* region(Region r) const noexcept {
    WEIR_ASSERT(r < Region::count, "Arena::region: no such region");
    return base_ + header().regions[static_cast<std::uint32_t>(r)].offset;
  }
  [[nodiscard]] const Location& location() const noexcept { return location_; }
  [[nodiscard]] bool read_only() const noexcept { return read_only_; }
  /// The descriptor behind the mapping (a memfd child processes can inherit as "fd:N").
  [[nodiscard]] int fd() const noexcept { return fd_; }

 private:
  Arena(Location location, int fd, std::byte* base, std::uint64_t bytes, bool read_only) noexcept;
  void attach() noexcept;
  void detach() noexcept;

  Location location_;
  int fd_ = -1;
  std::byte* base_ = nullptr;
  std::uint64_t bytes_ = 0;
  bool read_only_ = false;
  std::int32_t attach_row_ = -1;
};

/// The options that plan exactly this header's geometry (placement options left at defaults).
[[nodiscard]] ArenaOptions options_of(const ArenaHeader& header);

/// Validates a header against the real mapping size. Pure: reads only [base, base + mapped_bytes).
[[nodiscard]] Result<void> validate_header(const std::byte* base, std::uint64_t mapped_bytes,
                                           const std::string& what);

/// FNV-1a over the header's immutable bytes, as stored in header_checksum.
[[nodiscard]] std::uint64_t header_checksum(const ArenaHeader& header) noexcept;

/// Whether a process is alive (kill(pid, 0)); EPERM counts as alive.
[[nodiscard]] bool pid_alive(std::uint32_t pid) noexcept;

struct ArenaStatus {
  std::string location;     // as given to open
  std::string name;
  std::uint64_t bytes = 0;
  std::uint32_t creator_pid = 0;
  bool creator_alive = false;
  std::vector<std::uint32_t> attached;  // live pids in the attach table
  bool stale = false;       // creator dead and nobody attached
  std::uint64_t created_ns = 0;
  std::uint32_t mode = 0;
  std::uint32_t owner_uid = 0;
  Geometry geometry{};
  std::uint64_t live_keys = 0;
  std::uint64_t recovered_slots = 0;
  int numa_node = -1;       // node asked for at create, -1 none
  bool prefaulted = false;
  std::string numa_policy;  // policy the kernel reports for the arena's first page
  std::vector<int> numa_policy_nodes;
  int numa_page_node = -1;  // node actually holding the first page
  std::string error;        // set when the arena could not be validated
};

/// Opens read-only and reports on one arena. Thread: any.
[[nodiscard]] Result<ArenaStatus> inspect(std::string_view where);

/// Every weir arena in /dev/shm, valid or not (invalid ones carry `error`).
[[nodiscard]] std::vector<ArenaStatus> list_shm_arenas();

/// Live pids in the attach table (dead rows are reclaimed when the mapping is writable).
[[nodiscard]] std::vector<std::uint32_t> attached_pids(const Arena& arena);

}  // namespace weir::core
