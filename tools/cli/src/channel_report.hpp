#pragma once
// `weir ls NAME`: an arena's channels with their writers, consumers, rates, lag and losses.
#include <string>

namespace weir::tools {

struct ChannelLsArgs {
  std::string where;
  bool json = false;
  bool watch = false;       // refresh until interrupted (or --count refreshes)
  double interval_s = 1.0;  // between refreshes (rates come from the blocks' own stamps at each look)
  int count = 0;            // refreshes before exiting with --watch; 0 = until interrupted
};

/// Prints the channels of one arena. Returns the exit code. Thread: main only.
int run_channel_ls(const ChannelLsArgs& args);

}  // namespace weir::tools
