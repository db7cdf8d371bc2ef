// `weir bench channels`: a channel's writer (this process) and a lossless reader (a forked child)
// against the bare floors (channel_baselines.cpp) at 4 KiB and 64 KiB blocks; the writer's rate with
// 0, 1 and 4 lossy readers attached; and the loss accounting of a slowed reader under overload.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <exception>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <vector>

#include "channel_bench.hpp"
#include "extra_suites.hpp"
#include "suite_report.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/channel.hpp"

namespace weir::bench {

namespace {

constexpr std::size_t kBlockSizes[] = {4096, 65536};          // bytes per block of the transfers
constexpr std::uint64_t kTransferBytes = 256ULL << 20;        // moved by each transfer (--quick: a tenth, rounded)
constexpr std::uint64_t kQuickTransferBytes = 32ULL << 20;
constexpr std::uint32_t kRingBlocks = 64;                     // slots of the channel rings and of the bare ring
constexpr std::uint64_t kChannelDataBytes = 64ULL << 20;      // the arena's channel pool: every ring and pyramid
constexpr std::uint32_t kChannelArenaSlots = 64;                   // KV slots of the arena (unused)
constexpr std::uint32_t kSampleBytes = 4;                     // f32 samples
constexpr double kNominalRateHz = 1e6;                        // a channel's declared rate; nothing paces on it
constexpr std::uint32_t kWarmupRounds = 1;                    // first rounds of transfers, not reported
constexpr std::uint64_t kWarmupDivisor = 8;                   // ... each an eighth as long
constexpr std::size_t kCostBlockBytes = 4096;                 // block size of the writer-cost and overload cases
constexpr std::int64_t kCostRunNs = 200'000'000;              // one writer-cost repetition (--quick: a tenth)
constexpr std::uint32_t kCostReaders[] = {0, 1, 4};           // lossy readers attached, per writer-cost line
constexpr std::size_t kOverloadBlockBytes = 4096;             // block size of the overload case
constexpr std::int64_t kOverloadRunNs = 200'000'000;          // one overload repetition (--quick: a tenth)
constexpr std::uint64_t kSlowEvery = 64;                      // the slowed reader sleeps after this many blocks ...
constexpr long kSlowSleepNs = 200'000;                        // ... for this long: the writer laps it
constexpr double kMinVsRing = 0.7;                            // targets: channel MB/s over the bare ring's, at least
constexpr double kMinVsUnix = 10.0;                           // ... over the Unix socket's, at least
constexpr double kMinWriterKept = 0.9;                        // writer's rate with readers over without, at least
constexpr int kFieldDecimals = 2;

constexpr const char* kUsage =
    "usage: weir bench channels [--json] [--reps N] [--quick]\n"
    "  channel writer and lossless reader in two processes against a bare shared-memory ring, a Unix\n"
    "  socket pair and ZeroMQ; writer cost with 0, 1 and 4 lossy readers; loss accounting under overload\n"
    "  --json     one JSON object per result line on stdout\n"
    "  --reps N   repetitions per case, 1..1000 (default 5); the median is reported\n"
    "  --quick    32 MiB per transfer and a tenth of the time per repetition (for tests)\n";

enum class Transport : std::uint8_t { ring, unix_socket, zmq, channel };
constexpr Transport kTransports[] = {Transport::ring, Transport::unix_socket, Transport::zmq, Transport::channel};

std::string size_label(std::size_t bytes) { return std::to_string(bytes / 1024) + "KiB"; }

std::string transfer_name(Transport t, std::size_t block_bytes) {
  const std::string size = size_label(block_bytes);
  switch (t) {
    case Transport::ring: return "base.ring." + size;
    case Transport::unix_socket: return "base.unix." + size;
    case Transport::zmq: return "base.zmq." + size;
    case Transport::channel: return "chan.lossless." + size;
  }
  return {};
}

std::string channel_name(std::string_view what, std::size_t block_bytes) {
  return std::string(what) + "." + size_label(block_bytes);
}

// A block of f32 samples (a sine), the same for every transport.
std::vector<std::byte> make_source(std::size_t bytes) {
  std::vector<std::byte> source(bytes);
  for (std::size_t i = 0; i < bytes / kSampleBytes; ++i) {
    const float sample = std::sin(static_cast<float>(i) * 0.01F);
    std::memcpy(source.data() + i * kSampleBytes, &sample, kSampleBytes);
  }
  return source;
}

struct SuiteContext {
  const Config& config;
  const std::string& arena_name;
  const core::Arena& arena;
  const CpuPlan& cpus;
  Results& results;
  Fields& fields;
};

// ---- writer and lossless reader --------------------------------------------------------------------

TransferResult transfer_channel(const TransferSpec& spec, const SuiteContext& s, std::string_view channel,
                                core::ChannelWriter& writer, const std::vector<std::byte>& source, std::string& error) {
  const std::uint64_t first = writer.next_sequence();
  const auto samples = static_cast<std::uint32_t>(spec.block_bytes / kSampleBytes);
  auto child_body = [&](Control& control, int fd) {
    auto attached = core::Arena::open(s.arena_name);
    if (!attached) {
      std::fprintf(stderr, "weir bench: reader child: %s\n", attached.error().what.c_str());
      return kChildSetupFailed;
    }
    int rc = kChildOk;
    {
      auto reader = core::ChannelReader::open(*attached, channel, core::ConsumerPolicy::lossless, "bench.lossless",
                                              core::StartAt::sequence, first);
      if (!reader) {
        std::fprintf(stderr, "weir bench: reader child: %s\n", reader.error().what.c_str());
        return kChildSetupFailed;
      }
      ReaderReport r;
      Patience patience;
      core::BlockView view;
      std::uint64_t lost = 0;
      control.ready.fetch_add(1, std::memory_order_relaxed);
      for (std::uint64_t n = 0; n < spec.blocks && rc == kChildOk;) {
        switch (reader->next(view, lost)) {
          case core::NextStatus::ok: {
            patience.reset();
            const bool in_order = view.sequence == first + n && block_sequence(view.data) == view.sequence &&
                                  view.samples == samples;
            r.bad += in_order ? 0U : 1U;
            r.sum += touch_block(view.data, spec.block_bytes);
            if (reader->done(view))
              ++r.blocks;
            else
              ++r.lost;
            ++n;
            break;
          }
          case core::NextStatus::lost:
            r.lost += lost;
            n += lost;
            break;
          case core::NextStatus::empty:
            if (!patience.wait()) rc = kChildStalled;
            break;
        }
      }
      r.end_ns = core::monotonic_ns();
      if (rc == kChildOk) rc = send_report(fd, r);
    }  // the reader leaves the consumer table before the arena is closed
    attached->close();
    return rc;
  };
  auto write_all = [&](std::string& err) {
    for (std::uint64_t n = 0; n < spec.blocks; ++n) {
      std::span<std::byte> out;
      if (writer.claim(out) != core::ClaimStatus::ok) {
        err = "claim dropped a block: the lossless reader stayed full past the writer's timeout";
        return false;
      }
      fill_block(out.data(), source.data(), spec.block_bytes, writer.next_sequence());
      writer.publish(samples);
    }
    return true;
  };
  return run_transfer(spec, s.cpus, child_body, write_all, error);
}

void run_transfers(const SuiteContext& s) {
  const std::uint64_t total_bytes = s.config.quick ? kQuickTransferBytes : kTransferBytes;
  struct Line {
    std::size_t block_bytes;
    Transport transport;
    std::vector<double> mb_per_s;
    bool broken = false;  // failed once: not run again
  };
  std::vector<Line> lines;
  std::vector<std::vector<std::byte>> sources;
  std::vector<core::ChannelWriter> writers;
  writers.reserve(std::size(kBlockSizes));
  for (const std::size_t block_bytes : kBlockSizes) {
    sources.push_back(make_source(block_bytes));
    auto writer = core::ChannelWriter::open(s.arena, channel_name("lossless", block_bytes));
    if (!writer) return s.results.note_error("setup.channels", writer.error().what);
    writers.push_back(std::move(*writer));
    for (const Transport t : kTransports) lines.push_back(Line{block_bytes, t, {}});
  }

  // Rounds take every line in turn, so a change of load on the machine reaches all alike.
  const std::uint32_t rounds = kWarmupRounds + static_cast<std::uint32_t>(s.config.reps);
  for (std::uint32_t round = 0; round < rounds; ++round) {
    const bool warmup = round < kWarmupRounds;
    for (std::size_t size_index = 0; size_index < std::size(kBlockSizes); ++size_index) {
      for (Line& line : lines) {
        if (line.broken || line.block_bytes != kBlockSizes[size_index]) continue;
        const TransferSpec spec{line.block_bytes, total_bytes / line.block_bytes / (warmup ? kWarmupDivisor : 1),
                                kRingBlocks};
        const std::vector<std::byte>& source = sources[size_index];
        std::string error;
        TransferResult elapsed;
        switch (line.transport) {
          case Transport::ring: elapsed = transfer_ring(spec, s.cpus, source, error); break;
          case Transport::unix_socket: elapsed = transfer_unix(spec, s.cpus, source, error); break;
          case Transport::zmq: elapsed = transfer_zmq(spec, s.cpus, source, error); break;
          case Transport::channel:
            elapsed = transfer_channel(spec, s, channel_name("lossless", line.block_bytes), writers[size_index], source,
                                       error);
            break;
        }
        if (!elapsed) {
          s.results.note_error(transfer_name(line.transport, line.block_bytes), error);
          line.broken = true;
          continue;
        }
        if (warmup) continue;
        const double bytes = static_cast<double>(spec.blocks * spec.block_bytes);
        line.mb_per_s.push_back(bytes / static_cast<double>(std::max<std::int64_t>(*elapsed, 1)) * 1e3);
      }
    }
  }

  for (Line& line : lines) {
    if (line.mb_per_s.empty()) continue;
    Row row;
    row.name = transfer_name(line.transport, line.block_bytes);
    row.unit = kUnitMBps;
    row.stats = summarize(std::move(line.mb_per_s));
    s.fields.add(row.name, "blocks_per_s", row.stats.median_ns * 1e6 / static_cast<double>(line.block_bytes),
                 kFieldDecimals);
    s.results.add_row(row);
    if (line.transport != Transport::channel) continue;
    // The channel line against its second and third floor: the same numbers under another baseline.
    for (const std::string_view suffix : {".vs_unix", ".vs_zmq"}) {
      Row against = row;
      against.name += suffix;
      s.results.add_row(std::move(against));
    }
  }
}

// ---- writer cost with lossy readers ----------------------------------------------------------------

int lossy_reader(const SuiteContext& s, std::string_view channel, Control& control, int fd) {
  auto attached = core::Arena::open(s.arena_name);
  if (!attached) {
    std::fprintf(stderr, "weir bench: reader child: %s\n", attached.error().what.c_str());
    return kChildSetupFailed;
  }
  int rc = kChildOk;
  {
    auto reader = core::ChannelReader::open(*attached, channel, core::ConsumerPolicy::lossy, "bench.lossy");
    if (!reader) {
      std::fprintf(stderr, "weir bench: reader child: %s\n", reader.error().what.c_str());
      return kChildSetupFailed;
    }
    ReaderReport r;
    Patience patience;
    core::BlockView view;
    std::uint64_t lost = 0;
    control.ready.fetch_add(1, std::memory_order_relaxed);
    for (bool stopped = false; !stopped && rc == kChildOk;) {
      switch (reader->next(view, lost)) {
        case core::NextStatus::ok:
          patience.reset();
          r.sum += touch_block(view.data, std::size_t{view.samples} * kSampleBytes);
          if (reader->done(view))
            ++r.blocks;
          else
            ++r.lost;
          break;
        case core::NextStatus::lost:
          patience.reset();
          r.lost += lost;
          break;
        case core::NextStatus::empty:
          stopped = control.stop.load(std::memory_order_relaxed) != 0;
          if (!stopped && !patience.wait()) rc = kChildStalled;
          break;
      }
    }
    r.end_ns = core::monotonic_ns();
    if (rc == kChildOk) rc = send_report(fd, r);
  }
  attached->close();
  return rc;
}

std::optional<CostOutcome> writer_cost(const SuiteContext& s, std::uint32_t readers, std::int64_t run_ns,
                                       core::ChannelWriter& writer, const std::vector<std::byte>& source,
                                       std::string& error) {
  const std::string channel = channel_name("cost", kCostBlockBytes);
  const auto samples = static_cast<std::uint32_t>(kCostBlockBytes / kSampleBytes);
  auto reader_body = [&](Control& control, int fd) { return lossy_reader(s, channel, control, fd); };
  auto write_one = [&](std::string& err) {
    std::span<std::byte> out;
    if (writer.claim(out) != core::ClaimStatus::ok) {
      err = "claim dropped a block with only lossy readers attached";
      return false;
    }
    fill_block(out.data(), source.data(), kCostBlockBytes, writer.next_sequence());
    writer.publish(samples);
    return true;
  };
  return run_cost(s.cpus, readers, run_ns, reader_body, write_one, error);
}

// chan.writer.4KiB.1reader, or for the bare broadcast ring base.ring.writer.4KiB.1reader.
std::string cost_name(std::uint32_t readers, bool bare = false) {
  return std::string(bare ? "base.ring" : "chan") + ".writer." + size_label(kCostBlockBytes) + "." +
         std::to_string(readers) + (readers == 1 ? "reader" : "readers");
}

void run_writer_cost(const SuiteContext& s) {
  auto writer = core::ChannelWriter::open(s.arena, channel_name("cost", kCostBlockBytes));
  if (!writer) return s.results.note_error("setup.channels", writer.error().what);
  const std::vector<std::byte> source = make_source(kCostBlockBytes);
  const std::int64_t run_ns = s.config.quick ? kCostRunNs / kQuickDivisor : kCostRunNs;
  constexpr std::uint32_t kMostReaders = kCostReaders[std::size(kCostReaders) - 1];
  if (s.cpus.reader_cpus() < kMostReaders)
    std::fprintf(stderr, "weir bench: channels: %zu CPU(s) besides the writer's for %u lossy readers; they share\n",
                 s.cpus.reader_cpus(), kMostReaders);
  struct Line {
    std::uint32_t readers;
    bool bare;  // the bare broadcast ring, not the channel
    std::vector<double> rates;
    std::uint64_t read = 0, lost = 0;
    bool broken = false;
  };
  std::vector<Line> lines;
  for (const bool bare : {false, true})
    for (const std::uint32_t readers : kCostReaders) lines.push_back(Line{readers, bare, {}});
  const std::uint32_t rounds = kWarmupRounds + static_cast<std::uint32_t>(s.config.reps);
  for (std::uint32_t round = 0; round < rounds; ++round) {
    const bool warmup = round < kWarmupRounds;
    for (Line& line : lines) {
      if (line.broken) continue;
      std::string error;
      const std::int64_t ns = warmup ? run_ns / static_cast<std::int64_t>(kWarmupDivisor) : run_ns;
      const auto outcome = line.bare ? ring_writer_cost(s.cpus, line.readers, ns, kRingBlocks, source, error)
                                     : writer_cost(s, line.readers, ns, *writer, source, error);
      if (!outcome) {
        s.results.note_error(cost_name(line.readers, line.bare), error);
        line.broken = true;
        continue;
      }
      if (warmup) continue;
      line.rates.push_back(outcome->blocks_per_s);
      line.read += outcome->read;
      line.lost += outcome->lost;
    }
  }
  for (Line& line : lines) {
    if (line.rates.empty()) continue;
    Row row;
    row.name = cost_name(line.readers, line.bare);
    row.unit = kUnitBlocksPerS;
    row.stats = summarize(std::move(line.rates));
    s.fields.add(row.name, "mb_per_s", row.stats.median_ns * static_cast<double>(kCostBlockBytes) / 1e6,
                 kFieldDecimals);
    if (line.readers > 0) {
      s.fields.add(row.name, "readers_read", line.read);
      s.fields.add(row.name, "readers_lost", line.lost);
    }
    s.results.add_row(std::move(row));
  }
}

// ---- loss accounting under overload ----------------------------------------------------------------

int slowed_reader(const SuiteContext& s, std::string_view channel, std::uint64_t first, Control& control, int fd) {
  auto attached = core::Arena::open(s.arena_name);
  if (!attached) {
    std::fprintf(stderr, "weir bench: reader child: %s\n", attached.error().what.c_str());
    return kChildSetupFailed;
  }
  int rc = kChildOk;
  {
    auto reader = core::ChannelReader::open(*attached, channel, core::ConsumerPolicy::lossy, "bench.slowed",
                                            core::StartAt::sequence, first);
    if (!reader) {
      std::fprintf(stderr, "weir bench: reader child: %s\n", reader.error().what.c_str());
      return kChildSetupFailed;
    }
    ReaderReport r;
    Patience patience;
    core::BlockView view;
    std::uint64_t lost = 0;
    std::uint64_t handled = 0;
    control.ready.fetch_add(1, std::memory_order_relaxed);
    for (bool drained = false; !drained && rc == kChildOk;) {
      switch (reader->next(view, lost)) {
        case core::NextStatus::ok: {
          patience.reset();
          const bool stamped = block_sequence(view.data) == view.sequence;  // counts only if done() finds it valid
          r.sum += touch_block(view.data, std::size_t{view.samples} * kSampleBytes);
          if (reader->done(view)) {
            ++r.blocks;
            r.bad += stamped ? 0U : 1U;
          } else {
            ++r.lost;  // overwritten while we read it
          }
          if (++handled % kSlowEvery == 0) {
            const timespec pause{0, kSlowSleepNs};
            (void)::nanosleep(&pause, nullptr);
          }
          break;
        }
        case core::NextStatus::lost:
          patience.reset();
          r.lost += lost;
          break;
        case core::NextStatus::empty:
          // acquire: pairs with the release store of stop, so final_head is the writer's last word.
          if (control.stop.load(std::memory_order_acquire) != 0 &&
              reader->cursor() >= control.final_head.load(std::memory_order_relaxed)) {
            drained = true;
          } else if (!patience.wait()) {
            rc = kChildStalled;
          }
          break;
      }
    }
    r.end_ns = core::monotonic_ns();
    r.end_cursor = reader->cursor();
    r.row_read = reader->row().blocks_read.load(std::memory_order_relaxed);
    r.row_lost = reader->row().blocks_lost.load(std::memory_order_relaxed);
    if (rc == kChildOk) rc = send_report(fd, r);
  }
  attached->close();
  return rc;
}

void run_overload(const SuiteContext& s) {
  const std::string channel = channel_name("overload", kOverloadBlockBytes);
  const std::string name = "chan.overload." + size_label(kOverloadBlockBytes);
  auto writer = core::ChannelWriter::open(s.arena, channel);
  if (!writer) return s.results.note_error("setup.channels", writer.error().what);
  const std::vector<std::byte> source = make_source(kOverloadBlockBytes);
  const std::int64_t run_ns = s.config.quick ? kOverloadRunNs / kQuickDivisor : kOverloadRunNs;
  const auto samples = static_cast<std::uint32_t>(kOverloadBlockBytes / kSampleBytes);
  std::vector<double> written_per_rep, read_per_rep, lost_per_rep;
  std::uint64_t written = 0, read = 0, lost = 0, mismatches = 0;
  for (int rep = 0; rep < s.config.reps; ++rep) {
    SharedMapping map(sizeof(Control));
    if (!map.valid()) return s.results.note_error(name, "mmap of the control block failed");
    auto* control = new (map.data()) Control{};
    const std::uint64_t first = writer->next_sequence();
    std::vector<std::unique_ptr<ChildProcess>> children;
    children.push_back(
        spawn_reader(s.cpus, 0, [&](int fd) { return slowed_reader(s, channel, first, *control, fd); }));
    if (children.back() == nullptr) return s.results.note_error(name, "pipe or fork failed");
    if (std::string error = wait_ready(*control, 1, children); !error.empty()) return s.results.note_error(name, error);
    std::uint64_t published = 0;
    const std::int64_t start_ns = core::monotonic_ns();
    for (;;) {
      std::span<std::byte> out;
      if (writer->claim(out) != core::ClaimStatus::ok)
        return s.results.note_error(name, "claim dropped a block with only a lossy reader attached");
      fill_block(out.data(), source.data(), kOverloadBlockBytes, writer->next_sequence());
      writer->publish(samples);
      if (++published % kClockEvery == 0 && core::monotonic_ns() - start_ns >= run_ns) break;
    }
    const std::uint64_t final_head = writer->next_sequence();
    control->final_head.store(final_head, std::memory_order_relaxed);
    control->stop.store(1, std::memory_order_release);  // final_head first
    ReaderReport r;
    if (std::string error = collect(*children.back(), r); !error.empty()) return s.results.note_error(name, error);

    const std::uint64_t rep_written = final_head - first;
    const bool exact = published == rep_written && r.blocks <= rep_written && r.lost == rep_written - r.blocks &&
                       r.end_cursor == final_head && r.row_read == r.blocks && r.row_lost == r.lost;
    if (!exact) {
      ++mismatches;
      std::fprintf(stderr,
                   "weir bench: %s: repetition %d: written %llu (published %llu), read %llu, lost %llu, cursor %llu "
                   "of %llu, consumer row read %llu lost %llu: lost != written - read\n",
                   name.c_str(), rep + 1, static_cast<unsigned long long>(rep_written),
                   static_cast<unsigned long long>(published), static_cast<unsigned long long>(r.blocks),
                   static_cast<unsigned long long>(r.lost), static_cast<unsigned long long>(r.end_cursor),
                   static_cast<unsigned long long>(final_head), static_cast<unsigned long long>(r.row_read),
                   static_cast<unsigned long long>(r.row_lost));
    }
    if (r.bad != 0) s.results.note_failures(name, r.bad, r.blocks, "a valid block carried the wrong sequence stamp");
    written += rep_written;
    read += r.blocks;
    lost += r.lost;
    written_per_rep.push_back(static_cast<double>(rep_written));
    read_per_rep.push_back(static_cast<double>(r.blocks));
    lost_per_rep.push_back(static_cast<double>(r.lost));
  }
  const auto add = [&](const char* suffix, std::vector<double> values) {
    Row row;
    row.name = name + suffix;
    row.unit = kUnitBlocks;
    row.stats = summarize(std::move(values));
    s.results.add_row(std::move(row));
  };
  add(".written", std::move(written_per_rep));
  add(".read", std::move(read_per_rep));
  add(".lost", std::move(lost_per_rep));
  const std::string lost_name = name + ".lost";
  s.fields.add(lost_name, "written_total", written);
  s.fields.add(lost_name, "read_total", read);
  s.fields.add(lost_name, "lost_total", lost);
  s.fields.add_bool(lost_name, "exact", mismatches == 0);
  if (mismatches != 0)
    s.results.note_error(name, "lost != written - read in " + std::to_string(mismatches) + " repetitions");
}

// Every ratio and target of the report, in one place (rates: higher is better).
std::vector<AtLeast> comparisons() {
  std::vector<AtLeast> out;
  for (const std::size_t block : kBlockSizes) {
    const std::string chan = transfer_name(Transport::channel, block);
    out.push_back({chan, transfer_name(Transport::ring, block), kMinVsRing});
    out.push_back({chan + ".vs_unix", transfer_name(Transport::unix_socket, block), kMinVsUnix});
    out.push_back({chan + ".vs_zmq", transfer_name(Transport::zmq, block), 0.0});
  }
  for (const std::uint32_t readers : kCostReaders)
    if (readers != 0) {
      out.push_back({cost_name(readers), cost_name(0), kMinWriterKept});
      out.push_back({cost_name(readers, true), cost_name(0, true), 0.0});  // what the hardware keeps
    }
  return out;
}

core::Result<void> create_channels(const core::Arena& arena) {
  const auto make = [&](std::string name, std::size_t block_bytes) -> core::Result<void> {
    core::ChannelSpec spec;
    spec.name = std::move(name);
    spec.dtype = core::Dtype::f32;
    spec.rate_hz = kNominalRateHz;
    spec.samples_per_block = static_cast<std::uint32_t>(block_bytes / kSampleBytes);
    spec.ring_blocks = kRingBlocks;
    spec.full_policy = core::FullPolicy::wait;
    spec.wait_timeout_ns = kStallTimeoutNs;  // a lossless reader that stops fails the transfer, bounded
    auto index = core::create_channel(arena, spec);
    if (!index) return tl::make_unexpected(index.error());
    return {};
  };
  for (const std::size_t block : kBlockSizes)
    if (auto made = make(channel_name("lossless", block), block); !made) return made;
  if (auto made = make(channel_name("cost", kCostBlockBytes), kCostBlockBytes); !made) return made;
  return make(channel_name("overload", kOverloadBlockBytes), kOverloadBlockBytes);
}

}  // namespace

int run_channel_suite(const std::vector<std::string>& args) {
  int exit_code = kExitOk;
  const auto maybe_config = parse_suite_options(args, kUsage, exit_code);
  if (!maybe_config) return exit_code;
  const Config& config = *maybe_config;
  warn_if_unoptimised();

  const std::string arena_name = "bench.channels." + std::to_string(::getpid());
  core::ArenaOptions options;
  options.slot_count = kChannelArenaSlots;
  options.value_bytes = 64;
  options.vector_dim = 0;  // no vector partition: this suite never touches it
  options.channel_data_bytes = kChannelDataBytes;

  Results results;
  Fields fields;
  bool pinned = false;
  const bool ran = run_in_arena(arena_name, options, [&](core::Arena& arena) {
    if (auto made = create_channels(arena); !made) return results.note_error("setup.channels", made.error().what);
    const CpuPlan cpus;
    pinned = cpus.pinned();
    if (!pinned)
      std::fputs("weir bench: channels: could not put writer and readers on different CPUs; they may share one\n",
                 stderr);
    const SuiteContext s{config, arena_name, arena, cpus, results, fields};
    run_transfers(s);
    run_writer_cost(s);
    run_overload(s);
  });
  if (!ran) return kExitFailed;

  compare_at_least(results, comparisons());
  char title[320];
  std::snprintf(title, sizeof title,
                "weir bench channels: median/min/max of %d repetitions; transfers: %llu MiB each, writer and reader "
                "on %s; writer cost: %lld ms each%s",
                config.reps,
                static_cast<unsigned long long>((config.quick ? kQuickTransferBytes : kTransferBytes) >> 20),
                pinned ? "two CPUs" : "unpinned CPUs",
                static_cast<long long>((config.quick ? kCostRunNs / kQuickDivisor : kCostRunNs) / 1'000'000),
                config.quick ? " (--quick)" : "");
  print_report(results.rows(), fields, config.json, title);
  if (results.failures() != 0) {
    std::fprintf(stderr, "weir bench: %llu failed transfers, checks or set-ups: the numbers printed are not trustworthy\n",
                 static_cast<unsigned long long>(results.failures()));
    return kExitFailed;
  }
  return kExitOk;
}

}  // namespace weir::bench
