#pragma once
// Which weir executable the benchmark starts pipeline parts with (the pipeline suite), and whose
// directory it also searches for shard plugins. Private to bench/.
#include <string>
#include <string_view>

namespace weir::bench {

struct WeirExe {
  std::string path;        // absolute; empty when none was found
  std::string looked_for;  // where it looked, in order, for a message: "--weir /x, $WEIR_CLI, /b/weir, /t/weir"
};

/// The weir executable: `given` (--weir PATH) when not empty, else $WEIR_CLI when set, else `weir`
/// beside this program, else `../tools/weir` from this program's directory (the build tree:
/// build/bench/weir_bench and build/tools/weir). A given or $WEIR_CLI path that is not an executable
/// file is not passed over for the others. Thread: any.
[[nodiscard]] WeirExe find_weir_exe(std::string_view given);

/// Appends `weir`'s directory to $WEIR_SHARD_PATH, so shard plugins built beside weir (the embed
/// shard) load here as they do in weir. Thread: main, before any other thread starts (setenv).
void add_plugin_dir_of(const WeirExe& weir);

}  // namespace weir::bench
