#pragma once
// A consistent copy of a whole arena in one HDF5 file, taken while writers keep writing: every
// key (type, epoch, labels, value), the last blocks of every channel with their descriptors,
// vectors, signal groups, the consumer table and the header. Layout: docs/design/snapshots.md.
#include <cstdint>
#include <string>

#include "weir/core/arena.hpp"
#include "weir/core/error.hpp"

namespace weir::rec {

inline constexpr char kSnapshotFormat[] = "weir-snapshot 1";        // the root weir_format attribute
inline constexpr int kSnapshotAttempts = 64;                        // copies of one slot tried before it counts busy
inline constexpr std::int64_t kSnapshotBusyWaitNs = 100'000'000;    // a slot held this long by a writer counts busy
inline constexpr std::uint64_t kSnapshotBufferBytes = 64ULL << 20;  // channel samples copied per HDF5 write

struct SnapshotOptions {
  std::uint64_t blocks = 0;          // last blocks of each channel to copy; 0 or more than the ring: the whole ring
  bool overwrite = false;            // replace an existing file of that name (otherwise refused)
  bool durable = true;               // fsync the file and its directory before and after the rename
  int attempts = kSnapshotAttempts;  // torn copies of one slot retried this often
  std::int64_t busy_wait_ns = kSnapshotBusyWaitNs;    // how long a held slot is waited for
  std::uint64_t buffer_bytes = kSnapshotBufferBytes;  // channel copy buffer (at least one block is used)
};

/// What a snapshot holds and what it cost. Every slot is accounted for: copied, busy or torn.
struct SnapshotStats {
  std::uint64_t keys = 0;            // rows in /keys (busy and torn ones included)
  std::uint64_t keys_busy = 0;       // held by a writer past busy_wait_ns, or changing faster than a copy
  std::uint64_t keys_torn = 0;       // left torn by a dead writer: recorded, value not copied
  std::uint64_t copies_retried = 0;  // slot copies a writer tore and that were taken again
  std::uint64_t writers_met = 0;     // slots found with a writer inside, waited for (or recorded busy)
  std::uint64_t channels = 0;
  std::uint64_t blocks = 0;  // channel blocks copied
  std::uint64_t samples = 0;
  std::uint64_t blocks_overwritten = 0;  // in the window but overwritten by the writer before they were copied
  std::uint64_t vectors = 0;             // rows in /vectors (busy and torn ones included)
  std::uint64_t vectors_busy = 0;
  std::uint64_t vectors_torn = 0;
  std::uint64_t groups = 0;
  std::uint64_t consumers = 0;
  std::uint64_t bytes_copied = 0;  // payload bytes read out of the arena (values, samples, vectors)
  std::uint64_t file_bytes = 0;    // size of the finished file
  std::uint64_t elapsed_ns = 0;    // the whole call
  std::uint64_t sync_ns = 0;       // of which fsync of the file and its directory
};

/// Writes a snapshot of `arena` to `path`: first to `path.tmp.<pid>`, renamed to `path` only once
/// complete and closed, so `path` is never a partial file. An existing `path` is refused unless
/// options.overwrite. Each key slot and vector row is copied under its seqlock and validated; a
/// torn copy is retried up to options.attempts times, and a slot a writer holds past
/// options.busy_wait_ns is recorded as busy (with the holder's pid), never skipped. Channel blocks
/// are validated one by one; a block overwritten while copied is listed in the channel's `skipped`
/// table. Writers are never stopped or slowed. Fails, removing the temporary file, with an error
/// naming the arena and the file. Thread: one per process (the HDF5 library is serial).
[[nodiscard]] core::Result<SnapshotStats> snapshot_to_hdf5(const core::Arena& arena, const std::string& path,
                                                           const SnapshotOptions& options = {});

}  // namespace weir::rec
