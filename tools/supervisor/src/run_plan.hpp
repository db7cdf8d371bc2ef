#pragma once
// How `weir run` starts a pipeline's parts: each driver, shard, recorder, bridge and Kafka sender becomes one `weir`
// subcommand line, run as a child process (or a thread, when the part asks).
#include <string>
#include <vector>

#include "weir/config/pipeline.hpp"
#include "weir/core/error.hpp"

namespace weir::supervisor {

enum class PartRole : std::uint8_t { driver, shard, record, bridge, kafka, ann, epics, tango };

struct PartPlan {
  PartRole role = PartRole::driver;
  std::string name;               // unique within the pipeline
  std::string title;              // `shard "fft:adc0"`, for logs
  std::string kind;               // "sim", "fft", "hdf5", ...: what the part runs
  std::vector<std::string> args;  // the weir subcommand and its arguments, without the program
  bool thread = false;
  int cpu = -1;                   // the CPU it is pinned to (sched_setaffinity); -1: not pinned
  int max_restarts = 5;
  bool essential = false;         // restarted for as long as the run goes on; a configuration error stops the run
  config::Origin origin;
  std::string program;            // empty: weir itself; else the program's path (weir-epics, for EPICS parts)
  /// True when the two plans would run the same thing (a reload leaves it running).
  /// What a restart adds to args: a recorder that ran before in this run says why blocks no file
  /// holds are missing (`--missing-before disk_error` after exit 3 or 4, else recorder_down).
  [[nodiscard]] std::vector<std::string> restart_args(int last_exit_code) const;
  [[nodiscard]] bool same_as(const PartPlan& other) const {
    return role == other.role && args == other.args && program == other.program && thread == other.thread && cpu == other.cpu;
  }
};

/// The parts of a resolved pipeline by role (drivers, shards, recorders, bridges; start_in_order() starts
/// them shards first, drivers last), for the arena at
/// `where`. Fails with `file:line: what` for what only a run can refuse: a sim driver whose channels
/// differ in rate, block size or dtype (it runs one clock), or a memfd arena (children cannot map it
/// by name).
[[nodiscard]] core::Result<std::vector<PartPlan>> plan_parts(const config::Pipeline& pipeline,
                                                             const config::Resolved& resolved);

/// Appends `--run N` to every recorder's arguments that does not name its run itself (`run = N`).
void assign_run(std::vector<PartPlan>& parts, const config::Pipeline& pipeline, std::uint64_t run);

/// "driver", "shard", "record", "bridge", "kafka", "ann", "epics", "tango".
[[nodiscard]] const char* role_name(PartRole role) noexcept;

}  // namespace weir::supervisor
