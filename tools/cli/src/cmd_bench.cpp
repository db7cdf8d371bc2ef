#include "cmd_bench.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "command.hpp"
#include "weir/tools/output.hpp"

namespace weir::tools {

namespace {

namespace fs = std::filesystem;

constexpr const char* kBuildCommand = "cmake --build build --target weir_bench";

bool executable_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

// This weir's own path, from /proc/self/exe; empty when it cannot be read.
fs::path this_weir() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path{} : self;
}

}  // namespace

core::Result<std::string> find_weir_bench() {
  if (const char* env = std::getenv("WEIR_BENCH"); env != nullptr && *env != '\0') {
    if (executable_file(env)) return std::string(env);
    return core::fail(core::Errc::not_found,
                      fmt::format("WEIR_BENCH={} is not an executable file (unset it to use the weir_bench of this build, "
                                  "built by `{}`)",
                                  env, kBuildCommand));
  }
  const fs::path self = this_weir();
  if (self.empty()) return core::fail(core::Errc::not_found, "cannot read /proc/self/exe to find weir_bench beside weir");
  const fs::path beside = self.parent_path() / "weir_bench";
  const fs::path in_build = (self.parent_path() / ".." / "bench" / "weir_bench").lexically_normal();
  for (const fs::path& candidate : {beside, in_build})
    if (executable_file(candidate)) return candidate.string();
  return core::fail(core::Errc::not_found,
                    fmt::format("weir_bench is not built (the benchmark suites live there; looked for {} and {}): build it "
                                "with `{}`",
                                beside.string(), in_build.string(), kBuildCommand));
}

int exec_weir_bench(const std::vector<std::string>& args) {
  const auto bench = find_weir_bench();
  if (!bench) {
    print_error("bench: " + bench.error().what);
    return kExitError;
  }
  std::vector<std::string> all = args;
  const bool named = std::any_of(args.begin(), args.end(),
                                 [](const std::string& a) { return a == "--weir" || a.starts_with("--weir="); });
  if (const fs::path self = this_weir(); !self.empty() && !named) {  // a --weir given is the one to use
    all.emplace_back("--weir");
    all.push_back(self.string());
  }
  std::vector<char*> argv;
  std::string program = "weir_bench";
  argv.push_back(program.data());
  for (std::string& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  ::execv(bench->c_str(), argv.data());
  print_error(fmt::format("bench: cannot run {}: {}", *bench, std::strerror(errno)));
  return kExitError;
}

void add_bench_command(CLI::App& app, Action& action) {
  CLI::App* sub = app.add_subcommand("bench", "Run a benchmark suite against a private arena (runs weir_bench)");
  sub->footer(
      "weir bench SUITE [options]\n"
      "Suites: kv, signals, vectors, channels, shards, recorder, kernels, udp, pipeline.\n"
      "The suite and its options go to weir_bench (bench/), which holds every suite; build it with\n"
      "`cmake --build build --target weir_bench`. `weir bench SUITE --help`: what the suite measures and its\n"
      "options (every suite: --json, --reps N, --quick).");
  // Everything after `bench` is weir_bench's, in order: the first word that is not an option of
  // this subcommand (only --help is) ends the parsing here.
  sub->prefix_command();
  sub->callback([&action, sub] {
    action = [args = sub->remaining()] {
      if (args.empty()) {
        print_error("bench: which suite? (kv, signals, vectors, channels, shards, recorder, kernels, udp, pipeline; "
                    "weir bench --help)");
        return kExitUsage;
      }
      return exec_weir_bench(args);
    };
  });
}

}  // namespace weir::tools
