#include "run_plan.hpp"

#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include <algorithm>
#include <string_view>

#include <fmt/format.h>

#include "weir/supervisor/pipeline_drivers.hpp"
#include "weir/tools/exit_codes.hpp"

namespace weir::supervisor {

using core::Result;

const char* role_name(PartRole role) noexcept {
  switch (role) {
    case PartRole::driver: return "driver";
    case PartRole::shard: return "shard";
    case PartRole::record: return "record";
    case PartRole::bridge: return "bridge";
    case PartRole::kafka: return "kafka";
    case PartRole::ann: return "ann";
    case PartRole::epics: return "epics";
    case PartRole::tango: return "tango";
  }
  return "part";
}

namespace {

// A program of its own for parts that link a control system's libraries: weir-epics (EPICS parts),
// weir-tango (Tango parts). `$WEIR_EPICS_PROGRAM` / `$WEIR_TANGO_PROGRAM` when set, else beside this
// weir (a build's tools/, an installation's bin/).
struct PartProgram {
  const char* file;     // "weir-epics"
  const char* env;      // "WEIR_EPICS_PROGRAM"
  const char* system;   // "EPICS"
  const char* how;      // how to get one built
};
constexpr PartProgram kEpicsProgram{"weir-epics", "WEIR_EPICS_PROGRAM", "EPICS",
                                    "build weir with EPICS base: scripts/build.sh with EPICS_BASE set, or scripts/epics_base.sh "
                                    "to build one"};
constexpr PartProgram kTangoProgram{"weir-tango", "WEIR_TANGO_PROGRAM", "Tango",
                                    "build weir with libtango-dev installed (scripts/deps.sh test)"};

Result<std::string> part_program(const PartPlan& plan, const PartProgram& program) {
  if (const char* given = std::getenv(program.env); given != nullptr && *given != '\0') {
    if (::access(given, X_OK) != 0)
      return tl::make_unexpected(config::error_at(plan.origin, fmt::format("{}: {}={} is no program this user may run",
                                                                           plan.title, program.env, given)));
    return std::string(given);
  }
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::filesystem::path beside = self.parent_path() / program.file;
  if (!ec && ::access(beside.c_str(), X_OK) == 0) return beside.string();
  return tl::make_unexpected(config::error_at(
      plan.origin, fmt::format("{}: this weir has no {} parts (no {} beside {}); {}", plan.title, program.system, program.file,
                               self.empty() ? std::string("weir") : self.string(), program.how)));
}

// A setting name as its command-line option: chirp_to -> --chirp-to.
std::string option_of(const std::string& key) {
  std::string o = "--" + key;
  std::replace(o.begin(), o.end(), '_', '-');
  return o;
}

// Appends the part's settings as options; a boolean true becomes a bare flag, false nothing.
void add_params(std::vector<std::string>& args, const std::map<std::string, std::string>& params) {
  for (const auto& [key, value] : params) {
    if (value == "false") continue;
    args.push_back(option_of(key));
    if (value != "true") args.push_back(value);
  }
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

Result<PartPlan> driver_plan(const config::Pipeline& p, const config::DriverDecl& d) {
  PartPlan plan{PartRole::driver, d.name, fmt::format("driver \"{}\"", d.name), d.kind, {}, d.thread, d.cpu, d.max_restarts, d.essential, d.origin, {}};
  if (const std::string subcommand = driver_subcommand(d.kind); !subcommand.empty()) {
    // "bridge recv": a subcommand of a subcommand.
    for (std::string_view rest = subcommand; !rest.empty();) {
      const std::size_t space = rest.find(' ');
      plan.args.emplace_back(rest.substr(0, space));
      rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
    }
    plan.args.insert(plan.args.end(), {p.arena.name, "--pipeline", p.file, "--part", d.name});
    if (d.kind == "epics" || d.kind == "tango") {  // a program of its own, built with the control system's libraries
      auto program = part_program(plan, d.kind == "epics" ? kEpicsProgram : kTangoProgram);
      if (!program) return tl::make_unexpected(program.error());
      plan.program = *program;
    }
    return plan;
  }
  if (d.kind == "replay") {
    auto params = d.params;
    const std::string file = params["file"];
    params.erase("file");
    plan.args = {"replay", file, p.arena.name};
    if (!d.channels.empty()) {
      plan.args.emplace_back("--channels");
      plan.args.insert(plan.args.end(), d.channels.begin(), d.channels.end());
    }
    add_params(plan.args, params);
    return plan;
  }
  const core::ChannelSpec* first = nullptr;
  for (const auto& name : d.channels)
    for (const auto& c : p.channels) {
      if (c.spec.name != name) continue;
      if (first == nullptr) {
        first = &c.spec;
      } else if (c.spec.rate_hz != first->rate_hz || c.spec.samples_per_block != first->samples_per_block ||
                 c.spec.dtype != first->dtype) {
        return tl::make_unexpected(config::error_at(
            d.origin, fmt::format("{}: channels '{}' and '{}' differ in rate, block or dtype; one sim driver runs one "
                                  "clock: declare one driver per kind",
                                  plan.title, first->name, c.spec.name)));
      }
    }
  if (first == nullptr) return tl::make_unexpected(config::error_at(d.origin, fmt::format("{}: no channels", plan.title)));
  plan.args = {"sim", p.arena.name};
  plan.args.insert(plan.args.end(), d.channels.begin(), d.channels.end());
  plan.args.insert(plan.args.end(), {"--rate", number(first->rate_hz), "--block", fmt::format("{}", first->samples_per_block),
                                     "--dtype", core::dtype_name(first->dtype)});
  add_params(plan.args, d.params);
  return plan;
}

PartPlan shard_plan(const config::Pipeline& p, const config::ShardDecl& s) {
  PartPlan plan{PartRole::shard, s.name, fmt::format("shard \"{}\"", s.name), s.kind, {}, s.thread, s.cpu, s.max_restarts, s.essential, s.origin, {}};
  plan.args = {"shard", p.arena.name, s.kind, "--input", s.input, "--policy", s.policy, "--instance", s.name};
  if (!s.output.empty()) plan.args.insert(plan.args.end(), {"--output", s.output});
  if (s.batch_ms >= 0) plan.args.insert(plan.args.end(), {"--batch-ms", number(s.batch_ms)});
  for (const auto& [key, value] : s.params) plan.args.insert(plan.args.end(), {"--param", fmt::format("{}={}", key, value)});
  return plan;
}

PartPlan record_plan(const config::Pipeline& p, const config::RecordDecl& r) {
  PartPlan plan{PartRole::record, r.name, fmt::format("record \"{}\"", r.name), r.kind, {}, r.thread, r.cpu, r.max_restarts, r.essential, r.origin, {}};
  plan.args = {"record", p.arena.name, "--channels"};
  plan.args.insert(plan.args.end(), r.channels.begin(), r.channels.end());
  if (!r.keys.empty()) {
    plan.args.emplace_back("--keys");
    plan.args.insert(plan.args.end(), r.keys.begin(), r.keys.end());
  }
  // From the oldest block still in the ring: the drivers started first, and what they published
  // before the recorder registered is recorded too.
  plan.args.insert(plan.args.end(), {"--out", r.out, "--policy", r.policy, "--pipeline", p.file, "--from-oldest",
                                     "--wait-for-channels"});
  if (p.arena.controlled_runs) plan.args.emplace_back("--controlled");  // each run of the arena, into its own files
  if (!r.on_close.empty()) {  // its counters as keys PART.handoff_ok, ... (only then: a new key may start a file)
    plan.args.insert(plan.args.end(), {"--part", r.name});
    for (const std::string& arg : r.on_close) plan.args.push_back("--on-close=" + arg);
  }
  if (r.keep.enabled()) {  // retention; its counters as keys PART.retention_deleted_files, ...
    if (r.on_close.empty()) plan.args.insert(plan.args.end(), {"--part", r.name});
    for (const auto& [flag, value] : {std::pair{"--keep-free-gib", r.keep.free_gib}, std::pair{"--keep-max-gib", r.keep.max_gib},
                                      std::pair{"--keep-max-age-days", r.keep.max_age_days}})
      if (value > 0) plan.args.push_back(fmt::format("{}={}", flag, value));
    if (!r.keep.after.empty()) plan.args.push_back("--keep-after=" + r.keep.after);
  }
  add_params(plan.args, r.params);
  return plan;
}

}  // namespace

std::vector<std::string> PartPlan::restart_args(int last_exit_code) const {
  if (role != PartRole::record) return {};
  // Blocks of the run no file accounts for were recorded and then lost with their files (a deleted
  // or failed directory), or published while no recorder ran: never a late start's before_start.
  const bool disk = last_exit_code == tools::kExitDiskFull || last_exit_code == tools::kExitDiskFault;
  return {"--missing-before", disk ? "disk_error" : "recorder_down"};
}

namespace {

PartPlan bridge_plan(const config::Pipeline& p, const config::BridgeDecl& b) {
  PartPlan plan{PartRole::bridge, b.name, fmt::format("bridge \"{}\"", b.name), b.kind, {}, b.thread, b.cpu, b.max_restarts, b.essential, b.origin, {}};
  plan.args = {"bridge", b.kind, p.arena.name, "--pipeline", p.file, "--part", b.name};
  return plan;
}

PartPlan kafka_plan(const config::Pipeline& p, const config::KafkaDecl& k) {
  PartPlan plan{PartRole::kafka, k.name, fmt::format("kafka \"{}\"", k.name), k.kind, {}, k.thread, k.cpu, k.max_restarts, k.essential, k.origin, {}};
  plan.args = {"kafka", k.kind, p.arena.name, "--pipeline", p.file, "--part", k.name};
  return plan;
}

Result<PartPlan> epics_plan(const config::Pipeline& p, const config::EpicsDecl& e) {
  PartPlan plan{PartRole::epics, e.name, fmt::format("epics \"{}\"", e.name), e.kind, {}, false, e.cpu, e.max_restarts, e.essential, e.origin, {}};
  plan.args = {e.kind, p.arena.name, "--pipeline", p.file, "--part", e.name};
  auto program = part_program(plan, kEpicsProgram);
  if (!program) return tl::make_unexpected(program.error());
  plan.program = *program;
  return plan;
}

Result<PartPlan> tango_plan(const config::Pipeline& p, const config::TangoDecl& t) {
  PartPlan plan{PartRole::tango, t.name, fmt::format("tango \"{}\"", t.name), t.kind, {}, false, t.cpu, t.max_restarts, t.essential, t.origin, {}};
  plan.args = {t.kind, p.arena.name, "--pipeline", p.file, "--part", t.name};
  auto program = part_program(plan, kTangoProgram);
  if (!program) return tl::make_unexpected(program.error());
  plan.program = *program;
  return plan;
}

PartPlan ann_plan(const config::Pipeline& p, const config::AnnDecl& a) {
  PartPlan plan{PartRole::ann, a.name, fmt::format("ann \"{}\"", a.name), a.kind, {}, false, a.cpu, a.max_restarts, a.essential, a.origin, {}};
  plan.args = {"ann", p.arena.name, a.part};
  add_params(plan.args, a.params);
  return plan;
}

// The CPUs this process may run on, as "0-1" or "0,2,5" for messages.
std::string allowed_cpus(const cpu_set_t& set) {
  std::string out;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &set)) continue;
    int last = c;
    while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set)) ++last;
    out += (out.empty() ? "" : ",") + (last == c ? fmt::format("{}", c) : fmt::format("{}-{}", c, last));
    c = last;
  }
  return out;
}

