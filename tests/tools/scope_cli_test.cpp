// Runs `weir scope` as a user would: in a real terminal (a detached tmux pane of fixed size) fed
// by `weir sim`, through a pipe, and against missing arenas and channels.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "spawn.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/channel.hpp"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

using weir::test::contains;
using weir::test::kExitError;
using weir::test::kExitOk;

constexpr auto kStepTimeout = 5s;    // bound on each wait for the scope or the simulator
constexpr auto kPollInterval = 50ms;
constexpr std::string_view kChannel = "adc0";

// Whether text holds a braille character with at least one dot (U+2801..U+28FF in UTF-8).
bool has_braille(std::string_view text) {
  for (std::size_t i = 0; i + 2 < text.size(); ++i) {
    const auto b1 = static_cast<unsigned char>(text[i + 1]);
    const auto b2 = static_cast<unsigned char>(text[i + 2]);
    if (static_cast<unsigned char>(text[i]) == 0xE2 && b1 >= 0xA0 && b1 <= 0xA3 && !(b1 == 0xA0 && b2 == 0x80))
      return true;
  }
  return false;
}

struct ShellResult {
  int exit_code = -1;
  std::string out;
};

// Runs a shell command line and captures its stdout.
ShellResult shell(const std::string& command) {
  ShellResult result;
  std::FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char chunk[4096];
  std::size_t n = 0;
  while ((n = std::fread(chunk, 1, sizeof chunk, pipe)) > 0) result.out.append(chunk, n);
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

bool wait_for(const std::function<bool()>& done, Clock::duration timeout = kStepTimeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    if (done()) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(kPollInterval);
  }
}

std::string unique(std::string_view what) {
  static std::atomic<int> counter{0};
  return "t.scope-" + std::string(what) + "." + std::to_string(getpid()) + "." + std::to_string(counter++);
}

// An arena fed by `weir sim` (square wave, 20 kHz, blocks of 200) until the destructor stops it.
class SimulatedArena {
 public:
  SimulatedArena() : where_(unique("sim")) {
    weir::core::ArenaOptions o;
    o.slot_count = 64;
    o.vector_dim = 0;
    o.channel_capacity = 2;
    o.channel_data_bytes = 4ULL << 20;
    arena_ = std::make_unique<weir::core::Arena>(std::move(weir::core::Arena::create(where_, o).value()));
    // The simulator's stdout goes to /dev/null; its stderr stays the test's.
    const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    REQUIRE(null >= 0);
    weir::test::SpawnOptions options;
    options.out = null;
    sim_ = weir::test::ChildProcess({WEIR_CLI_PATH, "sim", where_, std::string(kChannel), "--rate", "20000", "--block",
                                     "200", "--signal", "square", "--duration", "10"},
                                    options);
    ::close(null);
    REQUIRE(sim_.valid());
    REQUIRE(wait_for([this] {
      const auto index = weir::core::find_channel(*arena_, kChannel);
      return index && weir::core::list_channels(*arena_).at(0).blocks_written > 4;
    }));
  }
  SimulatedArena(const SimulatedArena&) = delete;
  SimulatedArena& operator=(const SimulatedArena&) = delete;
  ~SimulatedArena() {
    (void)sim_.kill_and_reap();
    arena_.reset();
    (void)weir::core::Arena::remove(where_);
  }
  [[nodiscard]] const std::string& where() const { return where_; }

 private:
  std::string where_;
  std::unique_ptr<weir::core::Arena> arena_;
  weir::test::ChildProcess sim_;
};

// A private tmux server (its own socket, no user config), killed with everything in it at the end.
class Tmux {
 public:
  Tmux() : socket_(unique("tmux")) {}
  Tmux(const Tmux&) = delete;
  Tmux& operator=(const Tmux&) = delete;
  ~Tmux() {
    (void)shell(prefix() + "kill-server 2>/dev/null");
    const char* dir = std::getenv("TMUX_TMPDIR");  // where tmux puts the socket, which outlives the server
    std::error_code ignored;
    std::filesystem::remove(std::filesystem::path(dir != nullptr && *dir != '\0' ? dir : "/tmp") /
                                ("tmux-" + std::to_string(getuid())) / socket_,
                            ignored);
  }
  [[nodiscard]] std::string prefix() const { return "tmux -L '" + socket_ + "' -f /dev/null "; }
  ShellResult run(const std::string& args) const { return shell(prefix() + args + " 2>&1"); }
  [[nodiscard]] std::string screen(const std::string& target) const {
    return run("capture-pane -p -t " + target).out;
  }

 private:
  std::string socket_;
};

