// Throughput of the recorder end to end, and of a bare HDF5 append loop for comparison.
#include "weir/bench/recorder_bench.hpp"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <filesystem>
#include <random>
#include <span>
#include <system_error>
#include <thread>
#include <vector>

#include "detector_codes.hpp"
#include "harness.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/channel.hpp"
#include "weir/h5/check.hpp"
#include "weir/h5/handle.hpp"
#include "weir/recorder/format.hpp"
#include "weir/recorder/recorder.hpp"

namespace weir::bench {

namespace {

constexpr std::uint32_t kBenchRing = 256;           // ring blocks per bench channel
constexpr std::uint32_t kDistinctBlocks = 64;       // pre-generated blocks, used in turn
constexpr std::int64_t kBenchWriterWaitNs = 10'000'000'000;  // the writer waits for the recorder, never drops
constexpr double kBenchRateHz = 1e6;
constexpr std::uint64_t kBenchSeed = 42;
constexpr double kBytesPerMb = 1e6;
constexpr std::uint64_t kArenaSlackBytes = 1 << 20;

std::uint32_t sample_bytes(const RecorderBenchOptions& o) noexcept {
  return o.detector ? sizeof(std::int16_t) : sizeof(float);
}

hid_t sample_type(const RecorderBenchOptions& o) noexcept { return o.detector ? H5T_NATIVE_INT16 : H5T_NATIVE_FLOAT; }

// kDistinctBlocks blocks of o.block_bytes, used in turn.
std::vector<std::byte> make_blocks(const RecorderBenchOptions& o) {
  const std::size_t bytes = std::size_t{o.block_bytes} * kDistinctBlocks;
  if (o.detector) return detector_codes(bytes);
  std::vector<float> v(bytes / sizeof(float));
  std::mt19937 rng(kBenchSeed);
  std::uniform_real_distribution<float> uniform(-1.0F, 1.0F);  // values only; reproducibility is not the point
  for (float& x : v) x = uniform(rng);
  std::vector<std::byte> out(bytes);
  std::memcpy(out.data(), v.data(), bytes);
  return out;
}

core::Result<void> check_bench(const RecorderBenchOptions& o) {
  if (o.channels == 0 || o.blocks == 0 || o.block_bytes < sample_bytes(o) || o.block_bytes % sample_bytes(o) != 0)
    return core::fail(core::Errc::invalid_argument, "bench: channels, blocks and a block of whole samples, please");
  return {};
}

// The process's CPU time so far (every thread, user + system).
std::int64_t process_cpu_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// The calling thread's CPU time so far (user + system).
std::int64_t thread_cpu_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

RecorderBenchResult result_of(const RecorderBenchOptions& o, double seconds, const std::string& file) {
  RecorderBenchResult r;
  r.bytes = std::uint64_t{o.channels} * o.blocks * o.block_bytes;
  r.seconds = seconds;
  r.mb_per_s = seconds > 0 ? static_cast<double>(r.bytes) / kBytesPerMb / seconds : 0;
  std::error_code ec;
  r.file_bytes = std::filesystem::file_size(file, ec);
  std::filesystem::remove(file, ec);
  return r;
}

// Publishes block b (of the pre-generated ones) into every writer; false if a claim failed.
bool publish_all(std::vector<core::ChannelWriter>& writers, const std::vector<std::byte>& blocks, std::uint32_t samples,
                 std::uint64_t b) {
  const std::size_t block = blocks.size() / kDistinctBlocks;
  const std::byte* src = blocks.data() + block * (b % kDistinctBlocks);
  bool ok = true;
  for (core::ChannelWriter& w : writers) {
    std::span<std::byte> out;
    if (w.claim(out) != core::ClaimStatus::ok) {
      ok = false;
      continue;
    }
    std::memcpy(out.data(), src, block);
    w.publish(samples);
  }
  return ok;
}

core::Result<std::vector<core::ChannelWriter>> open_writers(const core::Arena& arena, std::uint32_t channels) {
  std::vector<core::ChannelWriter> writers;
  for (std::uint32_t c = 0; c < channels; ++c) {
    auto w = core::ChannelWriter::open(arena, "bench" + std::to_string(c));
    if (!w) return tl::make_unexpected(w.error());
    writers.push_back(std::move(*w));
  }
  return writers;
}

}  // namespace

core::Result<RecorderBenchResult> bench_record(const RecorderBenchOptions& o) {
  if (auto ok = check_bench(o); !ok) return tl::make_unexpected(ok.error());
  const std::uint32_t samples = o.block_bytes / sample_bytes(o);
  const std::string tag = "weir-bench-rec-" + std::to_string(getpid());
  // Prefilled rings hold every block; live ones a fixed few, refilled as the recorder reads.
  const std::uint32_t ring =
      o.prefill ? static_cast<std::uint32_t>(std::bit_ceil(std::max<std::uint64_t>(o.blocks, 2))) : kBenchRing;
  if (ring > core::kMaxRingBlocks) return core::fail(core::Errc::invalid_argument, "bench: too many blocks to prefill");
  core::ArenaOptions arena_options;
  arena_options.vector_dim = 0;
  arena_options.channel_data_bytes =
      std::uint64_t{o.channels} * ring * (o.block_bytes + 2 * core::kCacheLine) * 2 + kArenaSlackBytes;
  auto arena = core::Arena::create("memfd:" + tag, arena_options);
  if (!arena) return tl::make_unexpected(arena.error());
  for (std::uint32_t c = 0; c < o.channels; ++c) {
    core::ChannelSpec spec;
    spec.name = "bench" + std::to_string(c);
    spec.dtype = o.detector ? core::Dtype::i16 : core::Dtype::f32;
    spec.rate_hz = kBenchRateHz;
    spec.samples_per_block = samples;
    spec.ring_blocks = ring;
    spec.wait_timeout_ns = kBenchWriterWaitNs;
    if (auto made = core::create_channel(*arena, spec); !made) return tl::make_unexpected(made.error());
  }
  const std::vector<std::byte> blocks = make_blocks(o);
  if (blocks.empty()) return core::fail(core::Errc::invalid_argument, "bench: no detector codes");
  rec::RecordOptions options;
  options.channels = {"bench*"};
  options.out = (std::filesystem::path(o.dir) / (tag + ".h5")).string();
  options.flush_ms = o.flush_ms;
  options.codec.codec = o.codec;
  options.encode_threads = o.encode_threads;
  options.min_free_bytes = 0;
  options.from_oldest = o.prefill;
  options.staged_writes = o.staged;
  options.fsync = o.fsync;
  options.rotate_bytes = o.rotate_bytes;
  std::error_code ec;
  std::filesystem::remove(options.out, ec);
  rec::RecordControl control;
  std::atomic<bool> writer_failed{false};
  std::int64_t started_ns = 0;
  std::int64_t started_cpu_ns = thread_cpu_ns();
  std::int64_t started_process_ns = process_cpu_ns();
  std::thread writer;
  if (o.prefill) {
    auto writers = open_writers(*arena, o.channels);
    if (!writers) return tl::make_unexpected(writers.error());
    for (std::uint64_t b = 0; b < o.blocks; ++b)
      if (!publish_all(*writers, blocks, samples, b)) writer_failed = true;
    control.stop = true;  // a clean stop drains every block published before it
    started_ns = core::monotonic_ns();
    started_cpu_ns = thread_cpu_ns();
    started_process_ns = process_cpu_ns();
  } else {
    writer = std::thread([&] {
      auto writers = open_writers(*arena, o.channels);
      if (!writers) writer_failed = true;
      while (writers && !control.started.load(std::memory_order_acquire) && !control.stop.load(std::memory_order_relaxed))
        std::this_thread::yield();  // the recorder registers its readers before the first block
      started_ns = core::monotonic_ns();
      for (std::uint64_t b = 0; writers && b < o.blocks; ++b)
        if (!publish_all(*writers, blocks, samples, b)) writer_failed = true;
      control.stop = true;  // a clean stop drains every published block before closing
    });
  }
  auto summary = rec::record(*arena, options, control);
  const std::int64_t ended_ns = core::monotonic_ns();
  const std::int64_t process_ns = process_cpu_ns() - started_process_ns;
  if (summary)  // what the recording left in the page cache reaches the disk
    for (const std::string& file : summary->files) {
      const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd >= 0) {
        (void)::fsync(fd);
        ::close(fd);
      }
    }
  const std::int64_t durable_ns = core::monotonic_ns();
  const std::int64_t cpu_ns = thread_cpu_ns() - started_cpu_ns;
  control.stop = true;
  if (writer.joinable()) writer.join();
  if (!summary) return tl::make_unexpected(summary.error());
  if (!summary->error.empty()) return core::fail(core::Errc::io_error, "bench: " + summary->error);
  if (writer_failed || summary->blocks != std::uint64_t{o.channels} * o.blocks)
    return core::fail(core::Errc::io_error, "bench: " + std::to_string(summary->blocks) + " of " +
                                                std::to_string(std::uint64_t{o.channels} * o.blocks) +
                                                " blocks recorded");
  RecorderBenchResult result = result_of(o, static_cast<double>(ended_ns - started_ns) / 1e9, options.out);
  result.cpu_s = static_cast<double>(cpu_ns) / 1e9;
  result.process_cpu_s = static_cast<double>(process_ns) / 1e9;
  result.durable_mb_per_s = durable_ns > started_ns ? static_cast<double>(result.bytes) / kBytesPerMb /
                                                          (static_cast<double>(durable_ns - started_ns) / 1e9)
                                                    : 0;
  for (const std::string& file : summary->files) {  // rotated files, and the run record beside them
    if (file != options.out) result.file_bytes += std::filesystem::file_size(file, ec);
    std::filesystem::remove(file, ec);
  }
  for (const auto& e : std::filesystem::directory_iterator(o.dir, ec))
    if (e.path().filename().string().rfind(tag + "_run", 0) == 0) std::filesystem::remove(e.path(), ec);
  return result;
}