// A part pinned to a CPU this process may not use would be refused by the kernel only once it starts.
Result<void> check_cpu(const PartPlan& plan) {
  if (plan.cpu < 0) return {};
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return {};  // cannot tell: the start will say
  if (plan.cpu < CPU_SETSIZE && CPU_ISSET(static_cast<std::size_t>(plan.cpu), &allowed)) return {};
  return tl::make_unexpected(config::error_at(
      plan.origin, fmt::format("{}: cpu = {}, but this machine lets weir run only on CPU(s) {}", plan.title, plan.cpu,
                               allowed_cpus(allowed))));
}

}  // namespace

void assign_run(std::vector<PartPlan>& parts, const config::Pipeline& p, std::uint64_t run) {
  if (p.arena.controlled_runs) return;  // the arena's run control numbers the runs
  for (PartPlan& plan : parts) {
    if (plan.role != PartRole::record) continue;
    const auto it = std::find_if(p.records.begin(), p.records.end(), [&](const auto& r) { return r.name == plan.name; });
    if (it == p.records.end() || it->params.count("run") != 0) continue;
    plan.args.insert(plan.args.end(), {"--run", fmt::format("{}", run)});
  }
}

Result<std::vector<PartPlan>> plan_parts(const config::Pipeline& p, const config::Resolved& /*resolved*/) {
  if (p.arena.name.rfind("memfd:", 0) == 0)
    return tl::make_unexpected(config::error_at(
        p.arena.origin, fmt::format("arena '{}': a memfd arena has no name other processes can open; use an shm name "
                                    "or a file path for `weir run`",
                                    p.arena.name)));
  std::vector<PartPlan> out;
  for (const auto& d : p.drivers) {
    auto plan = driver_plan(p, d);
    if (!plan) return tl::make_unexpected(plan.error());
    out.push_back(std::move(*plan));
  }
  for (const auto& s : p.shards) out.push_back(shard_plan(p, s));
  for (const auto& r : p.records) out.push_back(record_plan(p, r));
  for (const auto& b : p.bridges) out.push_back(bridge_plan(p, b));
  for (const auto& k : p.kafkas) out.push_back(kafka_plan(p, k));
  for (const auto& a : p.anns) out.push_back(ann_plan(p, a));
  for (const auto& e : p.epics) {
    auto plan = epics_plan(p, e);
    if (!plan) return tl::make_unexpected(plan.error());
    out.push_back(std::move(*plan));
  }
  for (const auto& t : p.tangos) {
    auto plan = tango_plan(p, t);
    if (!plan) return tl::make_unexpected(plan.error());
    out.push_back(std::move(*plan));
  }
  for (const PartPlan& plan : out)
    if (auto ok = check_cpu(plan); !ok) return tl::make_unexpected(ok.error());
  return out;
}

}  // namespace weir::supervisor
