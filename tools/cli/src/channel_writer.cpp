#include "channel_writer.hpp"

#include <fmt/format.h>

namespace weir::tools {

void add_channel_writer_options(CLI::App& sub, ChannelWriterArgs& args, std::string_view creator) {
  sub.add_option("--ring", args.ring, fmt::format("block slots of a channel this {} creates (a power of two)", creator))
      ->capture_default_str();
  sub.add_option("--on-full", args.on_full, "a created channel's lossless readers full: wait (up to --wait-ms) or drop")
      ->capture_default_str()
      ->check(CLI::IsMember({"wait", "drop"}));
  sub.add_option("--wait-ms", args.wait_ms, "how long a created channel's writer waits for a lossless reader")
      ->capture_default_str()
      ->check(CLI::Range(0.0, kMaxWaitMs));
}

}  // namespace weir::tools