// The span shown in the header: "span 40 ms (800 samples)" -> "40 ms (800 samples".
std::string header_span(std::string_view screen) {
  constexpr std::string_view kLabel = "| span ";
  const auto at = screen.find(kLabel);
  if (at == std::string_view::npos) return {};
  const auto from = at + kLabel.size();
  const auto end = screen.find(')', from);
  return std::string(screen.substr(from, end == std::string_view::npos ? 0 : end - from));
}

}  // namespace

TEST_SUITE("tools.scope") {

TEST_CASE("the scope draws in a real terminal, zooms, pauses, shows as a latest consumer and quits on q") {
  if (shell("command -v tmux >/dev/null 2>&1").exit_code != 0) {
    MESSAGE("tmux not found: skipping the terminal test");
    return;
  }
  const SimulatedArena sim;
  const Tmux tmux;
  const std::filesystem::path rc_file =
      std::filesystem::temp_directory_path() / (unique("rc") + ".txt");
  struct RemoveFile {
    std::filesystem::path path;
    ~RemoveFile() { std::filesystem::remove(path); }
  } const remove_rc{rc_file};
  const std::string pane = "scope";
  const std::string command = std::string(WEIR_CLI_PATH) + " scope " + sim.where() + " " + std::string(kChannel) +
                              "; echo $? > " + rc_file.string();
  REQUIRE(tmux.run("new-session -d -s " + pane + " -x 100 -y 30 '" + command + "'").exit_code == kExitOk);

  std::string screen;
  const bool drawn = wait_for([&] {
    screen = tmux.screen(pane);
    return contains(screen, "adc0 20 kHz") && has_braille(screen);
  });
  INFO("screen:\n" << screen);
  REQUIRE(drawn);
  CHECK(contains(screen, "blocks "));
  CHECK(contains(screen, " V┤"));  // the y-axis scale, with units
  const std::string span = header_span(screen);
  CHECK(span == "40 ms (800 samples");

  const ShellResult ls = shell(std::string(WEIR_CLI_PATH) + " ls " + sim.where());
  CHECK(ls.exit_code == kExitOk);
  CHECK(contains(ls.out, "consumer scope"));
  CHECK(contains(ls.out, "latest"));

  REQUIRE(tmux.run("send-keys -t " + pane + " +").exit_code == kExitOk);
  CHECK(wait_for([&] {
    screen = tmux.screen(pane);
    return header_span(screen) == "20 ms (400 samples";
  }));
  REQUIRE(tmux.run("send-keys -t " + pane + " Space").exit_code == kExitOk);
  CHECK(wait_for([&] {
    screen = tmux.screen(pane);
    return contains(screen, "PAUSED");
  }));
  REQUIRE(tmux.run("send-keys -t " + pane + " q").exit_code == kExitOk);
  CHECK(wait_for([&] { return tmux.run("has-session -t " + pane).exit_code != kExitOk; }));
  std::ifstream rc(rc_file);
  std::string code;
  rc >> code;
  CHECK(code == "0");
}

TEST_CASE("with stdout on a pipe the scope prints --frames plain frames and exits") {
  const SimulatedArena sim;
  const ShellResult run =
      shell("COLUMNS=60 LINES=12 " + std::string(WEIR_CLI_PATH) + " scope " + sim.where() + " adc0 --frames 3 --trigger 0");
  CHECK(run.exit_code == kExitOk);
  INFO("output:\n" << run.out);
  CHECK(!contains(run.out, "\x1b"));
  std::size_t headers = 0;
  for (auto at = run.out.find("adc0 20 kHz"); at != std::string::npos; at = run.out.find("adc0 20 kHz", at + 1))
    ++headers;
  CHECK(headers == 3);
  CHECK(has_braille(run.out));
  CHECK(contains(run.out, "trig 0 V trig'd"));  // the terse header of a narrow terminal
}

TEST_CASE("a missing arena or channel is named on stderr with exit code 1") {
  const std::string weir = WEIR_CLI_PATH;
  const ShellResult no_arena = shell(weir + " scope t.scope-none." + std::to_string(getpid()) + " adc0 2>&1 >/dev/null");
  CHECK(no_arena.exit_code == kExitError);
  CHECK(contains(no_arena.out, "t.scope-none."));
  const SimulatedArena sim;
  const ShellResult no_channel = shell(weir + " scope " + sim.where() + " nosuchchannel 2>&1 >/dev/null");
  CHECK(no_channel.exit_code == kExitError);
  CHECK(contains(no_channel.out, "nosuchchannel"));
}

}  // TEST_SUITE
