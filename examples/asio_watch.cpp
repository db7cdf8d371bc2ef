// weir_asio_watch: print keys of a weir arena as they change, from a Boost.Asio event loop.
//
//   weir_asio_watch NAME KEY... [--count N] [--seconds S]
//
// A weir Watcher sleeps on a futex, which an event loop cannot wait on. core::EventBridge runs one
// helper thread that waits on the Watcher and makes an eventfd readable after each pulse. The loop
// waits on that descriptor as on a socket, then drains the Watcher to learn which keys changed.
// Exit: 0 after N changes (or after S seconds without --count), 1 when S seconds (default 10) pass
// first or set-up fails, 2 on a bad command line.
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include "weir/core/arena.hpp"
#include "weir/core/event_bridge.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/signals.hpp"

namespace {

using weir::core::ValueType;

struct Options {
  std::string arena;
  std::vector<std::string> keys;
  std::uint64_t count = 0;  // 0: run until the timer
  std::uint64_t seconds = 10;
};

bool parse_options(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view word = argv[i];
    if (word == "--count" || word == "--seconds") {
      if (++i == argc) return false;
      const std::string_view text = argv[i];
      std::uint64_t& out = word == "--count" ? o.count : o.seconds;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
      if (ec != std::errc{} || end != text.data() + text.size()) return false;
    } else if (o.arena.empty()) {
      o.arena = word;
    } else {
      o.keys.emplace_back(word);
    }
  }
  return !o.arena.empty() && !o.keys.empty();
}

// Prints one value without allocating: it runs inside Watcher::drain, which is noexcept.
void print_value(ValueType type, const std::byte* data, std::uint32_t length) {
  std::uint64_t word = 0;  // i64, u64 and f64 values are 8 bytes
  if (length == sizeof(word)) std::memcpy(&word, data, sizeof(word));
  switch (type) {
    case ValueType::text: std::printf("%.*s", static_cast<int>(length), reinterpret_cast<const char*>(data)); break;
    case ValueType::i64: std::printf("%lld", static_cast<long long>(static_cast<std::int64_t>(word))); break;
    case ValueType::u64: std::printf("%llu", static_cast<unsigned long long>(word)); break;
    case ValueType::f64: { double f = 0; std::memcpy(&f, &word, sizeof(f)); std::printf("%g", f); break; }
    case ValueType::none:
    case ValueType::bytes:
    case ValueType::vector:
    case ValueType::array: std::printf("<%u bytes>", length); break;
  }
}

int fail(const std::string& what, const weir::core::Error& error) {
  std::fprintf(stderr, "weir_asio_watch: %s: %s\n", what.c_str(), error.what.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!parse_options(argc, argv, options)) {
    std::fprintf(stderr, "usage: weir_asio_watch NAME KEY... [--count N] [--seconds S]\n");
    return 2;
  }
  // The loop and its signal handling come first: a Ctrl-C or SIGTERM even during set-up then ends
  // the loop, and the destructors below release the watcher row and its subscriptions.
  boost::asio::io_context io;
  boost::asio::signal_set stop_signals(io, SIGINT, SIGTERM);
  stop_signals.async_wait([&io](const boost::system::error_code&, int) { io.stop(); });

  // 1. Attach to the arena and subscribe. Each key gets its own signal group, so the group a
  //    change arrives on names its key (even after the key was deleted).
  auto arena = weir::core::Arena::open(options.arena);
  if (!arena) return fail("cannot open '" + options.arena + "'", arena.error());
  auto watcher = weir::core::Watcher::create(*arena);  // one watcher row: a doorbell futex of our own
  if (!watcher) return fail("cannot watch '" + options.arena + "'", watcher.error());
  std::map<std::uint32_t, std::string> key_of_group;
  for (const std::string& key : options.keys) {
    auto group = watcher->subscribe_key(key);
    if (!group) return fail("cannot watch key '" + key + "'", group.error());
    key_of_group[*group] = key;
  }

  // 2. Subscriptions are complete: start the bridge. Declared after the watcher, it is destroyed
  //    (its thread joined) before the watcher goes away.
  auto started = weir::core::EventBridge::start(*watcher);
  if (!started) return fail("cannot start the event bridge", started.error());
  const std::unique_ptr<weir::core::EventBridge> bridge = std::move(*started);
  // Asio closes the descriptor it holds and the bridge closes its own, so Asio gets a duplicate.
  boost::asio::posix::stream_descriptor pulses(io, ::dup(bridge->fd()));

  // 3. On each change, print the key's value now, read through the slot and generation that changed.
  const weir::core::KvStore kv(*arena);
  std::vector<std::byte> value(kv.value_bytes());
  std::uint64_t seen = 0;
  auto print_change = [&](const weir::core::Change& change) {
    weir::core::ValueInfo info;
    const auto status = kv.get(weir::core::KeyHandle{change.slot, change.generation}, value, info);
    const auto key = key_of_group.find(change.group);  // find, not []: nothing here may allocate
    std::printf("%s = ", key != key_of_group.end() ? key->second.c_str() : "?");
    if (status == weir::core::KvStatus::ok) {
      print_value(info.type, value.data(), info.length);
    } else {
      std::printf("(%s)", weir::core::kv_status_name(status));  // not_found or stale_handle: deleted
    }
    std::printf("\n");
    ++seen;
  };

  // 4. Wait for the eventfd to become readable; the handler re-arms the wait after every event.
  std::function<void()> wait_for_pulses = [&] {
    pulses.async_wait(boost::asio::posix::stream_descriptor::wait_read, [&](const boost::system::error_code& ec) {
      if (ec) return;      // cancelled: the loop is stopping
      bridge->consume();   // reset the eventfd first, so a pulse arriving during the drain re-arms it
      if (const std::uint64_t lost = watcher->drain(print_change); lost != 0)
        std::printf("(%llu changes lost: the change log wrapped)\n", static_cast<unsigned long long>(lost));
      std::fflush(stdout);
      if (options.count != 0 && seen >= options.count) return io.stop();
      wait_for_pulses();
    });
  };
  wait_for_pulses();

  int exit_code = 0;
  boost::asio::steady_timer timer(io, std::chrono::seconds(options.seconds));
  timer.async_wait([&](const boost::system::error_code& ec) {
    if (ec) return;
    if (options.count != 0) {
      std::fprintf(stderr, "timed out after %llu s with %llu of %llu changes\n",
                   static_cast<unsigned long long>(options.seconds), static_cast<unsigned long long>(seen),
                   static_cast<unsigned long long>(options.count));
      exit_code = 1;
    }
    io.stop();
  });

  io.run();
  return exit_code;  // the timer, descriptor, bridge, watcher and arena close in reverse order
}
