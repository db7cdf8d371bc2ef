#pragma once
// Throughput hooks of `weir bench recorder`: the recorder end to end (an arena channel, a writer
// thread, the recorder writing SWMR HDF5) against a bare HDF5 loop writing the same blocks to the
// same kind of file. Both write pre-generated blocks (f32 noise, or detector-like i16 codes) and
// report MB/s of sample data. Library
// weir::bench_suites (bench/), over the recorder's public API and weir::h5.
#include <cstdint>
#include <string>

#include "weir/core/error.hpp"
#include "weir/recorder/format.hpp"
#include "weir/recorder/recorder.hpp"

namespace weir::bench {

struct RecorderBenchOptions {
  std::string dir = "/tmp";            // where the files go; they are removed afterwards
  std::uint32_t channels = 1;          // 1 and 8 are the measured cases
  std::uint32_t block_bytes = 4096;    // f32 samples: block_bytes / 4 per block (i16: / 2)
  std::uint64_t blocks = 8192;         // per channel
  std::uint32_t flush_ms = rec::kDefaultFlushMs;
  bool detector = false;               // i16 detector codes (pulses on a baseline, a few LSB of noise), not f32 noise
  codec::Codec codec{};                // the recorder's codec for the data (bench_record only)
  unsigned encode_threads = 0;         // the recorder's encoder threads (0: its default)
  bool prefill = false;                // publish every block first (rings that hold them all), then
                                       // record: the recorder's own speed, no writer running beside it
  bool staged = false;                 // the recorder hands every data chunk to H5Dwrite, never
                                       // H5Dwrite_chunk (RecordOptions::staged_writes): the path before
  rec::FsyncPolicy fsync = rec::FsyncPolicy::never;  // the durability policy (the recorder's default is rotation)
  std::uint64_t rotate_bytes = 0;      // the next file at this size (0: one file)
  // bench_plain_write only: the source is one buffer as large as the data (as cold as the recorder's
  // ring after a prefill), not the blocks in turn (hot in cache); with copy_first each call's bytes
  // are first copied into a chunk-sized buffer (the recorder's one copy into its chunk).
  bool cold_source = false;
  bool copy_first = false;
};

struct RecorderBenchResult {
  double mb_per_s = 0;     // sample bytes / 1e6 / seconds
  std::uint64_t bytes = 0; // sample bytes written
  double seconds = 0;      // from the first block to the closed file
  double cpu_s = 0;        // the recording thread's CPU time over the same span (prefill: the recorder's own)
  double process_cpu_s = 0;  // the process's CPU time over the same span: with prefill, the recorder's
                             // thread and its encoder threads
  std::uint64_t file_bytes = 0;
  double durable_mb_per_s = 0;  // sample bytes over the time until every file is on disk: the recording,
                                // then an fsync of each file it wrote (already synced ones return at once)
};

/// A writer thread publishes options.blocks pre-generated blocks into each of options.channels
/// arena channels (in a private memfd arena) while the recorder, a lossless consumer, writes them
/// to one SWMR file (chunks as the recorder picks them); timed from the open file to the closed
/// one. With prefill, the blocks are published first and the recorder drains them (--from-oldest),
/// timed over the whole recording. Thread: any; uses HDF5 from this thread.
[[nodiscard]] core::Result<RecorderBenchResult> bench_record(const RecorderBenchOptions& options);

/// The same blocks appended by a bare loop: per block one H5Dset_extent and one hyperslab
/// H5Dwrite to a chunked dataset per channel, same chunk size, same file options (libver latest,
/// SWMR on, H5Fflush every flush_ms). Thread: any; uses HDF5 from this thread.
[[nodiscard]] core::Result<RecorderBenchResult> bench_baseline(const RecorderBenchOptions& options);

/// The floor: the same bytes (channels x blocks x block_bytes) written with plain write() to one
/// file in the same directory, a recorder chunk (data_chunk_samples) per call, timed from open to
/// close (no fsync, as the recorder's flushes do none). Thread: any.
[[nodiscard]] core::Result<RecorderBenchResult> bench_plain_write(const RecorderBenchOptions& options);

}  // namespace weir::bench
