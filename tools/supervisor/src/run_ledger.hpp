#pragma once
// What `weir run` owes each recorder's run: one run number per pipeline start, shared by every
// recorder (and every restart of one), and the run record beside each recorder's files
// (weir/ledger/run_record.hpp): where each channel's ledger begins, its final written sequence at
// the stop, and the parts as the supervisor last saw them.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "run_supervisor.hpp"
#include "weir/config/pipeline.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/error.hpp"

namespace weir::supervisor {

/// Where one recorder of the pipeline writes.
struct RecorderTarget {
  std::string part;               // the recorder's name
  std::vector<std::string> channels;  // its channel patterns
  config::Origin origin;
  std::filesystem::path dir;      // its output directory
  std::string prefix;             // the arena's name (--out DIR) or the file stem (--out FILE.h5)
  bool is_dir = true;
  std::uint64_t run = 0;          // `run = N` in the file; 0: the run `weir run` picks
};

/// Every recorder's target, with `arena_name` as the DIR-form prefix. Refuses, with `file:line`, two
/// recorders that would write the same run to the same files. Thread: any.
[[nodiscard]] core::Result<std::vector<RecorderTarget>> recorder_targets(const config::Pipeline& pipeline,
                                                                         const std::string& arena_name);

/// One more than the highest run of these targets' arena found in their directories (recordings and
/// run records), and above every run the file sets itself. Thread: any.
[[nodiscard]] std::uint64_t next_run(const std::vector<RecorderTarget>& targets);

/// Keeps the run records of a pipeline start. Failures to write one are logged, never fatal.
class RunLedger {
 public:
  RunLedger(std::vector<RecorderTarget> targets, std::uint64_t run, std::string pipeline_file,
            std::function<void(const std::string&)> log);
  /// At start, before any driver runs: the run, arena and every channel each recorder matches, with
  /// its first sequence = the channel's head now (for channels the record does not hold yet).
  void started(const core::Arena& arena);
  /// At the stop, once the drivers stopped and the consumers drained: each channel's final written
  /// sequence and drops at the source, and the stop time.
  void stopped(const core::Arena& arena);
  /// Every part's mark, as the supervisor sees it now.
  void parts(const Supervisor& supervisor);

  [[nodiscard]] std::uint64_t run(const RecorderTarget& t) const noexcept { return t.run != 0 ? t.run : run_; }
  [[nodiscard]] std::filesystem::path record_path(const RecorderTarget& t) const;
  [[nodiscard]] const std::vector<RecorderTarget>& targets() const noexcept { return targets_; }

 private:
  void channels(const core::Arena& arena, bool at_stop);
  std::vector<RecorderTarget> targets_;
  std::uint64_t run_;
  std::string pipeline_file_;
  std::function<void(const std::string&)> log_;
};

}  // namespace weir::supervisor