core::Result<RecorderBenchResult> bench_baseline(const RecorderBenchOptions& o) {
  if (auto ok = check_bench(o); !ok) return tl::make_unexpected(ok.error());
  h5::quiet_errors();
  const std::uint32_t samples = o.block_bytes / sample_bytes(o);
  const std::string file =
      (std::filesystem::path(o.dir) / ("weir-bench-base-" + std::to_string(getpid()) + ".h5")).string();
  std::error_code ec;
  std::filesystem::remove(file, ec);
  const std::vector<std::byte> blocks = make_blocks(o);
  auto fapl = h5::check<h5::PropList>(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate", file);
  if (!fapl) return tl::make_unexpected(fapl.error());
  H5Pset_libver_bounds(fapl->get(), H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
  auto f = h5::check<h5::File>(H5Fcreate(file.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, fapl->get()), "H5Fcreate", file);
  if (!f) return tl::make_unexpected(f.error());
  const hsize_t zero[1] = {0}, unlimited[1] = {H5S_UNLIMITED};
  const hsize_t chunk[1] = {rec::data_chunk_samples(samples, sample_bytes(o))};
  h5::Space space{H5Screate_simple(1, zero, unlimited)};
  h5::PropList dcpl{H5Pcreate(H5P_DATASET_CREATE)};
  H5Pset_chunk(dcpl.get(), 1, chunk);
  std::vector<h5::Dataset> datasets;
  for (std::uint32_t c = 0; c < o.channels; ++c) {
    const std::string name = "bench" + std::to_string(c);
    auto d = h5::check<h5::Dataset>(H5Dcreate2(f->get(), name.c_str(), sample_type(o), space.get(), H5P_DEFAULT, dcpl.get(),
                                 H5P_DEFAULT),
                      "H5Dcreate2", file + " " + name);
    if (!d) return tl::make_unexpected(d.error());
    datasets.push_back(std::move(*d));
  }
  if (auto ok = h5::check(H5Fstart_swmr_write(f->get()), "H5Fstart_swmr_write", file); !ok)
    return tl::make_unexpected(ok.error());
  const std::int64_t start = core::monotonic_ns();  // as for the recorder: from an open file to a closed one
  const hsize_t count[1] = {samples};
  h5::Space mem{H5Screate_simple(1, count, nullptr)};
  const std::int64_t flush_every = std::int64_t{o.flush_ms} * 1'000'000;
  std::int64_t flush_at = core::monotonic_ns() + flush_every;
  for (std::uint64_t b = 0; b < o.blocks; ++b) {
    const std::byte* src = blocks.data() + std::size_t{o.block_bytes} * (b % kDistinctBlocks);
    for (h5::Dataset& d : datasets) {
      const hsize_t size[1] = {(b + 1) * samples};
      const hsize_t at[1] = {b * samples};
      if (H5Dset_extent(d.get(), size) < 0) return tl::make_unexpected(h5::error("H5Dset_extent", file));
      h5::Space fs{H5Dget_space(d.get())};
      H5Sselect_hyperslab(fs.get(), H5S_SELECT_SET, at, nullptr, count, nullptr);
      if (H5Dwrite(d.get(), sample_type(o), mem.get(), fs.get(), H5P_DEFAULT, src) < 0)
        return tl::make_unexpected(h5::error("H5Dwrite", file));
    }
    if (core::monotonic_ns() >= flush_at) {
      flush_at = core::monotonic_ns() + flush_every;
      if (H5Fflush(f->get(), H5F_SCOPE_LOCAL) < 0) return tl::make_unexpected(h5::error("H5Fflush", file));
    }
  }
  datasets.clear();
  if (!f->reset()) return tl::make_unexpected(h5::error("H5Fclose", file));
  return result_of(o, static_cast<double>(core::monotonic_ns() - start) / 1e9, file);
}

core::Result<RecorderBenchResult> bench_plain_write(const RecorderBenchOptions& o) {
  if (auto ok = check_bench(o); !ok) return tl::make_unexpected(ok.error());
  const std::uint32_t samples = o.block_bytes / sample_bytes(o);
  const std::string file =
      (std::filesystem::path(o.dir) / ("weir-bench-write-" + std::to_string(getpid()) + ".bin")).string();
  std::error_code ec;
  std::filesystem::remove(file, ec);
  std::vector<std::byte> blocks = make_blocks(o);
  const std::uint64_t total = std::uint64_t{o.channels} * o.blocks * o.block_bytes;
  if (o.cold_source) {  // the blocks in turn, laid out over the whole data as a ring would hold them
    std::vector<std::byte> whole(total);
    for (std::uint64_t at = 0; at < total; at += blocks.size())
      std::memcpy(whole.data() + at, blocks.data(), std::min<std::uint64_t>(blocks.size(), total - at));
    blocks = std::move(whole);
  }
  const std::byte* bytes = blocks.data();
  const std::uint64_t source_bytes = blocks.size();
  const std::uint64_t call_bytes =
      std::min<std::uint64_t>(source_bytes, rec::data_chunk_samples(samples, sample_bytes(o)) * sample_bytes(o));
  std::vector<std::byte> staging(o.copy_first ? call_bytes : 0);
  const std::int64_t start = core::monotonic_ns();
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return core::fail(core::Errc::io_error, "bench: open " + file + ": " + std::strerror(errno));
  std::uint64_t done = 0;
  while (done < total) {
    const std::uint64_t at = done % source_bytes;
    const std::uint64_t n = std::min({call_bytes, total - done, source_bytes - at});
    const std::byte* from = bytes + at;
    if (o.copy_first) {
      std::memcpy(staging.data(), from, n);
      from = staging.data();
    }
    const ssize_t w = ::write(fd, from, n);
    if (w <= 0) {
      const int err = errno;
      (void)::close(fd);
      std::filesystem::remove(file, ec);
      return core::fail(core::Errc::io_error, "bench: write " + file + ": " + std::strerror(err));
    }
    done += static_cast<std::uint64_t>(w);
  }
  if (::close(fd) != 0) return core::fail(core::Errc::io_error, "bench: close " + file + ": " + std::strerror(errno));
  return result_of(o, static_cast<double>(core::monotonic_ns() - start) / 1e9, file);
}

}  // namespace weir::bench
