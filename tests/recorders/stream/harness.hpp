#pragma once
// For the recorder tests: `weir record` and the read-back tools (the h5py scripts beside this file,
// h5dump) as real processes (process.hpp), the simulator as a writer thread, and the inspection
// script's output parsed into facts.
#include <doctest/doctest.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "process.hpp"
#include "weir/acq/signal_generator.hpp"
#include "weir/acq/sim_driver.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/channel.hpp"

namespace weir::test {

inline constexpr std::chrono::seconds kReadyTimeout{10};  // a recorder registers its readers within this

/// `weir record ARENA args...` as argv.
inline std::vector<std::string> record_argv(const std::string& arena, std::vector<std::string> args) {
  std::vector<std::string> argv{WEIR_CLI_PATH, "record", arena};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

/// Consumer rows of kind record:hdf5 that process pid holds.
inline std::size_t recorder_rows(const core::Arena& arena, pid_t pid) {
  std::size_t n = 0;
  for (const core::ChannelInfo& c : core::list_channels(arena))
    for (const core::ConsumerInfo& r : c.consumers)
      if (r.alive && r.pid == static_cast<std::uint32_t>(pid) && r.kind == "record:hdf5" && r.name == "recorder") ++n;
  return n;
}

/// Stops a recorder with SIGTERM and requires that it stopped cleanly (exit 0), its output shown if not.
inline void stop_cleanly(Program& recorder) {
  recorder.signal(SIGTERM);
  const Exit done = recorder.wait();
  INFO(done.out << done.err);
  REQUIRE(done.exited);
  REQUIRE(done.code == 0);
}

/// Whether the live recorder process pid has read `channel` up to everything its writer published
/// (its cursor at the head), gap blocks included.
inline bool recorder_read_up(const core::Arena& arena, const std::string& channel, pid_t pid) {
  for (const core::ChannelInfo& c : core::list_channels(arena))
    if (c.name == channel)
      for (const core::ConsumerInfo& r : c.consumers)
        if (r.alive && r.pid == static_cast<std::uint32_t>(pid)) return r.cursor >= c.blocks_written;
  return false;
}

/// Blocks the recorder process pid has read from `channel` so far (its consumer row).
inline std::uint64_t recorder_blocks_read(const core::Arena& arena, const std::string& channel, pid_t pid) {
  for (const core::ChannelInfo& c : core::list_channels(arena))
    if (c.name == channel)
      for (const core::ConsumerInfo& r : c.consumers)
        if (r.pid == static_cast<std::uint32_t>(pid) && r.kind == "record:hdf5") return r.blocks_read;
  return 0;
}

/// The recording files in dir, sorted by name: closed (NAME.h5) and being written or left by a
/// killed recorder (NAME.h5.partial).
inline std::vector<std::string> h5_files(const std::filesystem::path& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (it->path().extension() == ".h5" || (name.size() > 11 && name.ends_with(".h5.partial"))) files.push_back(it->path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

/// Waits until the recorder follows `channels` channels (it registers them before opening its file)
/// and its first file is there, or fails after kReadyTimeout.
inline bool wait_for_recorder(const core::Arena& arena, const Program& p, std::size_t channels,
                              const std::filesystem::path& dir) {
  const auto deadline = Clock::now() + kReadyTimeout;
  while (Clock::now() < deadline && p.running()) {
    if (!h5_files(dir).empty() && recorder_rows(arena, p.pid()) >= channels) return true;
    std::this_thread::sleep_for(kPoll);
  }
  return false;
}

/// Creates the channels a SimWriter with these options attaches to (so a recorder can follow them
/// before the first block). Writers wait up to 5 s for a lossless reader: a test never drops.
inline void make_channels(const core::Arena& arena, const acq::SimOptions& o, std::uint32_t ring = 64) {
  for (const std::string& name : o.channels) {
    core::ChannelSpec spec;
    spec.name = name;
    spec.dtype = o.dtype;
    spec.rate_hz = o.rate_hz;
    spec.samples_per_block = o.block_samples;
    spec.ring_blocks = ring;
    spec.units = "V";
    spec.labels = {"sim", "test"};
    spec.wait_timeout_ns = 5'000'000'000;
    REQUIRE_MESSAGE(core::create_channel(arena, spec), name);
  }
}

/// Sim options: `blocks` blocks of `block` samples per channel, as fast as the readers allow
/// (0 blocks: paced at `rate` until stopped).
inline acq::SimOptions sim_options(std::vector<std::string> channels, std::uint32_t block, std::uint64_t blocks,
                                   double rate = 1e6) {
  acq::SimOptions o;
  o.channels = std::move(channels);
  o.rate_hz = rate;
  o.block_samples = block;
  o.signal.kind = acq::SignalKind::noise;
  o.signal.seed = 99;
  o.max_blocks = blocks;
  o.fast = blocks != 0;
  return o;
}

/// Waits until pred() holds, polling, for at most timeout.
template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds timeout = 10'000ms) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return pred();
}

/// The simulator writing in a thread of the test process until its block limit or stop().
class SimWriter {
 public:
  SimWriter(const core::Arena& arena, acq::SimOptions options) : options_(std::move(options)) {
    thread_ = std::thread([this, &arena] {
      auto r = acq::run_sim(arena, options_, stop_);
      if (r) report_ = *r;
      ok_ = r.has_value();
      if (!r) error_ = r.error().what;
    });
  }
  SimWriter(const SimWriter&) = delete;
  SimWriter& operator=(const SimWriter&) = delete;
  ~SimWriter() { stop(); }
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  /// Waits for the block limit (or stops it), then returns what was published.
  const acq::SimReport& finish() {
    if (thread_.joinable()) thread_.join();
    INFO(error_);
    CHECK(ok_);
    return report_;
  }
  [[nodiscard]] const acq::SimOptions& options() const { return options_; }

 private:
  acq::SimOptions options_;
  std::atomic<bool> stop_{false};
  acq::SimReport report_{};
  bool ok_ = false;
  std::string error_;
  std::thread thread_;
};

/// Channel i's samples [first, first + count) as the simulator generates them (seed + i), as f32.
inline std::vector<float> reference_samples(const acq::SimOptions& o, std::size_t channel, std::uint64_t first,
                                            std::uint64_t count) {
  acq::SignalConfig config = o.signal;
  config.sample_rate_hz = o.rate_hz;
  config.seed = o.signal.seed + channel;
  auto gen = acq::SignalGenerator::create(config, o.block_samples);
  REQUIRE(gen);
  gen->skip(first);
  std::vector<float> out(count);
  gen->fill(std::span<float>(out));
  return out;
}

struct GapFact {
  std::string channel;
  std::uint64_t sequence = 0, blocks = 0;
  std::string reason;
};

/// What inspect_recording.py printed about one file.
struct Facts {
  Exit exit;
  std::map<std::string, std::string> root;
  std::map<std::string, std::map<std::string, std::string>> channels;  // channel -> key -> value
  std::map<std::string, std::string> seqs;                               // channel -> "0-99,120-199"
  std::map<std::string, std::string> keys;                               // key -> "rows N last V"
  std::vector<GapFact> gaps;
  std::vector<std::string> errors;

  [[nodiscard]] bool ok() const { return exit.exited && exit.code == 0 && errors.empty(); }
  [[nodiscard]] std::uint64_t num(const std::string& channel, const std::string& key) const {
    const auto c = channels.find(channel);
    if (c == channels.end()) return 0;
    const auto v = c->second.find(key);
    return v == c->second.end() ? 0 : std::stoull(v->second);
  }
};

/// Parses the lines inspect_recording.py printed about one file.
inline void parse_facts(std::istream& lines, Facts& f) {
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string kind;
    words >> kind;
    if (kind == "root") {
      std::string name, value;
      words >> name;
      std::getline(words >> std::ws, value);
      f.root[name] = value;
    } else if (kind == "channel") {
      std::string name, key, value;
      words >> name;
      while (words >> key >> value) f.channels[name][key] = value;
    } else if (kind == "seqs") {
      std::string name, value;
      words >> name >> value;
      f.seqs[name] = value;
    } else if (kind == "gap") {
      GapFact g;
      words >> g.channel >> g.sequence >> g.blocks >> g.reason;
      f.gaps.push_back(g);
    } else if (kind == "key") {
      std::string name, rest;
      words >> name;
      std::getline(words >> std::ws, rest);
      f.keys[name] = rest;
    } else if (kind == "error") {
      f.errors.push_back(line);
    }
  }
}

/// Runs inspect_recording.py on a file (as a SWMR reader with swmr) and parses its lines.
inline Facts inspect(const std::string& file, bool swmr = false, const std::string& export_dir = "") {
  std::vector<std::string> argv{WEIR_PYTHON, std::string(WEIR_RECORDER_SCRIPTS) + "/inspect_recording.py", file};
  if (swmr) argv.push_back("--swmr");
  if (!export_dir.empty()) {
    argv.push_back("--export");
    argv.push_back(export_dir);
  }
  Facts f;
  f.exit = run_program(argv);
  std::istringstream lines(f.exit.out);
  parse_facts(lines, f);
  return f;
}

/// inspect() of several files in one run of the script (h5py's import is most of its time); file
/// i exports to export_dir/i when export_dir is given.
inline std::vector<Facts> inspect_all(const std::vector<std::string>& files, bool swmr = false,
                                      const std::string& export_dir = "") {
  std::vector<std::string> argv{WEIR_PYTHON, std::string(WEIR_RECORDER_SCRIPTS) + "/inspect_recording.py"};
  argv.insert(argv.end(), files.begin(), files.end());
  if (swmr) argv.push_back("--swmr");
  if (!export_dir.empty()) {
    argv.push_back("--export");
    argv.push_back(export_dir);
  }
  const Exit exit = run_program(argv);
  std::vector<Facts> all(files.size());
  const std::string marker = "file ";
  std::size_t at = files.size() > 1 ? exit.out.find(marker) : 0;
  for (std::size_t i = 0; i < files.size(); ++i) {
    all[i].exit = exit;
    if (at == std::string::npos) {  // the script died before this file: its exit says why
      all[i].errors.push_back("no output for " + files[i]);
      continue;
    }
    const std::size_t next = files.size() > 1 ? exit.out.find("\n" + marker, at) : std::string::npos;
    std::istringstream lines(exit.out.substr(at, next == std::string::npos ? std::string::npos : next + 1 - at));
    parse_facts(lines, all[i]);
    at = next == std::string::npos ? next : next + 1;
  }
  return all;
}

/// Whether h5dump reads the whole file (headers and data) without an error.
inline Exit h5dump(const std::string& file) { return run_program({WEIR_H5DUMP, "-H", file}); }

/// "0-99,120-199" -> {{0, 99}, {120, 199}}; "none" -> {}.
inline std::vector<std::pair<std::uint64_t, std::uint64_t>> parse_ranges(const std::string& text) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  if (text == "none" || text.empty()) return out;
  std::istringstream in(text);
  for (std::string part; std::getline(in, part, ',');) {
    const auto dash = part.find('-');
    out.emplace_back(std::stoull(part.substr(0, dash)), std::stoull(part.substr(dash + 1)));
  }
  return out;
}

/// Checks every recorded f32 sample of channel `index` of `sim` (exported raw by the inspection
/// script into export_dir) against the simulator's signal, block range by block range.
inline void check_samples(const Facts& facts, const std::string& export_dir, const acq::SimOptions& sim,
                          std::size_t index) {
  const std::string& name = sim.channels[index];
  const std::string bytes = read_file(std::filesystem::path(export_dir) / (name + ".bin"));
  std::uint64_t at = 0;  // samples of the exported data compared so far
  for (const auto& [first, last] : parse_ranges(facts.seqs.at(name))) {
    const std::uint64_t count = (last - first + 1) * sim.block_samples;
    REQUIRE(bytes.size() >= (at + count) * sizeof(float));
    const std::vector<float> expected = reference_samples(sim, index, first * sim.block_samples, count);
    CHECK_MESSAGE(std::memcmp(bytes.data() + at * sizeof(float), expected.data(), count * sizeof(float)) == 0,
                  name << " blocks " << first << "-" << last);
    at += count;
  }
  CHECK(bytes.size() == at * sizeof(float));
}

/// blocks_out of the recorder row of process `pid` on channel `name`: the blocks it had handed to
/// HDF5 at its last flush (0 when it has no row there).
inline std::uint64_t flushed_blocks(const core::Arena& arena, const std::string& name, pid_t pid) {
  for (const core::ChannelInfo& c : core::list_channels(arena))
    if (c.name == name)
      for (const core::ConsumerInfo& r : c.consumers)
        if (r.pid == static_cast<std::uint32_t>(pid) && r.kind == "record:hdf5") return r.blocks_out;
  return 0;
}

/// The blocks channel `name`'s writer has published (0 when there is no such channel).
inline std::uint64_t head_of(const core::Arena& arena, const std::string& name) {
  for (const core::ChannelInfo& c : core::list_channels(arena))
    if (c.name == name) return c.blocks_written;
  return 0;
}

}  // namespace weir::test
